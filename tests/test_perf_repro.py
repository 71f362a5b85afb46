"""The upstream reproduction in perf/ runs offline and reports both passes and their ratio."""

from __future__ import annotations

import json
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


def test_the_reply_parser_bench_runs_every_parser_and_reports_no_failure(tmp_path: Path) -> None:
    output = tmp_path / "parsers.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "perf" / "bench_parsers.py"), "--size", "2000",
         "--output", str(output)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"^14 parsers x \d+ replies: 0 failure\(s\)$", run.stdout, re.M)
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["reply_chars"] == 2000 and len(result["parsers"]) == 14
    assert all(row["failures"] == [] and row["worst_reply"] for row in result["parsers"].values())
