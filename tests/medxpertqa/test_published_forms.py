"""MedXpertQA in the GitHub repository's own input format, and malformed local files:
each refused with file, row and field, never a traceback or a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write_jsonl, write_png

from inspect_medreason.core.loaders import SHOWN_PROBLEMS, DatasetError
from inspect_medreason.core.user_files import MAX_JSON_DEPTH
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm

GITHUB_ROW: dict[str, Any] = {
    # The repository's eval input (medxpertqa_mm_input.jsonl): options as a list of
    # {letter, content}, the label as a list of one letter.
    "id": "MM-7",
    "question": "Which diagnosis? Answer Choices: (A) Gout (B) Pseudogout (C) Sepsis",
    "options": [
        {"letter": "A", "content": "Gout"},
        {"letter": "B", "content": "Pseudogout"},
        {"letter": "C", "content": "Sepsis"},
    ],
    "label": ["B"],
    "images": ["MM-7-a.jpeg"],
    "medical_task": "Diagnosis",
    "body_system": "Skeletal",
    "question_type": "Reasoning",
}


def github_file(folder: Path, rows: list[dict[str, Any]]) -> Path:
    write_png(folder / "images" / "MM-7-a.jpeg")
    write_jsonl(folder / "test.jsonl", rows)
    return folder / "test.jsonl"


def test_the_github_input_format_is_read(tmp_path: Path) -> None:
    task = medxpertqa_mm(data=str(github_file(tmp_path, [GITHUB_ROW])))
    [sample] = list(task.dataset)
    assert sample.target == "B"
    assert sample.choices == ["Gout", "Pseudogout", "Sepsis"]
    assert [o["label"] for o in (sample.metadata or {})["options"]] == ["A", "B", "C"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("options", "A) Gout B) Pseudogout", "expected an object"),
        ("question", {"text": "Q"}, "expected text, got an object"),
        ("label", 3, "expected a letter"),
        ("images", "MM-7-a.jpeg", "expected a list of image file names"),
        ("label", ["A", "B"], "expected one letter"),
        ("options", [{"letter": "A"}, "B"], "the GitHub input format lists options as"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_with_file_and_row(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    data = github_file(tmp_path, [{**GITHUB_ROW, field: value}])
    with pytest.raises(DatasetError) as error:
        medxpertqa_mm(data=str(data))
    [problem] = error.value.problems
    assert problem.file == str(data) and problem.case_id == "row 0 (MM-7)"
    assert problem.field == field and message in problem.message


def test_deep_nesting_is_refused_before_parsing(tmp_path: Path) -> None:
    depth = 100_000  # deep enough to exhaust a C parser's stack
    data = tmp_path / "test.jsonl"
    data.write_text(json.dumps(GITHUB_ROW)[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}\n")
    with pytest.raises(DatasetError) as error:
        medxpertqa_mm(data=str(data))
    [problem] = error.value.problems
    assert problem.file == str(data)
    assert f"nested {depth + 1:,} levels deep, more than the {MAX_JSON_DEPTH}" in problem.message


def test_a_long_problem_list_shows_twenty_then_a_count(tmp_path: Path) -> None:
    rows = [{**GITHUB_ROW, "id": f"MM-{i}", "images": [f"absent-{i}.png"]} for i in range(60)]
    with pytest.raises(DatasetError) as error:
        medxpertqa_mm(data=str(github_file(tmp_path, rows)))
    assert len(error.value.problems) == 60
    message = str(error.value)
    assert message.count("absent-") == SHOWN_PROBLEMS
    assert "... and 40 more problem(s) (image: 40)" in message
