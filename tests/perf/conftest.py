"""The perf scripts, imported and run as a user runs them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

PERF = Path(__file__).resolve().parents[2] / "perf"


@pytest.fixture
def perf_module(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """``perf/<name>.py`` imported (the perf scripts import each other by bare name)."""
    monkeypatch.syspath_prepend(str(PERF))
    return importlib.import_module


@pytest.fixture
def perf_script() -> Callable[..., str]:
    """``perf_script(script, *args)`` runs ``python perf/<script> args`` and gives its
    stdout, once it has exited 0."""

    def run_script(script: str, *args: str) -> str:
        run = subprocess.run(
            [sys.executable, str(PERF / script), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert run.returncode == 0, run.stdout + run.stderr[-5000:]
        return run.stdout

    return run_script
