"""Each family's ``eval.yaml`` is the one source of its tasks' version (inspect_evals'
convention: ``N-X``, the number bumped when results stop being comparable, the letter for
changes that keep them comparable), read when the task module is imported."""

from __future__ import annotations

from pathlib import Path

import yaml


def family_version(task_module_file: str) -> str:
    """The ``version`` of the eval.yaml beside a family's task module (pass ``__file__``)."""
    path = Path(task_module_file).parent / "eval.yaml"
    return str(yaml.safe_load(path.read_text(encoding="utf-8"))["version"])
