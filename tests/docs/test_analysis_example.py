"""docs/analysis.md's example runs as written: the README's quick start, then the page's
commands (the second judged run and its re-judging), then its Python in a plain interpreter
(no pytest, no ``medreason`` command), printing what the library computes from those logs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

from docs.test_readme_commands import README, readme_commands, rewrite

DOC = Path(__file__).resolve().parents[2] / "docs" / "analysis.md"
QUICK_START = re.compile(r"## Quick start\n.*?```bash\n(.*?)```", re.S)


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def quick_start() -> list[str]:
    match = QUICK_START.search(README.read_text(encoding="utf-8"))
    assert match is not None, "the README has a quick start"
    return [" ".join(line.split()) for line in match[1].replace("\\\n", " ").splitlines()]


def run(command: str, workdir: Path) -> None:
    argv = shlex.split(rewrite(command, "http://127.0.0.1:9/v1", workdir / "demo", workdir))
    program = "inspect_medreason.cli" if argv[0] == "medreason" else "inspect_ai"
    done = subprocess.run(
        [sys.executable, "-m", program, *argv[1:]],
        cwd=workdir,
        env={**os.environ, "INSPECT_LOG_DIR": str(workdir / "logs"), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])


def test_the_notebook_example_runs_on_the_logs_the_docs_make(tmp_path: Path) -> None:
    commands = [*quick_start(), *readme_commands(DOC)]
    assert any(c.startswith("inspect score") for c in commands)  # the re-judging is shown
    for command in commands:
        run(command, tmp_path)
    logs = list_eval_logs(str(tmp_path / "logs"))
    assert len(logs) == 3  # the quick start's two runs and the second judged run
    assert all(read_eval_log(log, header_only=True).status == "success" for log in logs)

    [example] = python_blocks(DOC)
    done = subprocess.run(
        [sys.executable, "-c", example],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # both models ranked
    assert "medreason/pipeline-check" in out and "medreason/image-sensitive" in out
    # the comparison: the image-sensitive model beats the first-option one on the MCQ cases
    mcq = re.search(r"MCQ Accuracy\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out)
    assert mcq is not None, out
    assert int(mcq[1]) == 18 and float(mcq[4]) > 0
    # the agreement: the two judgings of one run, then the judges against the reference file
    assert out.count("gt_final") == 2 and "mae" in out and "bias" in out
    assert (tmp_path / "reference_scores.json").stat().st_size > 0
    assert "refused: fewer than two raters" in out
    assert "True 28 answers" in out
