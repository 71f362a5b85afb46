"""Load time and peak memory growth of the MedReason dataset at 1k, 10k and 100k cases.

Writes one cases.json per size whose cases share a fixed set of image files (several
hundred small PNGs), then, in a fresh process per size, times ``build_dataset`` (read,
validate, resolve and confine every path, decode every distinct image, build the samples)
and reports the growth of peak RSS over the process's state before loading. The decode
record is pointed at an empty folder each time, so every distinct file is decoded (a cold
run). The ratio printed is the time per case at the largest size over the time per case at
the smallest: 1.0 is perfectly linear.

Usage: python perf/bench_load.py [--sizes 1000 10000 100000] [--images 300]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import harness

RESULTS = harness.RESULTS / "load.json"


def make_dataset(folder: Path, count: int, images: int) -> None:
    """Half MCQ, half open cases (two images each) on ``images`` shared 64-pixel PNGs."""
    harness.noise_images(folder, images)
    cases = []
    for index in range(count):
        case_id = f"case_{index:06d}"
        if index % 2:
            case = {
                "case_id": case_id,
                "task_type": "mcq",
                "question": f"Which finding is shown? ({case_id})",
                "image_path": f"images/img_{index % images:04d}.png",
                "options": ["first", "second", "third", "fourth"],
                "answer": "ABCD"[index % 4],
                "metadata": {
                    "modality": ["CT", "MRI", "X-ray"][index % 3],
                    "organ_system": "Chest",
                },
            }
        else:
            case = {
                "case_id": case_id,
                "task_type": "open",
                "question": f"Describe the finding. ({case_id})",
                "image_paths": [
                    f"images/img_{index % images:04d}.png",
                    f"images/img_{(index + 1) % images:04d}.png",
                ],
                "answer": "A small nodule in the right upper lobe.",
                "metadata": {"modality": "CT", "organ_system": "Chest"},
            }
        cases.append(case)
    (folder / "cases.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")


def child(folder: Path) -> None:
    from inspect_medreason.medreason.dataset import build_dataset

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    dataset, _ = build_dataset(folder, None, {"mcq", "open"})
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Samples are built when Inspect reads them: one full pass is what each of Inspect's
    # reads of the dataset at the start of a run costs.
    start = time.perf_counter()
    ids = sum(1 for sample in dataset if sample.id is not None)
    read_seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_growth_mib": (after - before) / 1024,
                "samples": ids,
                "read_all_seconds": read_seconds,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="dataset load time and memory by size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    sizes: dict[str, dict[str, float]] = {}
    results: dict[str, object] = {**harness.stamp(), "images": args.images, "sizes": sizes}
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            folder = Path(scratch) / f"n{size}"
            make_dataset(folder, size, args.images)
            env = {**os.environ, "INSPECT_MEDREASON_CACHE_DIR": str(Path(scratch) / f"c{size}")}
            command = [sys.executable, __file__, "--child", str(folder)]
            measured = harness.run_child(f"{size} cases", command, env)
            sizes[str(size)] = measured
            print(
                f"{size:>7} cases: load {measured['seconds']:.2f} s, "
                f"+{measured['peak_growth_mib']:.0f} MiB peak; one read of every sample "
                f"{measured['read_all_seconds']:.2f} s"
            )
    ordered = sorted(args.sizes)
    small, large = str(ordered[-2] if len(ordered) > 1 else ordered[0]), str(ordered[-1])
    per_case = {k: sizes[k]["seconds"] / int(k) for k in (small, large)}
    results["linearity_ratio"] = round(per_case[large] / per_case[small], 3)
    print(f"time per case at {large} / at {small}: {results['linearity_ratio']}")
    harness.write_result(args.output, results)


if __name__ == "__main__":
    main()
