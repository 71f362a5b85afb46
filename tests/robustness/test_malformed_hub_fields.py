"""Every field the hub families' loaders read (GEMeX, CMB-Exam and its answer key and
few-shot pool, CMB-Clin, SLAKE, VQA-RAD's release, MedXpertQA) given each wrong JSON type,
all in one file in the published layout beside a good row: each is refused with its file,
row and field as the file spells it, all problems at once and the message capped, never a
traceback. One file mixing types is also what ``datasets`` keeps as JSON text: each row
must still be read as its file wrote it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json, write_jsonl, write_png
from utils.published_schemas import (
    CMB_CLIN_CASE,
    SLAKE_ROW,
    cmb_snapshot,
    exam_row,
    gemex_folder,
    medxpertqa_folder,
)

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.core.loaders import SHOWN_PROBLEMS, DatasetError, Problem
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.vqa.vqa import medreason_vqa_rad, path_vqa, slake

# One of each JSON type a field can wrongly hold.
WRONG: dict[str, Any] = {
    "int": 7,
    "list": ["x"],
    "dict": {"a": 1},
    "null": None,
    "bool": True,
    "nested": [[["x"]]],
}
# A list of the wrong items, for a field whose published type is a list.
WRONG_ITEMS = [1, 2]


def wrong_values(
    field: str, required: set[str], valid: set[str], lists: set[str]
) -> dict[str, Any]:
    """The wrong values for ``field``: every kind but the valid ones (null only where the
    field is required: an optional field given null is absent); a list field is given a
    list of the wrong items instead of ``["x"]``."""
    values = {
        kind: value
        for kind, value in WRONG.items()
        if kind not in valid and (kind != "null" or field in required)
    }
    if field in lists:
        values["list"] = WRONG_ITEMS
    return values


def rows_with_wrong_types(
    template: dict[str, Any],
    fields: dict[str, set[str]],
    required: set[str],
    lists: set[str],
) -> tuple[list[dict[str, Any]], dict[int, tuple[str, str]]]:
    """The good template first, then one row per (field, wrong kind); which row holds
    which."""
    rows, placed = [dict(template)], {}
    for field, valid in fields.items():
        for kind, value in wrong_values(field, required, valid, lists).items():
            placed[len(rows)] = (field, kind)
            rows.append({**template, field: value})
    return rows, placed


def names(field: str, problem_field: str) -> bool:
    """Whether a problem's field is ``field`` as the file spells it (an item of it:
    ``choices[0]``, ``option.a``, ``QA_pairs[0].question``)."""
    return problem_field == field or problem_field.startswith((f"{field}[", f"{field}."))


def assert_each_named(
    problems: list[Problem],
    placed: dict[int, tuple[str, str]],
    row_of: Callable[[Problem], int | None],
    file: Path,
) -> None:
    found: dict[int, set[str]] = {}
    for problem in problems:
        row = row_of(problem)
        assert row is not None and row != 0, problem  # the good row is never named
        found.setdefault(row, set()).add(problem.field)
        assert problem.file.startswith(str(file)), problem
    for row, (field, kind) in placed.items():
        assert any(names(field, f) for f in found.get(row, set())), (field, kind, found.get(row))


def hub_row(problem: Problem) -> int | None:
    """The row number of a hub loader's problem ("row 3 (closed_1)")."""
    head = problem.case_id.split(" (")[0]
    return int(head.removeprefix("row ")) if head.startswith("row ") else None


def assert_capped(error: DatasetError) -> None:
    message = str(error)
    shown = min(len(error.problems), SHOWN_PROBLEMS)
    assert message.count("\n  - ") == shown
    if len(error.problems) > SHOWN_PROBLEMS:
        assert f"... and {len(error.problems) - SHOWN_PROBLEMS:,} more problem(s)" in message
    assert "Traceback" not in message


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


GEMEX_FIELDS = {
    "q_id": {"int"},
    "row_id": {"int"},
    "question": set(),
    "answer": set(),
    "reason": set(),
    "choices": set(),
    "image_path": set(),
    "visual_locations": set(),
    "visual_regions": set(),
    "type": set(),
}


@pytest.mark.parametrize("kind", ["closed", "single", "multi", "open"])
def test_gemex_every_field_of_every_wrong_type_is_named(tmp_path: Path, kind: str) -> None:
    root = gemex_folder(tmp_path / "gemex")
    file = (
        root
        / {
            "closed": "closed_ended_question.jsonl",
            "single": "single_choice_question.jsonl",
            "multi": "multi_choice_question.jsonl",
            "open": "open_ended_question.jsonl",
        }[kind]
    )
    [template] = read_jsonl(file)
    required = {"question", "answer", "reason", "image_path"}
    if kind in {"single", "multi"}:
        required.add("choices")
    fields = dict(GEMEX_FIELDS)
    lists = {"choices", "visual_locations", "visual_regions"}
    if kind == "multi":
        lists.add("answer")
    rows, placed = rows_with_wrong_types(template, fields, required, lists)
    # A box of three numbers, a closed answer as a list of text: the gaps found by a probe.
    placed[len(rows)] = ("visual_locations", "short box")
    rows.append({**template, "visual_locations": [[1, 2, 3]]})
    if kind != "multi":
        placed[len(rows)] = ("answer", "list of text")
        rows.append({**template, "answer": ["Yes."]})
    write_jsonl(file, rows)
    with pytest.raises(DatasetError) as raised:
        gemex(data=str(root), question_types=kind)
    assert_each_named(raised.value.problems, placed, hub_row, file)
    assert_capped(raised.value)


def test_gemex_ids_as_text_or_numbers_are_ids_and_a_list_is_not(tmp_path: Path) -> None:
    root = gemex_folder(tmp_path / "gemex")
    file = root / "closed_ended_question.jsonl"
    [template] = read_jsonl(file)
    write_jsonl(file, [{**template, "q_id": "a1"}, {**template, "q_id": 2}])
    task = gemex(data=str(root), question_types="closed")
    assert [s.id for s in task.dataset] == ["closed_a1", "closed_2"]
    # the other rows' text is read as written, not as the JSON text of a mixed column
    assert [s.target for s in task.dataset] == ["Yes.", "Yes."]
    write_jsonl(file, [template, {**template, "q_id": ["x"]}])
    with pytest.raises(DatasetError) as raised:
        gemex(data=str(root), question_types="closed")
    [problem] = raised.value.problems
    assert (problem.case_id, problem.field) == ("row 1 (closed_#1)", "q_id")
    assert "expected a whole number or text, got a list" in problem.message


CMB_EXAM_FIELDS: dict[str, set[str]] = {
    name: set()
    for name in (
        "exam_type",
        "exam_class",
        "exam_subject",
        "question",
        "answer",
        "question_type",
        "option",
        "explanation",
    )
}
CMB_EXAM_REQUIRED = {"exam_type", "exam_class", "exam_subject", "question", "question_type"}


def test_cmb_exam_every_field_of_every_wrong_type_is_named(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    file = root / "CMB-Exam" / "CMB-val" / "CMB-val-merge.json"
    [template] = json.loads(file.read_text(encoding="utf-8"))
    rows, placed = rows_with_wrong_types(
        template, CMB_EXAM_FIELDS, CMB_EXAM_REQUIRED | {"option"}, set()
    )
    placed[len(rows)] = ("option", "a number as an option")
    rows.append({**template, "option": {**template["option"], "B": 5}})
    placed[len(rows)] = ("option", "the hub's list with a number")
    rows.append({**template, "option": [{"key": "A", "value": "a"}, {"key": "B", "value": 5}]})
    write_json(file, rows)
    with pytest.raises(DatasetError) as raised:
        cmb_exam(data=str(root), split="val")
    assert_each_named(raised.value.problems, placed, hub_row, file)
    assert_capped(raised.value)
    messages = {(hub_row(p), p.field): p.message for p in raised.value.problems}
    assert messages[(len(rows) - 2, "option.B")] == "expected text, got a number ('5')"


def test_cmb_exam_ids_and_the_answer_key_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    questions_file = root / "CMB-Exam" / "CMB-test" / "CMB-test-choice-question-merge.json"
    questions = json.loads(questions_file.read_text(encoding="utf-8"))
    wrong_ids = [["1"], {"a": 1}, True, 1.5]
    write_json(questions_file, [*questions, *({**questions[0], "id": v} for v in wrong_ids)])
    with pytest.raises(DatasetError) as raised:
        cmb_exam(data=str(root))
    named = {(hub_row(p), p.field) for p in raised.value.problems}
    assert {(len(questions) + i, "id") for i in range(len(wrong_ids))} <= named
    # The published key (integer ids): an id or an answer of the wrong type, by its row.
    write_json(questions_file, questions)
    key = [
        {"id": 1, "answer": "D"},
        {"id": 2, "answer": ["B"]},
        {"id": [3], "answer": "AC"},
        {"id": 4, "answer": 7},
    ]
    write_json(tmp_path / "key.json", key)
    with pytest.raises(DatasetError) as raised:
        cmb_exam(data=str(root), answers=str(tmp_path / "key.json"))
    assert {(p.case_id, p.field) for p in raised.value.problems} == {
        ("row 1", "answer"),
        ("row 2", "id"),
        ("row 3", "answer"),
    }
    assert all(p.file == str(tmp_path / "key.json") for p in raised.value.problems)


def test_cmb_fewshot_pool_of_the_wrong_type_is_refused_before_any_example_is_shown(
    tmp_path: Path,
) -> None:
    pool = tmp_path / "CMB-val-merge.json"
    good = exam_row(9, "医师考试", "口腔执业医师", "D") | {"explanation": "因为D。"}
    write_json(pool, [good, {**good, "explanation": ["x"]}, {**good, "answer": None}])
    root = cmb_snapshot(tmp_path / "CMB")
    with pytest.raises(DatasetError) as raised:
        cmb_exam(data=str(root), split="val", fewshot=1, fewshot_data=str(pool))
    assert {(hub_row(p), p.field) for p in raised.value.problems} == {
        (1, "explanation"),
        (2, "answer"),
    }


def clin_row(problem: Problem) -> int | None:
    # the case-level checks name "row N (id)"; the pair checks the case's row in the file
    row = hub_row(problem)
    if row is None and " row " in problem.file:
        row = int(problem.file.rsplit(" row ", 1)[1])
    return row


def test_cmb_clin_every_field_of_every_wrong_type_is_named(tmp_path: Path) -> None:
    file = tmp_path / "CMB-Clin-qa.json"
    fields: dict[str, set[str]] = {
        "id": {"int"},
        "title": set(),
        "description": set(),
        "QA_pairs": set(),
    }
    rows, placed = rows_with_wrong_types(
        CMB_CLIN_CASE, fields, {"id", "description", "QA_pairs"}, {"QA_pairs"}
    )
    for position, key in enumerate(("question", "answer")):
        for kind, value in WRONG.items():
            if kind == "null":
                continue
            pairs = [dict(pair) for pair in CMB_CLIN_CASE["QA_pairs"]]
            pairs[position][key] = value
            placed[len(rows)] = ("QA_pairs", f"{key} {kind}")
            rows.append({**CMB_CLIN_CASE, "id": len(rows), "QA_pairs": pairs})
    # each case its own id, so that no problem is a duplicate id
    rows = [
        {**row, "id": index} if type(row["id"]) is int else row for index, row in enumerate(rows)
    ]
    write_json(file, rows)
    with pytest.raises(DatasetError) as raised:
        cmb_clin(data=str(file))
    assert_each_named(raised.value.problems, placed, clin_row, file)
    assert_capped(raised.value)
    pair_fields = {p.field for p in raised.value.problems if p.field.startswith("QA_pairs[")}
    assert {"QA_pairs[0].question", "QA_pairs[1].answer", "QA_pairs[0]"} <= pair_fields


SLAKE_FIELDS = {
    "qid": {"int"},
    "img_name": set(),
    "question": set(),
    "answer": {"int"},
    "q_lang": set(),
    "answer_type": set(),
    "modality": set(),
    "content_type": set(),
    "location": set(),
}


def test_slake_every_field_of_every_wrong_type_is_named(tmp_path: Path) -> None:
    write_png(tmp_path / "imgs" / str(SLAKE_ROW["img_name"]))
    file = tmp_path / "test.json"
    rows, placed = rows_with_wrong_types(
        SLAKE_ROW, SLAKE_FIELDS, {"img_name", "question", "answer", "q_lang", "answer_type"}, set()
    )
    rows = [
        {**row, "qid": index} if row["qid"] == SLAKE_ROW["qid"] else row
        for index, row in enumerate(rows)
    ]
    write_json(file, rows)
    with pytest.raises(DatasetError) as raised:
        slake(data=str(file), image_root=str(tmp_path / "imgs"))
    assert_each_named(raised.value.problems, placed, hub_row, file)
    assert_capped(raised.value)


RELEASE_ROWS = Path(__file__).parents[1] / "vqa" / "vqa_rad_release_rows.json"


def test_vqa_rad_release_answers_of_two_types_are_read_as_written(tmp_path: Path) -> None:
    """The release's answers mix text and numbers: every answer is its own value, never
    the JSON text ``"yes"`` with its quotes."""
    file = tmp_path / "VQA_RAD Dataset Public.json"
    write_json(file, json.loads(RELEASE_ROWS.read_text(encoding="utf-8")))
    task = medreason_vqa_rad(data=str(file), images=False)
    assert {s.id: s.target for s in task.dataset}["10"] == "yes"
    assert all(not str(s.target).startswith('"') for s in task.dataset)


def test_vqa_rad_release_split_mark_of_the_wrong_type_is_named_not_split(tmp_path: Path) -> None:
    rows = json.loads(RELEASE_ROWS.read_text(encoding="utf-8"))
    file = tmp_path / "VQA_RAD Dataset Public.json"
    wrong = [["test_freeform"], 7, {"a": 1}, True]
    write_json(
        file, [*rows, *({**rows[0], "qid": 900 + i, "phrase_type": v} for i, v in enumerate(wrong))]
    )
    with pytest.raises(DatasetError) as raised:
        medreason_vqa_rad(data=str(file), images=False)
    assert {(hub_row(p), p.field) for p in raised.value.problems} == {
        (len(rows) + i, "phrase_type") for i in range(len(wrong))
    }


MEDXPERTQA_FIELDS = {
    "id": {"int"},
    "question": set(),
    "options": set(),
    "label": set(),
    "images": set(),
    "medical_task": set(),
    "body_system": set(),
    "question_type": set(),
}


def test_medxpertqa_every_field_of_every_wrong_type_is_named(tmp_path: Path) -> None:
    root = medxpertqa_folder(tmp_path / "MedXpertQA")
    file = root / "MM" / "test.jsonl"
    template = read_jsonl(file)[0]
    rows, placed = rows_with_wrong_types(
        template,
        MEDXPERTQA_FIELDS,
        {"id", "question", "options", "label", "images"},
        {"images", "label"},
    )
    # every row its own id (a number is an id), so that no problem is a duplicate id
    rows = [
        {**row, "id": f"MM-{index}"} if row["id"] == template["id"] else row
        for index, row in enumerate(rows)
    ]
    write_jsonl(file, rows)
    with pytest.raises(DatasetError) as raised:
        medxpertqa_mm(data=str(root))
    assert_each_named(raised.value.problems, placed, hub_row, file)
    assert_capped(raised.value)


def test_a_saved_copy_whose_json_text_does_not_parse_names_its_row(tmp_path: Path) -> None:
    """A ``datasets.save_to_disk`` copy keeps a mixed-type column as JSON text: text that
    is no JSON (edited by hand) is that row's problem, never a traceback."""
    import datasets
    import pyarrow as pa

    answers = pa.ExtensionArray.from_storage(pa.json_(), pa.array(['"yes"', "{bad"]))
    table = pa.table({"question": pa.array(["is it?", "is it not?"]), "answer": answers})
    datasets.Dataset(table).save_to_disk(str(tmp_path / "saved"))
    with pytest.raises(DatasetError) as raised:
        path_vqa(data=str(tmp_path / "saved"), images=False)
    [problem] = raised.value.problems
    assert (problem.case_id, problem.field) == ("row 1", "row")
    assert problem.message.startswith("cannot be read (")
