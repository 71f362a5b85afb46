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

import re
import shutil
from pathlib import Path

COUNT_ENV = {"PYTHONHASHSEED": "0"}


def valgrind_available() -> bool:
    return shutil.which("valgrind") is not None


def counted(command: list[str], folder: Path) -> list[str]:
    """``command`` run under callgrind, its profile written into ``folder``."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.%p",
            *command]  # fmt: skip


def instructions_from(stderr: str) -> int:
    """The instruction count callgrind reports on stderr as the run ends."""
    found = re.search(r"Collected : (\d+)", stderr)
    if found is None:
        raise SystemExit(f"callgrind reported no instruction count:\n{stderr[-3000:]}")
    return int(found.group(1))
