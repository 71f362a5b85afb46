"""Every field the challenge-layout loader reads (cases.json, its raw released layout as
Med-CMR ships it, ground_truth.json) given a value of the wrong type, and JSON nested
100,000 deep given to every loader: each is refused with its file, case and field, all
problems at once and the message capped, never a traceback or a crashed process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json, write_png

from inspect_medreason.core.loaders import SHOWN_PROBLEMS, DatasetError, Problem, load_cases
from inspect_medreason.core.user_files import MAX_JSON_DEPTH
from inspect_medreason.med_cmr.med_cmr import med_cmr

# One of each JSON type a field can wrongly hold.
WRONG: dict[str, Any] = {
    "int": 7,
    "list": ["x"],
    "dict": {"a": 1},
    "null": None,
    "bool": True,
    "nested": [[["x"]]],
}
REQUIRED = {"case_id", "task_type", "question"}

OFFICIAL_CASE: dict[str, Any] = {
    "case_id": "c",
    "task_type": "mcq",
    "question": "Which finding?",
    "image_path": "ok.png",
    "options": [{"label": "A", "text": "Nodule"}, {"label": "B", "text": "Effusion"}],
    "answer": "A",
    "context": "A smoker of 60.",
    "reference_reasoning": "The round opacity.",
    "visual_description": "A round opacity.",
    "frame": 0,
    "metadata": {"modality": "CT"},
    "modality": "CT",
    "organ_system": "Chest",
    "task": "diagnosis",
    "subtype": "nodule",
    "category": "lung",
    "language": "en",
    "source": "demo",
    "primary_modality": "CT",
    "organ system": "Chest",
    "organ": "Chest",
    "body_system": "Chest",
    "lang": "en",
}
# The released layout (Med-CMR's dataset.zip records): index, "question type", A-E.
RAW_CASE: dict[str, Any] = {
    "index": 1,
    "question type": "mcq",
    "question": "Which finding?",
    "image_path": "ok.png",
    "A": "Nodule",
    "B": "Effusion",
    "C": "Mass",
    "D": "Cyst",
    "E": "Normal",
    "answer": "A",
    "visual_description": "A round opacity.",
    "task": "diagnosis",
    "subtype": "nodule",
    "modality": "CT",
    "organ system": "Chest",
}


def wrong_values(field: str, template: dict[str, Any]) -> dict[str, Any]:
    """The wrong values for ``field``: every type but its own (null only where the field is
    required: an optional field given null is absent). A list of strings is a valid
    ``image_paths``; a list of one option is a valid ``options`` type (refused, but as too
    few options), so those two are given a list of the wrong items instead."""
    values = {kind: value for kind, value in WRONG.items() if kind != "null" or field in REQUIRED}
    if field in {"image_paths", "options"}:
        values["list"] = [1, 2]
    if field in {"case_id", "index"}:
        # A number or a text is an id (the released index is a number); null is no id.
        values.pop("int")
        values["null"] = None
    if field == "frame":
        values.pop("int")
    if field == "metadata":
        values.pop("dict")
    return values


def cases_with_wrong_types(template: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """One case per (field, wrong value), its id naming both; and the fields in order."""
    cases, fields = [], [*template, "image_paths"]
    id_key = "case_id" if "case_id" in template else "index"
    for field in fields:
        for kind, value in wrong_values(field, template).items():
            case = {**template, id_key: f"{field}/{kind}", field: value}
            cases.append(case)
    return cases, fields


def expected_field(field: str) -> str:
    # image_path and image_paths are merged into one list: a wrong one names image_paths
    return "image_paths" if field == "image_path" else field


def assert_every_wrong_field_named(
    problems: list[Problem],
    cases: list[dict[str, Any]],
    fields: list[str],
    template: dict[str, Any],
) -> None:
    found = {(p.case_id, p.field) for p in problems}
    for field in fields:
        for kind in wrong_values(field, template):
            case_id = f"{field}/{kind}"
            if field in {"case_id", "index"}:
                # a value that is no id: the case is named by its position
                position = next(i for i, c in enumerate(cases) if c[field] is WRONG[kind])
                case_id = f"#{position}"
            name = expected_field(field)
            # a list of the wrong items names the item (options.0)
            named = {f for c, f in found if c == case_id and f.split(".")[0] == name}
            assert named, (field, kind, sorted(found)[:5])


@pytest.mark.parametrize("layout", ["official", "raw"])
def test_every_field_given_every_wrong_type_is_named_all_at_once(
    tmp_path: Path, layout: str
) -> None:
    template = OFFICIAL_CASE if layout == "official" else RAW_CASE
    write_png(tmp_path / "ok.png")
    cases, fields = cases_with_wrong_types(template)
    good = {**template, "case_id" if layout == "official" else "index": "good"}
    write_json(tmp_path / "cases.json", {"cases": [*cases, good]})
    with pytest.raises(DatasetError) as raised:
        load_cases(tmp_path)
    problems = raised.value.problems
    assert_every_wrong_field_named(problems, cases, fields, template)
    assert all(p.file == str(tmp_path / "cases.json") for p in problems)
    assert not any(p.case_id == "good" for p in problems)
    message = str(raised.value)
    assert f"{len(problems)} problem(s) in the input data" in message
    assert message.count("\n  - ") == SHOWN_PROBLEMS
    assert f"... and {len(problems) - SHOWN_PROBLEMS:,} more problem(s)" in message


def test_a_wrong_type_says_what_it_was_and_names_the_field_as_the_file_spells_it(
    tmp_path: Path,
) -> None:
    write_png(tmp_path / "ok.png")
    write_json(
        tmp_path / "cases.json",
        [
            {**RAW_CASE, "index": "r1", "organ system": 3, "D": ["x"], "question type": 5},
            {**OFFICIAL_CASE, "case_id": "o1", "body_system": {"a": 1}, "frame": "first"},
            {**OFFICIAL_CASE, "case_id": "o2", "metadata": {"modality": "CT", "frame": 1.5}},
        ],
    )
    with pytest.raises(DatasetError) as raised:
        load_cases(tmp_path)
    messages = {(p.case_id, p.field): p.message for p in raised.value.problems}
    assert messages[("r1", "organ system")].endswith("(got a number: '3')")
    assert messages[("r1", "D")].endswith("(got a list: \"['x']\")")
    assert "unknown task type 5" in messages[("r1", "question type")]
    assert messages[("o1", "body_system")].endswith("(got an object: \"{'a': 1}\")")
    assert "expected a whole number" in messages[("o1", "frame")]
    assert "got a number: '1.5'" in messages[("o2", "metadata.frame")]


def test_visual_description_beside_reference_reasoning_is_kept_not_dropped(
    tmp_path: Path,
) -> None:
    write_png(tmp_path / "ok.png")
    write_json(tmp_path / "cases.json", [OFFICIAL_CASE])
    [case] = load_cases(tmp_path).cases
    assert case.reference_reasoning == "The round opacity."
    assert (case.metadata.model_extra or {})["visual_description"] == "A round opacity."


def test_options_as_a_list_and_as_keys_at_once_are_refused(tmp_path: Path) -> None:
    write_png(tmp_path / "ok.png")
    write_json(tmp_path / "cases.json", [{**OFFICIAL_CASE, "C": "Mass"}])
    with pytest.raises(DatasetError) as raised:
        load_cases(tmp_path)
    fields = {p.field for p in raised.value.problems}
    assert "options" in fields and "task_type" not in fields  # task_type is read either way


@pytest.mark.parametrize("field", ["case_id", "task_type", "answer"])
def test_ground_truth_fields_of_the_wrong_type_are_named(tmp_path: Path, field: str) -> None:
    write_png(tmp_path / "ok.png")
    write_json(tmp_path / "cases.json", [{**OFFICIAL_CASE, "case_id": "c1"}])
    rows = [
        {"case_id": "c1", "task_type": "mcq", "answer": "A", field: value}
        for value in WRONG.values()
        if not (field == "answer" and value is None)
    ]
    write_json(tmp_path / "ground_truth.json", {"cases": rows})
    with pytest.raises(DatasetError) as raised:
        load_cases(tmp_path)
    truth = [p for p in raised.value.problems if p.file == str(tmp_path / "ground_truth.json")]
    assert len([p for p in truth if p.field == field]) == len(rows)


def test_med_cmr_release_records_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    # As the unzipped dataset.zip: records one folder down, images beside them.
    release = tmp_path / "dataset"
    write_png(release / "ok.png")
    cases, fields = cases_with_wrong_types(RAW_CASE)
    write_json(release / "records.json", cases)
    with pytest.raises(DatasetError) as raised:
        med_cmr(data=str(tmp_path))
    problems = raised.value.problems
    assert {p.file for p in problems} == {str(release / "records.json")}
    assert_every_wrong_field_named(problems, cases, fields, RAW_CASE)
    assert f"... and {len(problems) - SHOWN_PROBLEMS:,} more problem(s)" in str(raised.value)


# Each loader given JSON nested 100,000 deep, in a child process: a crash of the parser
# (a segmentation fault) ends the child, which the test sees as its exit status.
DEEP_LOADERS = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from PIL import Image
    from inspect_medreason.core.loaders import DatasetError, load_cases
    from inspect_medreason.cmb.cmb import cmb_exam
    from inspect_medreason.gemex.gemex import gemex
    from inspect_medreason.med_cmr.med_cmr import med_cmr
    from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
    from inspect_medreason.vqa.vqa import path_vqa, slake, medreason_vqa_rad

    root = Path(sys.argv[1])
    deep = "[" * 100_000 + "]" * 100_000

    def deep_file(name: str, text: str = deep) -> str:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return str(path)

    good = root / "good"
    good.mkdir()
    Image.new("L", (8, 8)).save(good / "ok.png")
    case = {"case_id": "c1", "task_type": "mcq", "question": "Q?", "image_path": "ok.png",
            "options": ["a", "b"], "answer": "A"}
    (good / "cases.json").write_text(json.dumps([case]))
    cmb_row = {"exam_type": "x", "exam_class": "x", "exam_subject": "x", "question": "Q",
               "question_type": "单项选择题", "option": {"A": "a", "B": "b"}, "id": 1}
    (good / "cmb.json").write_text(json.dumps([cmb_row]))

    loaders = {
        "cases.json": lambda: load_cases(deep_file("a/cases.json")),
        "cases.jsonl": lambda: load_cases(deep_file("b/cases.jsonl", '{"a": ' + deep + "}")),
        "ground_truth.json": lambda: load_cases(good, deep_file("c/ground_truth.json")),
        "med_cmr": lambda: med_cmr(data=deep_file("d/dataset/records.json")),
        "medxpertqa_mm": lambda: medxpertqa_mm(data=deep_file("e/test.jsonl")),
        "slake": lambda: slake(data=deep_file("f/test.json")),
        "vqa_rad": lambda: medreason_vqa_rad(data=deep_file("g/VQA_RAD Dataset Public.json")),
        "path_vqa": lambda: path_vqa(data=deep_file("h/test.jsonl")),
        "gemex": lambda: gemex(data=deep_file("i/closed_ended_question.jsonl"),
                               question_types="closed"),
        "cmb_exam": lambda: cmb_exam(data=deep_file("j/test.json")),
        "cmb answer key": lambda: cmb_exam(data=str(good / "cmb.json"),
                                           answers=deep_file("k/test_answers.json")),
    }
    for name, load in loaders.items():
        try:
            load()
            outcome = {"loader": name, "refused": False}
        except DatasetError as error:
            outcome = {"loader": name, "refused": True,
                       "problems": [[p.file, p.field, p.message] for p in error.problems]}
        print(json.dumps(outcome), flush=True)
    """
)


def test_json_nested_100000_deep_is_refused_by_every_loader_without_a_crash(
    tmp_path: Path,
) -> None:
    script = tmp_path / "deep_loaders.py"
    script.write_text(DEEP_LOADERS)
    root = tmp_path / "data"
    root.mkdir()
    child = subprocess.run(
        [sys.executable, str(script), str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes = [json.loads(line) for line in child.stdout.splitlines() if line.startswith("{")]
    # a negative status is a signal (SIGSEGV: -11): the loader after the last line crashed
    assert child.returncode == 0, (child.returncode, outcomes[-1:], child.stderr[-2000:])
    assert "RecursionError" not in child.stderr and "Traceback" not in child.stderr
    assert [o["loader"] for o in outcomes] == [
        "cases.json",
        "cases.jsonl",
        "ground_truth.json",
        "med_cmr",
        "medxpertqa_mm",
        "slake",
        "vqa_rad",
        "path_vqa",
        "gemex",
        "cmb_exam",
        "cmb answer key",
    ]
    for outcome in outcomes:
        assert outcome["refused"], outcome
        deep_problems = [
            p for p in outcome["problems"] if f"levels deep, more than the {MAX_JSON_DEPTH}" in p[2]
        ]
        assert deep_problems, outcome
        # the problem names the file that nests, which is under the test's own folder
        assert all(str(root) in p[0] for p in deep_problems), outcome
