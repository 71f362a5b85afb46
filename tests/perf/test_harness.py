"""What the benchmarks share: alternating runs, medians, time in collections, child runs
and instruction counts."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


def test_variants_alternate_their_order_and_report_medians(
    perf_module: Callable[[str], ModuleType],
) -> None:
    harness = perf_module("harness")
    order: list[str] = []

    def run(variant: str) -> dict[str, float]:
        order.append(variant)
        return {"seconds": float(len(order)), "only_here": 1.0}

    runs = harness.alternating_runs(["a", "b", "c"], run, repeats=3)
    assert order == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    assert [r["seconds"] for r in runs["a"]] == [1.0, 6.0, 7.0]
    assert harness.medians(runs) == {
        "a": {"seconds": 6.0, "only_here": 1.0},
        "b": {"seconds": 5.0, "only_here": 1.0},
        "c": {"seconds": 4.0, "only_here": 1.0},
    }
    # a key no run reports is left out
    assert harness.medians(runs, ["seconds", "missing"])["a"] == {"seconds": 6.0}


def test_collections_are_timed_by_generation_and_the_hook_is_removed(
    perf_module: Callable[[str], ModuleType],
) -> None:
    harness = perf_module("harness")
    hooks_before = list(gc.callbacks)
    with harness.collections_timed() as times:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    assert gc.callbacks == hooks_before
    assert times.counts[0] >= 1 and times.counts[2] >= 2  # allocations may add collections
    assert times.seconds[2] > 0 and times.total_seconds >= times.seconds[2]
    recorded = list(times.counts)
    gc.collect(2)  # outside the block: not recorded
    assert times.counts == recorded
    result = times.as_result()
    assert result["gc_full_collections"] == times.counts[2]
    assert result["gc_seconds"] == round(times.total_seconds, 3)


def test_a_child_run_gives_its_last_json_line_or_stops_with_its_error(
    perf_module: Callable[[str], ModuleType],
) -> None:
    harness = perf_module("harness")
    printed = "print('warming up'); print('{\"seconds\": 1.5}')"
    assert harness.run_child("ok", [sys.executable, "-c", printed]) == {"seconds": 1.5}
    failing = "import sys; sys.exit('the eval failed')"
    with pytest.raises(SystemExit, match=r"broken failed:\n.*the eval failed"):
        harness.run_child("broken", [sys.executable, "-c", failing])


@pytest.mark.skipif(sys.platform != "linux", reason="valgrind runs on Linux")
def test_instructions_are_counted_under_callgrind(
    perf_module: Callable[[str], ModuleType], tmp_path: Path
) -> None:
    harness = perf_module("harness")
    if not harness.valgrind_available():
        pytest.skip("valgrind is not installed")
    stdout, count = harness.run_counted("true", ["/bin/true"], tmp_path)
    assert stdout == "" and count > 0
    with pytest.raises(SystemExit, match="false failed"):
        harness.run_counted("false", ["/bin/false"], tmp_path)
