"""What each part of the judged scorer costs Inspect, counted: the plugin with one part out.

On ``bench_judge``'s open-ended cases and stand-in judge (a local OpenAI-compatible server
answering after ``--latency`` seconds), each variant runs once under valgrind's callgrind
(``instructions.py``), without the score display, like ``bench_judge.py --instructions``:

- ``plugin``: ``open_ended`` as shipped;
- ``lean_score``: the same judging, the score returned without metadata or explanation
  (the judges' records, cost and models are what is taken out);
- ``mean_only``: the task's metrics replaced by ``mean()`` per component (no stderr,
  bootstrap interval or breakdowns);
- ``lean_score_mean_only``: both;
- ``bare`` and ``no_score``: ``bench_judge``'s bare three-call scorer and unscored eval.

An uncounted first run decodes the folder's images (as any first run on a folder does), so
that no counted run carries that loading work. Judging one case is a variant's count minus
``no_score``'s, and with two sizes (10 and 100 cases by default) the difference between
them over the difference in cases, so that what a run pays once is not spread over its cases. The parts are
features (the record that lets a user audit every verdict, the intervals and breakdowns):
this says what each costs, it does not argue for removing them.

Usage: python perf/ablate_judge.py [--cases 10 100]  (about 7 minutes per variant)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_judge
import instructions

from inspect_medreason.files import write_text_atomically

VARIANTS = ["plugin", "lean_score", "mean_only", "lean_score_mean_only", "bare", "no_score"]
RESULTS = Path(__file__).parent / "results" / "judge_ablation.json"


def take_out(variant: str) -> None:
    """Patch the package so that the task runs without the variant's parts."""
    scorer: Any = importlib.import_module("inspect_medreason.medreason.scorer")
    tasks: Any = importlib.import_module("inspect_medreason.medreason.medreason")
    if "lean_score" in variant:
        from inspect_ai.scorer import Score

        judge_reply = scorer.score_open_reply

        async def lean_score(*args: Any, **kwargs: Any) -> Score:
            score = await judge_reply(*args, **kwargs)
            return Score(value=score.value, answer=score.answer)

        scorer.score_open_reply = lean_score
    if "mean_only" in variant:
        from inspect_ai.scorer import mean

        build_task = tasks.medreason_task

        def mean_only(*args: Any, **kwargs: Any) -> Any:
            task = build_task(*args, **kwargs)
            task.metrics = {name: [mean()] for name in scorer.open_ended_metrics()}
            return task

        tasks.medreason_task = mean_only


def count_variants(cases: int, side: int, base_url: str, connections: int) -> dict[str, int]:
    """Every variant counted once on a fresh folder of ``cases`` open cases."""
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        bench_judge.make_dataset(folder, cases, side)

        def child_command(variant: str) -> tuple[list[str], dict[str, str]]:
            """The variant's run in a fresh process, with a judge cache of its own."""
            command = [sys.executable, __file__, "--child", variant, "--folder", str(folder),
                       "--base-url", base_url, "--max-connections", str(connections)]  # fmt: skip
            env = {**os.environ, "INSPECT_CACHE_DIR": tempfile.mkdtemp(dir=tmp),
                   "INSPECT_DISPLAY": "none"}  # fmt: skip
            return command, env

        # Uncounted: decodes every image once (the decode record), so that no counted run
        # carries the loading work of a folder's first run.
        command, env = child_command("no_score")
        subprocess.run(command, check=True, capture_output=True, env=env)
        for variant in VARIANTS:
            command, env = child_command(variant)
            _, counts[variant] = instructions.run_counted(variant, command, Path(tmp), env)
            print(cases, variant, counts[variant], flush=True)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description="what each part of the judged scorer costs")
    parser.add_argument("--cases", type=int, nargs="+", default=[10, 100],
                        help="one size, or two (one case = the difference between them)")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-connections", type=int, default=30)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    os.environ["BENCH_JUDGE_SCORE_DISPLAY"] = "0"  # as bench_judge's counted runs
    if args.child:
        take_out(args.child)
        run = args.child if args.child in {"bare", "no_score"} else "plugin"
        ran = bench_judge.run_variant(run, args.folder, args.base_url, args.max_connections)
        print(json.dumps(ran))
        return
    if not instructions.valgrind_available():
        parser.error("needs valgrind (apt install valgrind)")
    server = subprocess.Popen(
        [sys.executable, bench_judge.__file__, "--serve", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    counts: dict[int, dict[str, int]] = {}
    try:
        assert server.stdout is not None
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        for size in sorted(set(args.cases)):
            counts[size] = count_variants(size, args.side, base_url, args.max_connections)
    finally:
        server.terminate()
        server.wait(timeout=10)
    per_case = {v: bench_judge.judging_per_case(counts, v) for v in VARIANTS[:-1]}
    result: dict[str, Any] = {
        "cases": sorted(counts),
        "latency_seconds": args.latency,
        "max_connections": args.max_connections,
        "tool": "valgrind --tool=callgrind (instructions executed by the eval's process)",
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
        "instructions": {str(size): by_variant for size, by_variant in counts.items()},
        "judging_per_case": per_case,
        "judging_vs_bare": {v: round(per_case[v] / per_case["bare"], 3) for v in per_case},
    }
    write_text_atomically(args.output, json.dumps(result, indent=2) + "\n", force=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
