"""Judged runs that the tests of the analyses read (never edit): built once per worker, for
the modules marked ``pytest.mark.xdist_group("analysis_runs")`` (one worker runs them all)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from utils.rated_logs import judged_log

CASES = 4


def one_lower(component: str, score: int) -> int:
    """The second model's judges: every score one lower than the first's (floor 0)."""
    return max(score - 1, 0)


@dataclass(frozen=True)
class TwoRuns:
    """Two models' judged open-ended runs of the same ``CASES`` cases, B scored lower."""

    folder: Path  # data/ (cases.json, ground_truth.json) and logs/ (both logs)
    a: Path  # mockllm/model's log
    b: Path  # mockllm/other's log

    @property
    def logs(self) -> Path:
        return self.folder / "logs"

    @property
    def data(self) -> Path:
        return self.folder / "data"


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> TwoRuns:
    folder = tmp_path_factory.mktemp("analysis_runs")
    a = judged_log(folder, CASES, model="mockllm/model")
    b = judged_log(folder, CASES, model="mockllm/other", distort=one_lower)
    return TwoRuns(folder, a, b)
