"""Progress bars for long work in the ``medreason`` command (rich, as Inspect's display).

Shown on standard error when it is a terminal; ``MEDREASON_PROGRESS=1`` forces them (for a
log file or a CI console), ``MEDREASON_PROGRESS=0`` turns them off.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")


def progress_enabled() -> bool:
    setting = os.environ.get("MEDREASON_PROGRESS", "").strip().lower()
    if setting in {"0", "false", "no", "off"}:
        return False
    return setting in {"1", "true", "yes", "on"} or sys.stderr.isatty()


def track(items: Iterable[Item], description: str, total: int | None = None) -> Iterator[Item]:
    """Yield ``items``, drawing a progress bar of ``total`` steps while they are consumed."""
    if not progress_enabled():
        yield from items
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(
        stderr=True, force_terminal=True if os.environ.get("MEDREASON_PROGRESS") else None
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)
