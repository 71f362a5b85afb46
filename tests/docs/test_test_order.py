"""CONTRIBUTING.md's 'Test order': the fast tests run shuffled, every run prints its seed
(even under -q), and the printed option replays that order exactly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED_LINE = re.compile(
    r"^test order: shuffled by pytest-randomly, seed (\d+); replay it with --randomly-seed=(\d+) ",
    re.M,
)


def pytest_run(*arguments: str) -> str:
    """A pytest run of the project's own tests in a subprocess (its own cache folder off, so
    that nothing is written into the repository): what it printed."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout


def collected_order(seed: str) -> list[str]:
    printed = pytest_run("--collect-only", "-q", "-n", "0", f"--randomly-seed={seed}", "tests/core")
    return [line for line in printed.splitlines() if "::" in line]


def test_a_printed_seed_replays_the_same_order_and_another_seed_shuffles() -> None:
    first, again, other = collected_order("1234"), collected_order("1234"), collected_order("99")
    assert len(first) > 200
    assert first == again
    assert sorted(first) == sorted(other) and first != other
    written = pytest_run("--collect-only", "-q", "-n", "0", "-p", "no:randomly", "tests/core")
    assert [line for line in written.splitlines() if "::" in line] != first


def test_every_run_prints_its_seed_at_the_start_and_the_end_even_under_q() -> None:
    printed = pytest_run("-q", "-n", "2", "tests/core/test_strict_json.py")
    lines = SEED_LINE.findall(printed)
    assert len(lines) == 2 and lines[0] == lines[1] and lines[0][0] == lines[0][1], printed
    seed = lines[0][0]
    assert printed.index(f"seed {seed}") < printed.index("passed")
    replayed = pytest_run(
        "-q", "-n", "0", f"--randomly-seed={seed}", "tests/core/test_strict_json.py"
    )
    assert SEED_LINE.findall(replayed)[0][0] == seed
    unshuffled = pytest_run("-q", "-n", "0", "-p", "no:randomly", "tests/core/test_strict_json.py")
    assert "test order: as written (pytest-randomly is not active)" in unshuffled
