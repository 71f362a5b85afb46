"""GEMeX on small local files in its published schema."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import run_with_grader, scripted_output, user_text
from inspect_ai.model import ChatMessage, ModelOutput
from utils.published_schemas import gemex_folder

from inspect_medreason.gemex.dataset import parse_label_set
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.gemex.scorer import parse_gemex_reply, v_score

GEMEX_REPLIES = {
    "(c1)": '{"answer": "Yes.", "reason": "Blunted angle.", "location": [[10, 20, 60, 120]]}',
    "(s1)": '{"answer": "C", "reason": "Left base.", "location": [[10, 20, 60, 120], [100, 100, 120, 120]]}',
    "(m1)": '{"answer": "A, B, and C", "reason": "Seen.", "location": []}',
    "(o1)": "<answer> Left pleural effusion. <reason> Meniscus sign. <location> [[12, 22, 58, 118]]",
}


def test_gemex_scores_every_question_type(tmp_path: Path) -> None:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        return scripted_output(next(r for k, r in GEMEX_REPLIES.items() if k in text))

    def grade(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        own = "Meniscus sign at the left base" in text.split("<candidate_answer id-")[1]
        return scripted_output(json.dumps({"score": 10 if own else 8, "rationale": "r"}))

    log = run_with_grader(
        gemex(data=str(gemex_folder(tmp_path / "gemex"))), respond, tmp_path, grade
    )
    assert log.samples is not None
    by_type: dict[str, Any] = {
        s.metadata["question_type"]: s.scores["gemex_scorer"].value  # type: ignore[index]
        for s in log.samples
    }
    assert by_type["closed"]["accuracy"] == 1.0 and by_type["closed"]["v_score"] == 1.0
    assert by_type["single"]["accuracy"] == 1.0
    assert by_type["single"]["v_score"] == pytest.approx(0.5)  # one exact box, one unmatched
    multi = by_type["multi"]
    assert multi["accuracy"] == 0.0 and multi["jaccard"] == pytest.approx(2 / 3)
    assert multi["precision"] == pytest.approx(2 / 3) and multi["recall"] == 1.0
    assert multi["v_score"] == 0.0  # no boxes given
    open_ = by_type["open"]
    assert open_["ar_score"] == pytest.approx(0.8) and math.isnan(open_["accuracy"])
    assert 0 < open_["v_score"] < 1 and 0 < open_["rouge_l"] <= 1 and 0 <= open_["bleu"] <= 1
    assert log.results is not None
    metrics = {s.name: s.metrics for s in log.results.scores}
    assert metrics["accuracy"]["mean"].value == pytest.approx(2 / 3)
    assert "grouped_question_type:multi" in metrics["jaccard"]


def test_gemex_text_overlap_compares_one_normalised_answer_form(tmp_path: Path) -> None:
    perfect = {
        "(c1)": '{"answer": "yes", "reason": "Blunted angle.", "location": []}',
        "(s1)": '{"answer": "C. Left base", "reason": "Left base.", "location": []}',
        "(m1)": '{"answer": ["C", "A"], "reason": "Both visible.", "location": []}',
        "(o1)": '{"answer": "Left pleural effusion.", "reason": "Meniscus sign at the left base."}',
    }

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output(next(r for k, r in perfect.items() if k in user_text(messages)))

    def grade(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"score": 10, "rationale": "r"}))

    log = run_with_grader(
        gemex(data=str(gemex_folder(tmp_path / "gemex"))), respond, tmp_path, grade
    )
    assert log.samples is not None
    for sample in log.samples:
        value: Any = sample.scores["gemex_scorer"].value  # type: ignore[index]
        assert value["bleu"] == pytest.approx(1.0) and value["rouge_l"] == pytest.approx(1.0), (
            sample.id
        )


def test_gemex_blind_control_needs_no_image_files(tmp_path: Path) -> None:
    folder = gemex_folder(tmp_path / "gemex")
    (folder / "files" / "p10" / "s1" / "img.jpg").unlink()
    with pytest.raises(ValueError, match=r"img\.jpg"):
        gemex(data=str(folder))

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output(
            next(r for k, r in GEMEX_REPLIES.items() if k in user_text(messages))
        )

    def grade(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"score": 5, "rationale": "r"}))

    log = run_with_grader(gemex(data=str(folder), images=False), respond, tmp_path, grade)
    assert log.samples is not None and len(log.samples) == 4
    assert log.eval.metadata is not None and log.eval.metadata["images"] is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("A, B, and C", {"A", "B", "C"}),
        ("A and C", {"A", "C"}),
        ("['A', 'C']", {"A", "C"}),
        (["A", "C"], {"A", "C"}),
        ('["B"]', {"B"}),
        ("None of them", set()),
        ("(A) and (D)", {"A"}),
        # brackets nested past the parsers' recursion limit: text naming no label, not a crash
        ("[" * 100_000, set()),
        ("[" * 5_000 + "A" + "]" * 5_000, {"A"}),
    ],
)
def test_label_sets(value: Any, expected: set[str]) -> None:
    assert parse_label_set(value, {"A", "B", "C"}) == expected


def test_v_score_hungarian() -> None:
    reference = [(0.0, 0.0, 10.0, 10.0), (20.0, 20.0, 30.0, 30.0)]
    swapped = [(20.0, 20.0, 30.0, 30.0), (0.0, 0.0, 10.0, 10.0)]
    assert v_score(swapped, reference) == 1.0  # order does not matter
    assert v_score([(0.0, 0.0, 10.0, 5.0)], reference) == pytest.approx(0.5 / 2)
    assert v_score([], reference) == 0.0 and v_score([], []) == 1.0


def test_gemex_reply_forms() -> None:
    tagged = parse_gemex_reply("<answer> B <reason> Left. <location> [[1, 2, 3, 4]]")
    assert tagged["answer"] == "B" and tagged["boxes"] == [(1.0, 2.0, 3.0, 4.0)]
    fenced = parse_gemex_reply(
        '```json\n{"answer": ["A"], "reason": "x", "location": [[1,1,2,2]]}\n```'
    )
    assert fenced["answer"] == ["A"] and fenced["method"] == "json"


def test_gemex_missing_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="closed_ended_question"):
        gemex(data=str(tmp_path / "empty"), question_types="closed")


@pytest.mark.parametrize(
    ("reply", "accuracy", "no_answer"),
    [
        ('{"answer": "No. Wait, actually yes.", "reason": "Seen.", "location": []}', 1.0, False),
        ("The answer is no.\nOn second thought, yes.", 1.0, False),
        ("Yes.\nNo.", 0.0, True),
        ('{"answer": "Probably yes.", "reason": "Seen.", "location": []}', 0.0, True),
    ],
)
def test_gemex_closed_reads_the_final_committed_yes_or_no(
    tmp_path: Path, reply: str, accuracy: float, no_answer: bool
) -> None:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output(reply)

    def grade(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"score": 10, "rationale": "r"}))

    log = run_with_grader(
        gemex(data=str(gemex_folder(tmp_path / "gemex")), question_types="closed"),
        respond,
        tmp_path,
        grade,
    )
    assert log.status == "success" and log.samples
    [sample] = log.samples
    assert sample.scores is not None
    score = sample.scores["gemex_scorer"]
    assert isinstance(score.value, dict)
    assert score.value["accuracy"] == accuracy
    assert ("no answer, counted wrong" in str(score.explanation)) is no_answer
