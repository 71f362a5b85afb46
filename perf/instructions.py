"""Counting the instructions a benchmark run executes, under valgrind's callgrind.

Wall and CPU time on a shared machine wander by 15-30% between identical runs; the number of
instructions a process executes does not depend on the machine's speed, so it can resolve the
5-10% differences the benchmarks' bars are about. Each counted run gets a fixed hash seed
(string hashing otherwise changes dict and set work from run to run). What still varies is
what depends on time (how often an event loop wakes while waiting on a server, Inspect's
progress-display passes): run with the display off and repeat once to see the spread.
Valgrind makes a run about 30 times slower.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

COUNT_ENV = {"PYTHONHASHSEED": "0"}


def valgrind_available() -> bool:
    return shutil.which("valgrind") is not None


def run_counted(
    name: str, command: list[str], folder: Path, env: dict[str, str] | None = None
) -> tuple[str, int]:
    """Run ``command`` under callgrind (its profile written into ``folder``); its stdout and
    the number of instructions it executed. Stops the benchmark when the run fails."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.%p", *command],
        capture_output=True, text=True, check=False,
        env={**(os.environ if env is None else env), **COUNT_ENV},
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"{name}: callgrind reported no instruction count:\n{out.stderr[-3000:]}")
    return out.stdout, int(found.group(1))
