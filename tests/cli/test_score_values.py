"""One rule for score values read from logs: an impossible value (outside its scale, not a
number) is named and left out, identically by compare, leaderboard (with and without
--bootstrap) and judge-scores; agreement's reference is tested in test_agreement.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from cli.test_cli import judged_log
from inspect_medreason.analysis.score_values import read_score
from inspect_medreason.cli import main


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("gt_final", 7, "gt_final=7 is outside its scale 0-4"),
        ("gt_final", -1.0, "gt_final=-1.0 is outside its scale 0-4"),
        ("va_final", math.inf, "va_final=inf is not a finite number"),
        ("rvf_trace", True, "rvf_trace=True is not a number"),
        ("rvf_trace", "3", "rvf_trace='3' is not a number"),
        ("correct", 5.0, "correct=5.0 is outside its scale 0-1"),
    ],
)
def test_impossible_values_are_named(name: str, value: object, problem: str) -> None:
    read = read_score(name, value)
    assert read.number is None and read.problem == problem


def test_usable_and_unscored_values() -> None:
    assert read_score("gt_final", 3.5).number == 3.5  # a panel's mean
    assert read_score("gt_final", 3.5, whole=True).problem is not None
    assert read_score("correct", 1).number == 1.0
    assert read_score("gt_final", None).unscored and read_score("gt_final", math.nan).unscored


def test_every_reader_names_and_leaves_out_an_edited_logs_impossible_values(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A", model="mockllm/a")
    log = read_eval_log(original.location)
    assert log.samples is not None and log.results is not None
    for sample in log.samples:
        assert sample.scores is not None
        if "open_ended_scorer" in sample.scores and sample.id == "o1":
            value = dict(sample.scores["open_ended_scorer"].value)  # type: ignore[arg-type]
            sample.scores["open_ended_scorer"].value = {**value, "gt_final": 7.0, "va_final": 9.0}
        if sample.id == "q1":
            sample.scores["mcq_scorer"].value = {
                "correct": 5.0,
                "strict_correct": 1.0,
                "parsed": 1.0,
            }
    [gt_results] = [s for s in log.results.scores if s.name == "gt_final"]
    gt_results.metrics["mean"].value = 7.0  # the header's mean, edited too
    edited = tmp_path / "edited" / "edited.eval"
    edited.parent.mkdir()
    write_eval_log(log, str(edited))

    assert main(["compare", original.location, str(edited), "--format", "json"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "case 'o1' (epoch 1): gt_final=7.0 is outside its scale 0-4: left out" in err
    assert "va_final=9.0 is outside its scale 0-4: left out" in err
    assert "case 'q1' (epoch 1): correct=5.0 is outside its scale 0-1: left out" in err

    assert main(["leaderboard", str(edited), "--format", "json"]) == 0
    captured = capsys.readouterr()
    board = json.loads(captured.out)
    assert board["rows"][0]["metrics"]["Open-ended GT"] is None  # the impossible mean
    assert f"{edited}: Open-ended GT=7.0 is outside its scale 0-4: left out" in " ".join(
        (captured.err + json.dumps(board["notes"])).split()
    )

    other = judged_log(official_dataset, tmp_path / "other", "ANSWER: B", model="mockllm/b")
    command = ["leaderboard", str(edited), other.location, "--bootstrap", "50"]
    assert main([*command, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "correct=5.0 is outside its scale 0-1: left out" in captured.err + captured.out

    scores = tmp_path / "judge_scores.json"
    assert main(["judge-scores", str(edited), "--output", str(scores)]) == 0
    assert json.loads(scores.read_text())["scores"] == []
    assert "case 'o1': gt_final=7.0 is outside its scale 0-4: left out" in " ".join(
        capsys.readouterr().err.split()
    )
