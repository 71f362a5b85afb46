"""The leaderboard as a library: ``rank_models`` on real judged logs gives the rows, ranks and
notes ``medreason leaderboard`` prints, and a table of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.leaderboard import Leaderboard, rank_models
from inspect_medreason.cli import main

from .conftest import CASES, TwoRuns

pytestmark = pytest.mark.xdist_group("analysis_runs")  # two_runs built once

Item = TypeVar("Item")


@pytest.fixture
def logs(two_runs: TwoRuns) -> Path:
    """The folder of both runs' logs (the second model's judged one lower)."""
    return two_runs.logs


def test_rank_models_is_what_leaderboard_prints(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = rank_models([logs])
    assert isinstance(board, Leaderboard)
    assert [(row.model, row.position) for row in board.rows] == [
        ("mockllm/model", 1.0),
        ("mockllm/other", 2.0),
    ]
    first, second = board.rows
    for name in ("Open-ended GT", "Open-ended VA"):
        better, worse = first.metrics[name], second.metrics[name]
        assert better is not None and worse is not None and better > worse
        assert first.counts[name] == CASES
    assert first.missing == ["MCQ Accuracy"]  # open-ended runs only
    for fmt in ("md", "json", "csv"):
        assert main(["leaderboard", str(logs), "--format", fmt, "--breakdown"]) == 0
        assert capsys.readouterr().out == board.render(fmt, breakdown=True) + (
            "" if board.render(fmt, breakdown=True).endswith("\n") else "\n"
        )
    assert board.to_markdown() == board.render("md")


def test_the_table_has_a_row_per_experiment(logs: Path) -> None:
    board = rank_models([logs])
    frame = board.to_pandas()
    assert list(frame["model"]) == ["mockllm/model", "mockllm/other"]
    assert list(frame["position"]) == [1.0, 2.0]
    for name in ("Open-ended GT", "Open-ended VA"):
        assert list(frame[name]) == [row.metrics[name] for row in board.rows]
        assert list(frame[f"n {name}"]) == [CASES, CASES]
        assert (frame[f"{name} lower"] <= frame[name]).all()
        assert (frame[name] <= frame[f"{name} upper"]).all()
    assert list(frame["rank Open-ended GT"]) == [1.0, 2.0]
    assert list(frame["missing"]) == ["MCQ Accuracy", "MCQ Accuracy"]


def test_notes_reach_the_callback_as_they_are_found(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("not a log", encoding="utf-8")
    heard: list[str] = []
    board = rank_models([logs, other], bootstrap=20, on_note=heard.append)
    assert heard[0] == f"{other}: skipped, not an eval log (.eval or .json)"
    assert heard == board.notes
    assert all(row.stability is not None for row in board.rows)
    assert main(["leaderboard", str(logs), str(other), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().err.splitlines()
    assert printed == [f"note: {note}" for note in heard]


def test_no_medreason_log_is_a_refusal(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError) as refusal:
        rank_models([tmp_path])
    assert refusal.value.problems == [
        "no successful, complete eval log with MedReason metrics found"
    ]


def test_the_plot_is_a_png(logs: Path) -> None:
    assert rank_models([logs]).plot_png().startswith(b"\x89PNG\r\n\x1a\n")


def test_progress_is_shown_through_the_callback_given(logs: Path) -> None:
    steps: list[tuple[str, int | None]] = []

    def progress(
        items: Iterable[Item], description: str, total: int | None = None
    ) -> Iterator[Item]:
        steps.append((description, total))
        yield from items

    rank_models([logs], progress=progress)
    assert steps == [("reading log headers", 2)]
