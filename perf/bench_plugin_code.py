"""What the MCQ task's own code costs per case, outside Inspect's run loop.

On ``bench_mcq``'s N image cases (after one uncounted load, as on every run after a
folder's first, whose images are then decoded in full once), times with ``perf_counter``,
medians of R repeats:

- ``load``: ``inspect_medreason/mcq`` built on the folder and its dataset read (reading and
  validating cases.json and ground_truth.json, confining and checking every image, building
  every sample);
- ``prompt``: the solver's prompt rendered for every sample;
- ``score``: ``bench_mcq``'s reply read and scored for every sample.

Each is reported per case beside bare Inspect's wall time per case in
``perf/results/mcq.json`` (measured there on the same cases, with a mock model): the share
of a case that is the plugin's own code.

Usage: python perf/bench_plugin_code.py [--cases 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_mcq import REPLY, make_dataset

from inspect_medreason.files import write_text_atomically

RESULTS = Path(__file__).parent / "results"


def median_seconds(work: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(folder: Path, repeats: int) -> dict[str, float]:
    from inspect_medreason.medreason.medreason import mcq
    from inspect_medreason.medreason.scorer import score_mcq_reply
    from inspect_medreason.solvers import TrackPrompts, render_case_prompt

    def load() -> list[Any]:
        return list(mcq(data=str(folder)).dataset)

    samples = load()  # the uncounted first load: every image decoded in full once
    template = TrackPrompts.load("mcq").user

    def prompt() -> None:
        for sample in samples:
            render_case_prompt(template, sample.metadata, sample.choices or [])

    def score() -> None:
        for sample in samples:
            score_mcq_reply(REPLY, sample.metadata, str(sample.target), sample.choices or [])

    return {name: median_seconds(work, repeats)
            for name, work in (("load", load), ("prompt", prompt), ("score", score))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description="the MCQ task's own code per case")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=RESULTS / "plugin_code.json")
    parser.add_argument("--mcq-results", type=Path, default=RESULTS / "mcq.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        make_dataset(folder, args.cases, args.side)
        seconds = measure(folder, args.repeats)
    per_case_us = {name: round(value / args.cases * 1e6, 2) for name, value in seconds.items()}
    result: dict[str, Any] = {
        "cases": args.cases,
        "repeats": args.repeats,
        "statistic": "median",
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
        "seconds": {name: round(value, 4) for name, value in seconds.items()},
        "per_case_us": per_case_us,
        "total_per_case_us": round(sum(per_case_us.values()), 2),
    }
    if args.mcq_results.is_file():
        bare = json.loads(args.mcq_results.read_text(encoding="utf-8"))
        bare_us = bare["bare"]["seconds"] / bare["cases"] * 1e6
        result["bare_inspect_per_case_us"] = round(bare_us, 1)
        result["share_of_bare_case"] = round(result["total_per_case_us"] / bare_us, 4)
    write_text_atomically(args.output, json.dumps(result, indent=2) + "\n", force=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
