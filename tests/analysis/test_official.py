"""The official scorer and validator as a library: ``score_submission`` and
``validate_submission`` give what ``medreason score`` and ``medreason validate`` print."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.official import (
    OfficialScore,
    SubmissionCheck,
    SubmissionRefused,
    score_submission,
    validate_submission,
)
from inspect_medreason.cli import main


def answer(case_id: str, task_type: str, value: str) -> dict[str, Any]:
    return {"case_id": case_id, "task_type": task_type, "answer": value, "reasoning_trace": "r"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Two MCQ cases (one right) and one open case judged 2, 4, 1 (its VA capped at 1 by the gate)."""
    submission = {
        "name": "t",
        "type": "Medical visual reasoning",
        "answers": [answer("m1", "mcq", "A"), answer("m2", "mcq", "B"), answer("o1", "open", "x")],
        "version": {"major": 1, "minor": 0},
    }
    truth = {
        "cases": [
            {"case_id": "m1", "task_type": "mcq", "answer": "A"},
            {"case_id": "m2", "task_type": "mcq", "answer": "C"},
            {"case_id": "o1", "task_type": "open", "answer": "y"},
        ]
    }
    judged = {"scores": [{"case_id": "o1", "gt_final": 2, "va_answer": 4, "rvf_trace": 1}]}
    return {
        "predictions": write_json(tmp_path / "results.json", submission),
        "truth": write_json(tmp_path / "ground_truth.json", truth),
        "judged": write_json(tmp_path / "judge_scores.json", judged),
    }


def test_score_submission_is_what_score_prints(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scored = score_submission(files["predictions"], files["truth"], files["judged"])
    assert isinstance(scored, OfficialScore)
    assert scored.metrics == {"MCQ Accuracy": 0.5, "Open-ended GT": 2, "Open-ended VA": 1}
    assert scored.counts == {"num_cases": 3, "num_mcq": 2, "num_open": 1}
    assert scored.warnings == ()
    argv = ["--predictions", str(files["predictions"]), "--ground-truth", str(files["truth"])]
    assert main(["score", *argv, "--judge-scores", str(files["judged"])]) == 0
    assert capsys.readouterr().out == scored.text + "\n"
    assert json.loads(scored.text)["per_case"] == list(scored.per_case)


def test_pretty_is_the_official_indented_text(files: dict[str, Path]) -> None:
    compact = score_submission(files["predictions"], files["truth"], files["judged"])
    pretty = score_submission(files["predictions"], files["truth"], files["judged"], pretty=True)
    assert "\n" not in compact.text and "\n  " in pretty.text
    assert json.loads(compact.text) == json.loads(pretty.text)


def test_the_per_case_table(files: dict[str, Path]) -> None:
    frame = score_submission(files["predictions"], files["truth"], files["judged"]).to_pandas()
    assert list(frame.columns) == [
        "case_id",
        "task_type",
        "mcq_correct",
        "GT_final",
        "VA_answer",
        "RVF_trace",
        "VA_final",
    ]
    assert list(frame["case_id"]) == ["m1", "m2", "o1"]
    assert list(frame["mcq_correct"][:2]) == [1.0, 0.0]
    assert math.isnan(frame["mcq_correct"][2])
    assert frame["VA_final"][2] == 1  # VA 4 capped by an RVF of 1


def test_a_refusal_carries_its_problems_and_warnings(files: dict[str, Path]) -> None:
    """Without the judge scores the open case cannot be scored: refused, every problem named."""
    with pytest.raises(SubmissionRefused) as refusal:
        score_submission(files["predictions"], files["truth"])
    assert refusal.value.problems == [
        "case 'o1': open case without judge scores (pass --judge-scores)"
    ]
    # a judge row for an unknown case: accepted with a warning, refused with strict
    extra = json.loads(files["judged"].read_text(encoding="utf-8"))
    extra["scores"].append({"case_id": "ghost", "gt_final": 1, "va_answer": 1, "rvf_trace": 1})
    write_json(files["judged"], extra)
    accepted = score_submission(files["predictions"], files["truth"], files["judged"])
    assert len(accepted.warnings) == 1 and "ghost" in accepted.warnings[0]
    with pytest.raises(SubmissionRefused) as strict:
        score_submission(files["predictions"], files["truth"], files["judged"], strict=True)
    assert strict.value.warnings == list(accepted.warnings)


def test_an_unreadable_file_is_an_analysis_error(files: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(AnalysisError) as refusal:
        score_submission(tmp_path / "absent.json", files["truth"])
    assert not isinstance(refusal.value, SubmissionRefused)
    assert "absent.json" in str(refusal.value)


def test_validate_submission_is_what_validate_prints(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    check = validate_submission(files["predictions"])
    assert isinstance(check, SubmissionCheck)
    assert check == SubmissionCheck((), (), 3, False)
    assert check.valid()
    assert main(["validate", str(files["predictions"])]) == 0
    assert capsys.readouterr().out == (
        f"{files['predictions']} is valid (no --cases: labels and completeness not checked): "
        "3 answers\n"
    )


def test_an_invalid_submission_is_a_check_with_its_problems(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(files["predictions"].read_text(encoding="utf-8"))
    document["answers"][0]["answer"] = " "
    del document["version"]
    write_json(files["predictions"], document)
    check = validate_submission(files["predictions"])
    assert check.problems == ("submission case 'm1': answer must be a non-empty string",)
    assert check.warnings == ("version: missing; the documented value is {'major': 1, 'minor': 0}",)
    assert not check.valid()
    assert main(["validate", str(files["predictions"])]) == 1
    err = capsys.readouterr().err
    assert all(line in err for line in (*check.problems, *check.warnings))
