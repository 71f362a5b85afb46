"""The challenge's files as a library: ``official_results`` and ``judge_score_file`` on real
judged logs give what ``medreason export`` and ``medreason judge-scores`` write, typed."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from utils.rated_logs import default_truth

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import (
    JudgeScoreFile,
    OfficialResults,
    judge_score_file,
    official_results,
)
from inspect_medreason.cli import main

from .conftest import CASES, TwoRuns

pytestmark = pytest.mark.xdist_group("analysis_runs")  # two_runs built once

Item = TypeVar("Item")


def test_official_results_are_what_export_writes(
    two_runs: TwoRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = official_results([two_runs.a], cases=two_runs.data / "cases.json")
    assert isinstance(results, OfficialResults)
    assert results.valid and results.problems == ()
    assert results.counts() == {"mcq": 0, "open": CASES}
    assert [a.case_id for a in results.submission.answers] == [f"c{n:02d}" for n in range(CASES)]
    written, packed = tmp_path / "results.json", tmp_path / "sub.zip"
    argv = ["export", str(two_runs.a), "--output", str(written), "--zip", str(packed)]
    assert main([*argv, "--cases", str(two_runs.data / "cases.json")]) == 0
    assert written.read_text(encoding="utf-8") == results.text
    with (
        zipfile.ZipFile(packed) as archive,
        zipfile.ZipFile(io.BytesIO(results.zip_bytes())) as own,
    ):
        assert archive.namelist() == own.namelist() == ["results.json"]
        assert archive.read("results.json") == own.read("results.json")
    assert f"({CASES} answers: 0 mcq, {CASES} open)" in capsys.readouterr().out


def test_official_results_as_a_table(two_runs: TwoRuns) -> None:
    frame = official_results([two_runs.a]).to_pandas()
    assert list(frame.columns) == [
        "case_id",
        "task_type",
        "answer",
        "reasoning_trace",
        "model",
        "parse_method",
    ]
    assert len(frame) == CASES
    assert set(frame["task_type"]) == {"open"}
    assert set(frame["model"]) == {"mockllm/model"}  # run A's
    assert frame["answer"].str.contains("answer by model").all()


def test_an_invalid_export_is_a_result_with_its_problems(two_runs: TwoRuns, tmp_path: Path) -> None:
    """Checked against cases the run did not answer: a problem per missing case, returned
    (the command refuses to write it), never raised."""
    cases = json.loads((two_runs.data / "cases.json").read_text(encoding="utf-8"))
    cases["cases"].append({**cases["cases"][0], "case_id": "extra"})
    more = tmp_path / "cases.json"
    more.write_text(json.dumps(cases), encoding="utf-8")
    results = official_results([two_runs.a], cases=more)
    assert not results.valid
    assert any("extra" in problem for problem in results.problems), results.problems


def test_a_missing_log_is_a_refusal(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError) as refusal:
        official_results([tmp_path / "nowhere"])
    assert refusal.value.problems == [f"{tmp_path / 'nowhere'}: no such file or folder"]


def test_judge_score_file_is_what_judge_scores_writes(
    two_runs: TwoRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = judge_score_file([two_runs.a])
    assert isinstance(scores, JudgeScoreFile)
    assert scores.left_out == ()
    # the scripted judges give each case its true ratings (utils.rated_logs)
    for row in scores.scores:
        truth = default_truth(int(str(row["case_id"])[1:]))
        assert (row["gt_final"], row["va_answer"], row["rvf_trace"]) == (
            truth["gt"],
            truth["va"],
            truth["rvf"],
        )
    written = tmp_path / "judge_scores.json"
    assert main(["judge-scores", str(two_runs.a), "--output", str(written)]) == 0
    assert written.read_text(encoding="utf-8") == scores.text
    assert json.loads(scores.text) == scores.document
    assert f"({CASES} open cases)" in capsys.readouterr().out
    frame = scores.to_pandas()
    assert list(frame.columns) == ["case_id", "gt_final", "va_answer", "rvf_trace"]
    assert list(frame["case_id"]) == [f"c{n:02d}" for n in range(CASES)]


def test_progress_is_shown_through_the_callback_given(two_runs: TwoRuns) -> None:
    steps: list[str] = []

    def progress(
        items: Iterable[Item], description: str, total: int | None = None
    ) -> Iterator[Item]:
        steps.append(description)
        yield from items

    official_results([two_runs.a], progress=progress)
    assert steps[0] == "reading log headers"
    assert any(step.startswith("exporting ") for step in steps), steps
