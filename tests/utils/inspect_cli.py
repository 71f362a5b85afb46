"""Inspect's own command line run as a child process, as a user runs it: an environment
that no INSPECT_* variable of the test run steers (but the test's own cache folders), and
a run that must succeed."""

from __future__ import annotations

import os
import subprocess
import sys


def child_env(**extra: str) -> dict[str, str]:
    """The test process's environment less every INSPECT_* variable, with its cache folders,
    no colour, the stub server's key and ``extra``."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")},
        "NO_COLOR": "1",
        "INSPECT_MEDREASON_CACHE_DIR": os.environ["INSPECT_MEDREASON_CACHE_DIR"],
        "INSPECT_CACHE_DIR": os.environ["INSPECT_CACHE_DIR"],
        "STUB_API_KEY": "stub",
        **extra,
    }


def run_inspect(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``inspect <arguments> --display plain``, which must exit 0 (its stderr's end shown)."""
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", *arguments, "--display", "plain"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done
