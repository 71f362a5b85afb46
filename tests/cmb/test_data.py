"""CMB read from its published hub snapshot (the card's configs CMB-Exam and CMB-Clin),
with the test answers joined from the key published in the GitHub repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from utils.published_schemas import CMB_CLIN_CASE, cmb_answer_key, cmb_snapshot

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.core.loaders import DatasetError


def test_exam_test_questions_take_their_answers_from_the_published_key(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    key = cmb_answer_key(tmp_path / "CMB-test-choice-answer.json")
    task = cmb_exam(data=str(root), answers=str(key))
    assert [(s.id, s.target) for s in task.dataset] == [("1", "D"), ("2", "B"), ("3", "AC")]
    metadata = task.metadata or {}
    assert metadata["split"] == "test" and metadata["data"]["config"] == "CMB-Exam"
    # relative to the data folder named, and the key by its name: a log names no local path
    assert metadata["data"]["files"] == ["CMB-Exam/CMB-test/CMB-test-choice-question-merge.json"]
    assert metadata["answer_key"]["path"] == key.name
    assert metadata["answer_key"]["answers_joined"] == 3
    assert len(metadata["answer_key"]["sha256"]) == 64


def test_the_key_saved_in_the_data_folder_is_found(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    cmb_answer_key(root / "data" / "CMB-test-choice-answer.json")
    task = cmb_exam(data=str(root))
    assert [s.target for s in task.dataset] == ["D", "B", "AC"]


def test_test_questions_without_a_key_say_where_it_is_published(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    with pytest.raises(
        DatasetError,
        match=r"3 question\(s\) without an answer.*GitHub repository "
        r"FreedomIntelligence/CMB.*-T answers=PATH",
    ):
        cmb_exam(data=str(root))
    key = tmp_path / "key.json"
    key.write_text(json.dumps([{"id": 1, "answer": "D"}, {"id": 2, "answer": "B"}]), "utf-8")
    with pytest.raises(DatasetError, match=r"row 2 \(3\)': answer: no answer for this id"):
        cmb_exam(data=str(root), answers=str(key))


def test_validation_split_and_fewshot_pool_come_from_the_snapshot(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    task = cmb_exam(data=str(root), split="val")
    assert [s.target for s in task.dataset] == ["D"]
    assert (task.metadata or {})["split"] == "validation"
    key = cmb_answer_key(tmp_path / "key.json")
    assert (
        len(cmb_exam(data=str(root), answers=str(key), fewshot=1, fewshot_data=str(root)).dataset)
        == 3
    )


def test_clin_reads_its_config_and_records_the_reference_key(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    task = cmb_clin(data=str(root))
    [sample] = list(task.dataset)
    assert (sample.metadata or {})["solutions"] == ["嵌顿性腹股沟斜疝。", "紧急手术。"]
    metadata = task.metadata or {}
    assert metadata["reference_field"] == {"answer": 1}
    assert metadata["data"]["files"] == ["CMB-Clin/CMB-Clin-qa.json"]


def test_clin_without_references_is_refused_not_passed_on_empty(tmp_path: Path) -> None:
    case = {**CMB_CLIN_CASE, "QA_pairs": [{"question": "简述诊断。"}]}
    path = tmp_path / "CMB-Clin-qa.json"
    path.write_text(json.dumps([case], ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"QA_pairs\[0\].answer: missing or empty"):
        cmb_clin(data=str(path))


def test_clin_pairs_that_are_no_list_are_refused_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "CMB-Clin-qa.json"
    shapes: list[Any] = [{"question": "简述诊断。", "answer": "斜疝。"}, "简述诊断：斜疝。", []]
    for pairs in shapes:
        path.write_text(
            json.dumps([{**CMB_CLIN_CASE, "QA_pairs": pairs}], ensure_ascii=False), "utf-8"
        )
        with pytest.raises(DatasetError, match=r"QA_pairs: (expected a list|empty)"):
            cmb_clin(data=str(path))


def test_two_questions_with_one_id_are_refused_before_the_key_is_joined(tmp_path: Path) -> None:
    root = cmb_snapshot(tmp_path / "CMB")
    path = root / "CMB-Exam" / "CMB-test" / "CMB-test-choice-question-merge.json"
    questions = json.loads(path.read_text(encoding="utf-8"))
    questions[1]["id"] = questions[0]["id"]
    path.write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    key = cmb_answer_key(tmp_path / "key.json")
    with pytest.raises(DatasetError, match=r"row 1 \(1\)': id: duplicate id: row 0"):
        cmb_exam(data=str(root), answers=str(key))
