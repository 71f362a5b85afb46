"""Time a run spends in the garbage collector's collections, by generation.

CPython pauses the program for each collection; a full (generation 2) collection walks every
tracked object still alive, so its cost grows with everything a run keeps in memory: the
modules Inspect imports, the samples in flight, the events buffered for the log. The bench
scripts report it beside the wall time because it is part of the harness floor that no
plugin code runs in, and because what a plugin keeps resident makes each full collection
longer for the whole run.

``gc.callbacks`` is called at the start and end of every collection; timing between them
adds two Python calls per collection (a few thousand per run), far below the measurement's
spread.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CollectionTimes:
    """Collections made and seconds spent in them, per generation (0, 1, 2)."""

    counts: list[int] = field(default_factory=lambda: [0, 0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds)

    def as_result(self) -> dict[str, float]:
        return {
            "gc_seconds": round(self.total_seconds, 3),
            "gc_full_collections": self.counts[2],
            "gc_full_seconds": round(self.seconds[2], 3),
        }


@contextmanager
def collections_timed() -> Iterator[CollectionTimes]:
    """Record every collection made inside the block."""
    times = CollectionTimes()
    started: list[float] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            generation = int(info["generation"])
            times.counts[generation] += 1
            times.seconds[generation] += time.perf_counter() - started.pop()

    gc.callbacks.append(record)
    try:
        yield times
    finally:
        gc.callbacks.remove(record)
