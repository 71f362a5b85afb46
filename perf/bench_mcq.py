"""Wall time, peak memory and log size of the MCQ task against bare Inspect.

Generates N image cases (random-noise PNGs, so they do not compress away) in the official
layout, then runs, each in a fresh process so that peak RSS is its own, alternating the
variants on every repeat:

- ``bare``: a plain Inspect Task over the same images as file-path ``ContentImage``s, the
  question text, ``generate()`` and ``match()``: the floor any plugin sits on;
- ``multiple_choice``: Inspect's own ``multiple_choice()`` solver and ``choice()`` scorer
  over the same samples with ``choices``;
- ``load_time_prompt``: the plugin's task as it was before its prompt became a solver:
  every sample's prompt rendered when the dataset loads (the system message first, the
  track's user text in place of the question, as the plugin renders them) and a bare
  ``generate()``; the same cases, metadata, scorer and metrics. What the solver costs (or
  saves) is the plugin's time over this one;
- ``plugin``: ``inspect_medreason/mcq`` on the cases.json (validation and full decoding of
  every case and image, the ``medreason_prompt`` solver, robust extraction, metrics with
  breakdowns).

All use mockllm answering every request with the same JSON reply (usage set, so no
tokenizer is touched) and write logs without images (``--no-log-images``), whose bytes per
sample are reported, and each run's CPU time (user and system, this process): it follows
the wall time within 1% (the runs are CPU-bound), which shows that the 15% spread between
identical runs on a shared machine is the machine's speed, not waiting. Medians over the
repeats, after one untimed plugin run that decodes every image in full once (every run
after a folder's first skips it; ``--instructions`` counts both). Each run also reports
the time spent in the garbage collector's collections (``harness.py``): a part of
every variant's wall time that no plugin code runs in, and that grows with what a run keeps
in memory.

``--instructions`` runs each variant once under valgrind's callgrind and counts the
instructions it executes (``perf/results/mcq_instructions.json``, see ``harness.py``):
the count does not move with the machine's speed, so it resolves the 5% the bar is about.
The plugin is counted twice on the same folder: its first run decodes every image in full
(once per folder and file version, kept in the decode record), later runs do not; the
load-time variant is counted after them. Each
variant is also counted on 10 cases, so that what one case costs (the difference over the
difference in cases) is reported beside the whole runs: the start-up is about 16 G
instructions of any run, so a whole run's ratio understates what a large run pays per case.
Valgrind makes a run about 30 times slower, so 300 cases is the default size there (the
whole count takes about 25 minutes).

Usage: python perf/bench_mcq.py [--cases 2000] [--repeats 3]
       python perf/bench_mcq.py --instructions [--cases 300]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

REPLY = '{"reasoning_trace": "benchmark", "answer": "A"}'
VARIANTS = ["bare", "multiple_choice", "load_time_prompt", "plugin"]
MEASURES = (
    "seconds",
    "cpu_seconds",
    "peak_rss_mib",
    "log_bytes_per_sample",
    "gc_seconds",
    "gc_full_collections",
)
SMALL_CASES = 10  # the counted runs' second size: per case = difference / difference in cases
make_dataset = harness.make_image_cases


def scripted_model() -> Any:
    return harness.scripted_model(REPLY)


def bare_task(folder: Path, with_choices: bool = False) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    cases = json.loads((folder / "cases.json").read_text())["cases"]
    truth = {
        t["case_id"]: t["answer"]
        for t in json.loads((folder / "ground_truth.json").read_text())["cases"]
    }
    samples = [
        Sample(
            id=case["case_id"],
            input=[
                ChatMessageUser(
                    content=[
                        ContentImage(image=str(folder / case["image_path"])),
                        ContentText(text=case["question"]),
                    ]
                )
            ],
            target=truth[case["case_id"]],
        )
        for case in cases
    ]
    if not with_choices:
        return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match())
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    for sample in samples:
        sample.choices = ["first", "second", "third", "fourth"]
    return Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())


def load_time_prompt_task(folder: Path) -> Any:
    """``inspect_medreason/mcq`` with every prompt rendered when the dataset loads (the
    design before the ``medreason_prompt`` solver) and a bare ``generate()``."""
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ChatMessageSystem, ContentText
    from inspect_ai.solver import generate

    from inspect_medreason.core.solvers import TrackPrompts, render_case_prompt
    from inspect_medreason.medreason.medreason import mcq

    task = mcq(data=str(folder))
    prompts = TrackPrompts.load("mcq")
    samples = []
    for sample in task.dataset:
        assert isinstance(sample.input, list) and sample.metadata is not None
        [turn] = sample.input
        assert isinstance(turn.content, list)
        text = render_case_prompt(prompts.user, sample.metadata, sample.choices or [])
        images = [part for part in turn.content if not isinstance(part, ContentText)]
        turn.content = [*images, ContentText(text=text)]
        sample.input = [ChatMessageSystem(content=prompts.system.text.strip()), turn]
        samples.append(sample)
    task.dataset = MemoryDataset(samples, name=task.dataset.name)
    task.solver = generate()
    return task


def run_variant(variant: str, folder: Path, log_dir: Path) -> dict[str, float]:
    from inspect_ai import eval

    started, cpu_started = time.perf_counter(), time.process_time()
    with harness.collections_timed() as collections:
        if variant in ("bare", "multiple_choice"):
            task: Any = bare_task(folder, with_choices=variant == "multiple_choice")
        elif variant == "load_time_prompt":
            task = load_time_prompt_task(folder)
        else:
            from inspect_medreason.medreason.medreason import mcq

            task = mcq(data=str(folder))
        [log] = eval(
            task, model=scripted_model(), display="none", log_dir=str(log_dir), log_images=False
        )
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    harness.require_success(variant, log)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    log_bytes = sum(p.stat().st_size for p in log_dir.glob("*.eval"))
    samples = len(log.samples or [])
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "peak_rss_mib": peak_kib / 1024,
        "log_bytes_per_sample": log_bytes / samples,
        **collections.as_result(),
    }


def count_instructions(args: argparse.Namespace) -> dict[str, Any]:
    """One run of each variant under callgrind, in the same order as a repeat of the timings;
    then the plugin again on the same folder (its images already decoded in full once, as on
    every run after a folder's first), and every variant on a small folder: the difference
    over the cases between the two sizes is what one case costs, the ratio a large run
    tends to."""
    counts: dict[str, dict[str, int]] = {"full": {}, "small": {}}
    sizes = {"full": args.cases, "small": SMALL_CASES}
    with tempfile.TemporaryDirectory() as tmp:
        for size, cases in sizes.items():
            folder = Path(tmp) / f"data_{size}"
            make_dataset(folder, cases, args.side)
            # The plugin first (its first run on the folder decodes every image in full),
            # then again, then the load-time variant, which reads the same folder.
            for variant in ["bare", "multiple_choice", "plugin", "plugin", "load_time_prompt"]:
                name = "plugin_again" if variant in counts[size] else variant
                command = [sys.executable, __file__, "--child", variant, "--folder", str(folder)]
                _, counts[size][name] = harness.run_counted(name, command, Path(tmp))
                print(size, name, counts[size][name], flush=True)
    full, small = counts["full"], counts["small"]
    per_case = {
        name: round((full[name] - small[name]) / (args.cases - SMALL_CASES)) for name in full
    }
    return {
        "cases": args.cases,
        "small_cases": SMALL_CASES,
        "image_side": args.side,
        "tool": harness.CALLGRIND,
        **harness.stamp(),
        "instructions": full,
        "instructions_small": small,
        "per_case": per_case,
        "ratio_vs_bare": round(full["plugin"] / full["bare"], 3),
        "ratio_vs_multiple_choice": round(full["plugin"] / full["multiple_choice"], 3),
        "again_ratio_vs_bare": round(full["plugin_again"] / full["bare"], 3),
        "per_case_ratio_vs_bare": round(per_case["plugin_again"] / per_case["bare"], 3),
        "per_case_ratio_vs_multiple_choice": round(
            per_case["plugin_again"] / per_case["multiple_choice"], 3
        ),
        "per_case_ratio_vs_load_time_prompt": round(
            per_case["plugin_again"] / per_case["load_time_prompt"], 3
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="MCQ task vs bare Inspect")
    parser.add_argument("--cases", type=int, help="cases (default 2000; 300 with --instructions)")
    parser.add_argument("--side", type=int, default=256, help="image side in pixels")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count each variant's instructions under valgrind (one run each)",
    )
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    if args.cases is None:
        args.cases = 300 if args.instructions else 2000
    if args.output is None:
        args.output = harness.RESULTS / (
            "mcq_instructions.json" if args.instructions else "mcq.json"
        )
    if args.instructions and not harness.valgrind_available():
        parser.error("--instructions needs valgrind (apt install valgrind)")

    if args.child:
        with tempfile.TemporaryDirectory() as logs:
            print(json.dumps(run_variant(args.child, args.folder, Path(logs))))
        return

    if args.instructions:
        harness.write_result(args.output, count_instructions(args))
        return

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        make_dataset(folder, args.cases, args.side)
        image_bytes = sum(p.stat().st_size for p in (folder / "images").iterdir())

        def child(variant: str) -> dict[str, float]:
            command = [sys.executable, __file__, "--child", variant, "--folder", str(folder)]
            return harness.run_child(variant, command)

        # An uncounted first run decodes every image in full once (kept in the decode
        # record), as any run after a folder's first: no timed run of the two variants that
        # load through the plugin pays it.
        child("plugin")
        runs = harness.alternating_runs(VARIANTS, child, args.repeats)

    result: dict[str, Any] = {
        "cases": args.cases,
        "image_side": args.side,
        "mean_image_kib": round(image_bytes / args.cases / 1024, 1),
        "repeats": args.repeats,
        "statistic": "median",
        **harness.stamp(),
        **harness.medians(runs, MEASURES),
    }
    plugin = result["plugin"]
    for baseline in ("bare", "multiple_choice", "load_time_prompt"):
        for key, name in (
            ("seconds", "time"),
            ("cpu_seconds", "cpu"),
            ("peak_rss_mib", "memory"),
            ("log_bytes_per_sample", "log"),
            ("gc_seconds", "gc"),
        ):
            result[f"{name}_ratio_vs_{baseline}"] = round(plugin[key] / result[baseline][key], 3)
    harness.write_result(args.output, result)


if __name__ == "__main__":
    main()
