from __future__ import annotations

import io
import json
import math
import shutil
from pathlib import Path

import pytest
from conftest import write_json, write_png

from inspect_medreason.analysis.data_audit import audit_data, leaks_answer
from inspect_medreason.cli import main
from inspect_medreason.cli.check_data import render
from inspect_medreason.core.schema import Case


def case(answer: str, reasoning: str, task_type: str = "open", **extra: object) -> Case:
    return Case.model_validate(
        {
            "case_id": "c",
            "task_type": task_type,
            "question": "Q?",
            "answer": answer,
            "reference_reasoning": reasoning,
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("answer", "reasoning", "leaks"),
    [
        ("Left pneumothorax", "There is a LEFT pneumothorax, large.", True),  # case, punctuation
        ("pneumothorax", "No pneumothoraces are seen.", False),  # whole words only
        ("no", "No acute findings; normal study.", None),  # a bare yes/no cannot be checked
        ("Right upper lobe", "Mass in the right-upper lobe.", True),  # hyphen normalised
        ("fracture", "", None),  # nothing to check against
    ],
)
def test_leakage_rule(answer: str, reasoning: str, leaks: bool | None) -> None:
    assert leaks_answer(case(answer, reasoning)) is leaks


def test_mcq_leakage_is_the_correct_options_text() -> None:
    options = [{"label": "A", "text": "Meningioma"}, {"label": "B", "text": "Glioma"}]
    assert leaks_answer(case("A", "Dural-based meningioma.", "mcq", options=options)) is True
    assert leaks_answer(case("B", "Dural-based meningioma.", "mcq", options=options)) is False


def audit_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    write_png(folder / "a.png", size=(64, 64), colour=10)
    shutil.copy(folder / "a.png", folder / "a_again.png")  # same content, another name
    write_png(folder / "b.png", size=(64, 64), colour=200)
    write_png(folder / "tiny.png", size=(8, 8))
    (folder / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not an image")
    mcq = [
        {"label": label, "text": text}
        for label, text in zip("ABCD", ["w", "x", "y", "z"], strict=True)
    ]
    cases = [
        {
            "case_id": "m1",
            "task_type": "mcq",
            "question": "Which?",
            "image_path": "a.png",
            "options": mcq,
            "answer": "A",
            "visual_description": "Clearly w.",
        },  # leaks "w"
        {
            "case_id": "m2",
            "task_type": "mcq",
            "question": "Which?",
            "image_path": "a_again.png",
            "options": mcq,
            "answer": "B",
        },  # same image content and question, another answer
        {
            "case_id": "m3",
            "task_type": "mcq",
            "question": "Other?",
            "image_path": "b.png",
            "options": mcq,
            "answer": "A",
        },
        {
            "case_id": "m4",
            "task_type": "mcq",
            "question": "Third?",
            "image_path": "b.png",
            "options": mcq,
            "answer": "A",
        },
        {
            "case_id": "o1",
            "task_type": "open",
            "question": "What?",
            "image_path": "b.png",
            "answer": "a cyst",
            "metadata": {"modality": "MR"},
        },
        {
            "case_id": "o2",
            "task_type": "open",
            "question": "  what? ",
            "image_path": "b.png",
            "answer": "A cyst.",
        },  # a duplicate of o1 once normalised
        {
            "case_id": "o3",
            "task_type": "open",
            "question": "Tiny?",
            "image_path": "tiny.png",
            "answer": "x",
        },
        {
            "case_id": "o4",
            "task_type": "open",
            "question": "Broken?",
            "image_path": "broken.png",
            "answer": "x",
        },
        {
            "case_id": "o5",
            "task_type": "open",
            "question": "Gone?",
            "image_path": "missing.png",
            "answer": "x",
        },
        {
            "case_id": "o6",
            "task_type": "open",
            "question": "Out?",
            "image_path": "../a.png",
            "answer": "x",
        },
    ]
    write_json(folder / "cases.json", {"cases": cases})
    return folder


def test_audit_findings(tmp_path: Path) -> None:
    report = audit_data(audit_folder(tmp_path))
    assert [row["case_id"] for row in report.leakage] == ["m1"]
    assert report.leakage_checked == 1
    assert [c["cases"] for c in report.conflicts] == [["m1", "m2"]]
    assert [d["cases"] for d in report.duplicates] == [["o1", "o2"]]
    problems = {finding.path: finding.problem for finding in report.images}
    assert set(problems) == {"tiny.png", "broken.png", "missing.png", "../a.png"}
    assert "8x8" in problems["tiny.png"] and "does not exist" in problems["missing.png"]
    assert "outside the data folder" in problems["../a.png"]
    balance = report.label_balance
    # A 3, B 1, C 0, D 0 against 1 each: (2^2 + 0 + 1 + 1) / 1 = 6 on 3 degrees of freedom
    assert balance["labels"]["A"]["answers"] == 3 and balance["chi_square"] == 6.0
    # chi-square survival on 3 degrees of freedom in closed form: erfc(sqrt(x/2)) +
    # sqrt(2x/pi) e^(-x/2)
    expected_p = math.erfc(math.sqrt(3)) + math.sqrt(12 / math.pi) * math.exp(-3)
    assert balance["p_value"] == pytest.approx(expected_p, rel=1e-9)
    assert report.by_track == {"mcq": 4, "open": 6} and report.by_modality["MR"] == 1
    assert report.distinct_images == 3  # a.png and a_again.png are one image
    text = render(report, "md")
    assert "Answer leakage: 1 of 1" in text and "m1, m2" in text and "| A | 3 | 1.0 |" in text


def test_the_audit_as_a_table_lists_every_finding_once(tmp_path: Path) -> None:
    report = audit_data(audit_folder(tmp_path))
    table = report.to_pandas()
    assert list(table.columns) == ["finding", "cases", "detail"]
    assert table["finding"].value_counts().to_dict() == {
        "image": 4,
        "leakage": 1,
        "conflict": 1,
        "duplicate": 1,
    }
    conflict = table[table["finding"] == "conflict"].iloc[0]
    assert conflict["cases"] == ["m1", "m2"] and "Which?" in conflict["detail"]


def test_the_library_and_the_command_give_the_same_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a notebook gets from ``audit_data`` is what ``check-data --format json`` writes."""
    folder = audit_folder(tmp_path)
    assert main(["check-data", str(folder), "--format", "json"]) == 0
    printed = json.load(io.StringIO(capsys.readouterr().out))
    assert printed == json.loads(json.dumps(audit_data(folder).as_dict()))
