"""A minimal reproduction, for an upstream Inspect report: what one short system prompt costs
Inspect per image sample, by the way a solver sends it.

No plugin code. N samples, each a user turn of one image (a file path) and a question,
mockllm answering every request with the same reply, logs written with ``--no-log-images``;
every variant rewrites the text part of the user turn first (what ``multiple_choice()`` and
this plugin's solver do), then:

- ``no_system``: ``generate()``;
- ``system_config``: ``generate(state, system_message=SYSTEM)``, the system prompt in the
  generation's config (this plugin's way);
- ``system_solver``: Inspect's own ``system_message(SYSTEM)`` solver before the rewrite (the
  message inserted at the head of ``state.messages``), then ``generate()``.

``SYSTEM`` is about as long as the plugin's MCQ system prompt. The model is sent
the same two messages either way. Each variant runs in its own process; wall and CPU time are
medians of alternating runs, log bytes per sample are read from the run's log.
``--instructions`` counts instructions instead (valgrind's callgrind, one run per variant at N
and at 10 samples; what one sample costs is the difference over the difference in samples):
the timings on a shared machine wander more than the differences here.

Usage: python perf/repro_system_prompt.py [--samples 1000] [--repeats 5]
       python perf/repro_system_prompt.py --instructions [--samples 100]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import instructions
from alternating import alternating_runs
from alternating import medians as median_of_runs
from bench_mcq import make_dataset, scripted_model

from inspect_medreason.files import write_text_atomically

SYSTEM = (
    "You are a careful medical imaging expert answering a multiple-choice question about one "
    "or more medical images. Base your choice on what the image shows. Reply with one JSON "
    "object and nothing else."
)
VARIANTS = ["no_system", "system_config", "system_solver"]
RESULTS = Path(__file__).parent / "results" / "repro_system_prompt.json"
SMALL = 10


def task(folder: Path, variant: str) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message

    @solver
    def rewrite_then_generate(with_system_config: bool) -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            content = state.user_prompt.content
            assert isinstance(content, list)
            content[-1] = ContentText(text=f"Question: {state.user_prompt.text}\nAnswer in JSON.")
            if with_system_config:
                return await generate(state, system_message=SYSTEM)
            return await generate(state)

        return solve

    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))["cases"]
    samples = []
    for case in cases:
        image = ContentImage(image=str(folder / case["image_path"]))
        turn = ChatMessageUser(content=[image, ContentText(text=case["question"])])
        samples.append(Sample(id=case["case_id"], input=[turn], target="A"))
    plan = [rewrite_then_generate(with_system_config=variant == "system_config")]
    if variant == "system_solver":
        plan.insert(0, system_message(SYSTEM))
    return Task(dataset=MemoryDataset(samples), solver=plan, scorer=match())


def run_child(variant: str, folder: Path) -> dict[str, float]:
    from inspect_ai import eval

    with tempfile.TemporaryDirectory() as logs:
        started, cpu_started = time.perf_counter(), time.process_time()
        [log] = eval(task(folder, variant), model=scripted_model(), display="none",
                     log_dir=logs, log_images=False)  # fmt: skip
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        if log.status != "success":
            raise SystemExit(f"{variant} run failed: {log.error}")
        log_bytes = sum(path.stat().st_size for path in Path(logs).glob("*.eval"))
        samples = len(log.samples or [])  # read from the log file: before it is removed
    return {"seconds": seconds, "cpu_seconds": cpu, "log_bytes_per_sample": log_bytes / samples}


def child_command(variant: str, folder: Path) -> list[str]:
    return [sys.executable, __file__, "--child", variant, "--folder", str(folder)]


def timed(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    def child(variant: str) -> dict[str, float]:
        out = subprocess.run(child_command(variant, folder), check=True, capture_output=True,
                             text=True)  # fmt: skip
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    subprocess.run(child_command("no_system", folder), check=True, capture_output=True)  # warm
    medians = median_of_runs(alternating_runs(VARIANTS, child, args.repeats))
    floor = medians["no_system"]
    return {
        "repeats": args.repeats,
        "statistic": "median",
        **medians,
        "ratio_vs_no_system": {
            variant: {key: round(medians[variant][key] / floor[key], 3) for key in floor}
            for variant in VARIANTS[1:]
        },
    }


def counted(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    counts: dict[str, dict[str, int]] = {}
    for size in (args.samples, SMALL):
        folder = tmp / f"data_{size}"
        make_dataset(folder, size, args.side)
        for variant in VARIANTS:
            _, count = instructions.run_counted(variant, child_command(variant, folder), tmp)
            counts.setdefault(variant, {})[str(size)] = count
            print(variant, size, count, flush=True)
    per_sample = {
        variant: round((sizes[str(args.samples)] - sizes[str(SMALL)]) / (args.samples - SMALL))
        for variant, sizes in counts.items()
    }
    return {
        "tool": "valgrind --tool=callgrind (instructions executed by the eval's process)",
        "small_samples": SMALL,
        "instructions": counts,
        "per_sample": per_sample,
        "per_sample_vs_no_system": {
            variant: round(per_sample[variant] / per_sample["no_system"], 3)
            for variant in VARIANTS[1:]
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="what a system prompt costs Inspect per sample")
    parser.add_argument("--samples", type=int, help="samples (default 1000; 100 with "
                        "--instructions)")  # fmt: skip
    parser.add_argument("--side", type=int, default=256, help="image side in pixels")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child, args.folder)))
        return
    if args.instructions and not instructions.valgrind_available():
        parser.error("--instructions needs valgrind (apt install valgrind)")
    args.samples = args.samples or (100 if args.instructions else 1000)
    with tempfile.TemporaryDirectory() as tmp:
        if args.instructions:
            measured = counted(args, Path(tmp))
        else:
            folder = Path(tmp) / "data"
            make_dataset(folder, args.samples, args.side)
            measured = timed(args, folder)
    previous = json.loads(args.output.read_text(encoding="utf-8")) if args.output.exists() else {}
    key = "instructions" if args.instructions else "timings"
    result = {**previous, key: {"samples": args.samples, "image_side": args.side,
                                "machine": platform.platform(),
                                "date": time.strftime("%Y-%m-%d"), **measured}}  # fmt: skip
    write_text_atomically(args.output, json.dumps(result, indent=2) + "\n", force=True)
    print(json.dumps(result[key], indent=2))


if __name__ == "__main__":
    main()
