"""What each part of the MCQ task costs Inspect, counted: the plugin with one part taken out.

Each variant runs ``inspect_medreason/mcq`` on the same N image cases (``bench_mcq``'s), once
under valgrind's callgrind (``instructions.py``), after one uncounted run on the folder so no
counted run pays the first run's full decode of every image:

- ``plugin``: the task as shipped;
- ``no_system_prompt``: the solver sends no system message (the user turn as shipped);
- ``lean_sample``: sample metadata cut to what the solver and scorer cannot do without
  (``task_type``, ``question``, ``option_labels`` and the breakdown fields grouped metrics need);
- ``lean_score``: score metadata cut to the two keys the metrics read (``parsed``,
  ``strict_correct``);
- ``accuracy_only``: the task's metrics replaced by ``accuracy()`` (no breakdowns, interval
  or extraction metrics);
- ``all_out``: the four parts above out at once (what is left: the plugin's loading, solver
  and scorer, and the ``choices`` and prompt text every case carries);
- ``bare``: bare Inspect on the same cases (``bench_mcq``'s), for scale.

The parts are features (the system prompt, the case facts in the log, the breakdowns): this
script says what each costs, it does not argue for removing them. The differences are what a
part costs on N cases; divide by N for one case.

Usage: python perf/ablate_mcq.py [--cases 300]  (about 5 minutes per variant)
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_mcq
import instructions

from inspect_medreason.files import write_text_atomically

PARTS = ["no_system_prompt", "lean_sample", "lean_score", "accuracy_only"]
VARIANTS = ["plugin", *PARTS, "all_out", "bare"]
KEPT_SAMPLE_KEYS = {"task_type", "question", "option_labels", "modality", "organ_system", "task"}
RESULTS = Path(__file__).parent / "results" / "mcq_ablation.json"


def take_out(variant: str) -> None:
    """Patch the package so that the task runs without the variant's part (or parts)."""
    if variant == "all_out":
        for part in PARTS:
            take_out(part)
        return
    dataset: Any = importlib.import_module("inspect_medreason.medreason.dataset")
    scorer: Any = importlib.import_module("inspect_medreason.medreason.scorer")
    tasks: Any = importlib.import_module("inspect_medreason.medreason.medreason")
    solvers: Any = importlib.import_module("inspect_medreason.solvers")
    if variant == "no_system_prompt":
        from inspect_ai.solver import Generate, Solver, TaskState, solver

        @solver(name="medreason_prompt_without_system")
        def without_system() -> Solver:
            templates = solvers.TrackPrompts.load("mcq")

            async def solve(state: TaskState, generate: Generate) -> TaskState:
                solvers.replace_prompt_text(
                    state, solvers.render_case_prompt(
                        templates.user, state.metadata, [c.value for c in state.choices]
                    )
                )
                return await generate(state)

            return solve

        tasks.medreason_prompt = without_system
    elif variant == "lean_sample":
        build = dataset.record_to_sample

        def lean_sample(*args: Any, **kwargs: Any) -> Any:
            sample = build(*args, **kwargs)
            sample.metadata = {k: v for k, v in sample.metadata.items() if k in KEPT_SAMPLE_KEYS}
            return sample

        dataset.record_to_sample = lean_sample
    elif variant == "lean_score":
        from inspect_ai.scorer import Score

        score_reply = scorer.score_mcq_reply

        def lean_score(*args: Any, **kwargs: Any) -> Score:
            score = score_reply(*args, **kwargs)
            kept = {k: (score.metadata or {}).get(k) for k in ("parsed", "strict_correct")}
            return Score(value=score.value, answer=score.answer,
                         explanation=score.explanation, metadata=kept)  # fmt: skip

        scorer.score_mcq_reply = lean_score
    elif variant == "accuracy_only":
        from inspect_ai.scorer import accuracy

        build_task = tasks.medreason_task

        def accuracy_only(*args: Any, **kwargs: Any) -> Any:
            task = build_task(*args, **kwargs)
            task.metrics = [accuracy()]
            return task

        tasks.medreason_task = accuracy_only


def main() -> None:
    parser = argparse.ArgumentParser(description="what each part of the MCQ task costs")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        take_out(args.child)
        with tempfile.TemporaryDirectory() as logs:
            run = "bare" if args.child == "bare" else "plugin"
            print(json.dumps(bench_mcq.run_variant(run, args.folder, Path(logs))))
        return
    if not instructions.valgrind_available():
        parser.error("needs valgrind (apt install valgrind)")
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        bench_mcq.make_dataset(folder, args.cases, args.side)
        # An uncounted first run decodes every image once, as any first run on a folder does.
        subprocess.run([sys.executable, __file__, "--child", "plugin", "--folder", str(folder)],
                       check=True, capture_output=True)  # fmt: skip
        for variant in VARIANTS:
            command = [sys.executable, __file__, "--child", variant, "--folder", str(folder)]
            _, counts[variant] = instructions.run_counted(variant, command, Path(tmp))
            print(variant, counts[variant], flush=True)
    result = {
        "cases": args.cases,
        "image_side": args.side,
        "tool": "valgrind --tool=callgrind (instructions executed by the eval's process)",
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
        "instructions": counts,
        "saved_per_case": {
            variant: round((counts["plugin"] - counts[variant]) / args.cases)
            for variant in VARIANTS[1:-1]
        },
        "plugin_over_bare_per_case": round((counts["plugin"] - counts["bare"]) / args.cases),
        "all_out_over_bare_per_case": round((counts["all_out"] - counts["bare"]) / args.cases),
    }
    write_text_atomically(args.output, json.dumps(result, indent=2) + "\n", force=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
