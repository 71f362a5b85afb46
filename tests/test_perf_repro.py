"""The upstream reproduction in perf/ runs offline and reports both passes and their ratio."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_metrics_pass_reproduction_runs_and_reports_a_ratio() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "perf" / "repro_metrics_pass.py"), "--samples", "20"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    passes = re.findall(r"(4-key dictionary|float) score: one metrics pass over 20 samples: "
                        r"(\d+\.\d{3}) s", run.stdout)  # fmt: skip
    assert [name for name, _ in passes] == ["4-key dictionary", "float"]
    assert re.search(r"^ratio: \d+\.\dx$", run.stdout, re.M)
