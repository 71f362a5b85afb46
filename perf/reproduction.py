"""What the minimal reproductions for upstream Inspect reports share: each runs a few variants
of one bare Inspect task (no plugin code) on ``bench_mcq``'s image cases with a scripted
mockllm and ``--no-log-images``, each variant in its own process, and reports

- wall and CPU time and log bytes per sample, medians of alternating runs (after one
  warm-up run), with each variant's ratio to the first;
- with ``--instructions``, instructions per sample under valgrind's callgrind: one run per
  variant at N and at 10 samples, per sample = the difference over the difference in
  samples (the start-up, about 16.6 G instructions, drops out). Timings on a shared machine
  wander more than the differences these reproductions are about.

A script defines its variants and a ``task(folder, variant)`` builder and calls ``main``.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import instructions
from alternating import alternating_runs
from alternating import medians as median_of_runs
from bench_mcq import make_dataset, scripted_model

from inspect_medreason.files import write_text_atomically

SMALL = 10


@dataclass(frozen=True)
class Reproduction:
    """One reproduction: its variants (the first is the baseline), the task each runs and
    the script that runs a variant in a child process."""

    description: str
    variants: Sequence[str]
    task: Callable[[Path, str], Any]
    script: str

    @property
    def baseline(self) -> str:
        return self.variants[0]

    @property
    def results(self) -> Path:
        """``perf/results/<script name>.json``, read by ``report.py`` under that name."""
        return Path(self.script).parent / "results" / f"{Path(self.script).stem}.json"

    def child_command(self, variant: str, folder: Path) -> list[str]:
        return [sys.executable, self.script, "--child", variant, "--folder", str(folder)]


def run_child(reproduction: Reproduction, variant: str, folder: Path) -> dict[str, float]:
    from inspect_ai import eval

    with tempfile.TemporaryDirectory() as logs:
        started, cpu_started = time.perf_counter(), time.process_time()
        [log] = eval(reproduction.task(folder, variant), model=scripted_model(),
                     display="none", log_dir=logs, log_images=False)  # fmt: skip
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        if log.status != "success":
            raise SystemExit(f"{variant} run failed: {log.error}")
        log_bytes = sum(path.stat().st_size for path in Path(logs).glob("*.eval"))
        samples = len(log.samples or [])  # read from the log file: before it is removed
    return {"seconds": seconds, "cpu_seconds": cpu, "log_bytes_per_sample": log_bytes / samples}


def timed(reproduction: Reproduction, repeats: int, folder: Path) -> dict[str, Any]:
    def child(variant: str) -> dict[str, float]:
        out = subprocess.run(reproduction.child_command(variant, folder), check=True,
                             capture_output=True, text=True)  # fmt: skip
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    child(reproduction.baseline)  # warm-up: the file cache, compiled bytecode
    medians = median_of_runs(alternating_runs(reproduction.variants, child, repeats))
    floor = medians[reproduction.baseline]
    return {
        "repeats": repeats,
        "statistic": "median",
        **medians,
        f"ratio_vs_{reproduction.baseline}": {
            variant: {key: round(medians[variant][key] / floor[key], 3) for key in floor}
            for variant in reproduction.variants[1:]
        },
    }


def counted(reproduction: Reproduction, samples: int, side: int, tmp: Path) -> dict[str, Any]:
    counts: dict[str, dict[str, int]] = {}
    for size in (samples, SMALL):
        folder = tmp / f"data_{size}"
        make_dataset(folder, size, side)
        for variant in reproduction.variants:
            command = reproduction.child_command(variant, folder)
            _, count = instructions.run_counted(variant, command, tmp)
            counts.setdefault(variant, {})[str(size)] = count
            print(variant, size, count, flush=True)
    per_sample = {
        variant: round((sizes[str(samples)] - sizes[str(SMALL)]) / (samples - SMALL))
        for variant, sizes in counts.items()
    }
    baseline = reproduction.baseline
    return {
        "tool": "valgrind --tool=callgrind (instructions executed by the eval's process)",
        "small_samples": SMALL,
        "instructions": counts,
        "per_sample": per_sample,
        f"per_sample_vs_{baseline}": {
            variant: round(per_sample[variant] / per_sample[baseline], 3)
            for variant in reproduction.variants[1:]
        },
    }


def main(reproduction: Reproduction) -> None:
    parser = argparse.ArgumentParser(description=reproduction.description)
    parser.add_argument("--samples", type=int, help="samples (default 1000; 100 with "
                        "--instructions)")  # fmt: skip
    parser.add_argument("--side", type=int, default=256, help="image side in pixels")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", choices=reproduction.variants, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=reproduction.results)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(reproduction, args.child, args.folder)))
        return
    if args.instructions and not instructions.valgrind_available():
        parser.error("--instructions needs valgrind (apt install valgrind)")
    args.samples = args.samples or (100 if args.instructions else 1000)
    with tempfile.TemporaryDirectory() as tmp:
        if args.instructions:
            measured = counted(reproduction, args.samples, args.side, Path(tmp))
        else:
            folder = Path(tmp) / "data"
            make_dataset(folder, args.samples, args.side)
            measured = timed(reproduction, args.repeats, folder)
    previous = json.loads(args.output.read_text(encoding="utf-8")) if args.output.exists() else {}
    key = "instructions" if args.instructions else "timings"
    result = {**previous, key: {"samples": args.samples, "image_side": args.side,
                                "machine": platform.platform(),
                                "date": time.strftime("%Y-%m-%d"), **measured}}  # fmt: skip
    write_text_atomically(args.output, json.dumps(result, indent=2) + "\n", force=True)
    print(json.dumps(result[key], indent=2))
