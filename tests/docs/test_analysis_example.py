"""docs/analysis.md's example runs as written, in a plain Python interpreter (no pytest, no
``medreason`` command), on two judged runs of the same cases, and prints what the library
computes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from utils.rated_logs import judged_log

DOC = Path(__file__).resolve().parents[2] / "docs" / "analysis.md"
CASES = 8


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def test_the_notebook_example_runs_in_a_plain_interpreter(tmp_path: Path) -> None:
    [example] = python_blocks(DOC)
    logs = tmp_path / "work" / "logs"
    logs.mkdir(parents=True)
    for name, model in (("a", "mockllm/model"), ("b", "mockllm/other")):
        log = judged_log(tmp_path / name, CASES, model=model)
        shutil.copy(log, logs / f"{name}_{log.name}")
    done = subprocess.run(
        [sys.executable, "-c", example],
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "mockllm/model" in out and "mockllm/other" in out  # both models ranked
    assert "Open-ended GT" in out and "difference" in out  # the comparison's table
    assert "gt_final" in out and "kappa" in out  # the agreement's table
    assert "refused: fewer than two raters" in out
    assert f"True {CASES} answers" in out
    assert (tmp_path / "work" / "reference_scores.json").stat().st_size > 0
