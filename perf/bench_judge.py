"""Open-ended judging against a judge with a fixed latency: the plugin's scorer, a bare
Inspect scorer making the same three calls, and the latency floor.

Generates N open-ended image cases (random-noise PNGs), starts an OpenAI-compatible judge on
127.0.0.1 in its own process (aiohttp; every reply after ``--latency`` seconds, a valid
``{"score", "rationale"}``), and runs, each in a fresh process, alternating the order on
every repeat, the ``open_ended`` task's dataset and solver (mockllm as the model under test)
with:

- ``plugin``: ``open_ended_scorer`` with its defaults (structured output, no judge cache);
- ``plugin_cache``: the same with ``judge_cache=true`` (a fresh cache folder per run, so no
  run is served from an earlier one): what Inspect's model cache costs;
- ``bare``: a scorer that sends the same three requests per case concurrently with
  ``get_model(role=...).generate`` and reads the score with ``json.loads``: the harness floor;
- ``no_score``: the same eval with ``score=False``: start-up, dataset and generation.

``grader`` and ``vision_grader`` are bound to one judge model on one server, so all judge
calls share one connection pool of ``--max-connections``. The latency floor is
``no_score + ceil(3N / C) * latency``. After each scored run, one metrics pass over all
its scores is timed with Inspect's ``recompute_metrics`` (``metrics_pass_seconds``): what
each of Inspect's progress-display passes costs at the end of the run. Medians over the
repeats, of wall time and of the run's CPU time (this process; the judge runs in its own:
it follows the wall time, so the runs are CPU-bound and their spread is the machine's speed);
results in ``perf/results/judge.json``.

``--instructions`` runs the unscored eval, the bare scorer and the plugin once each under
valgrind's callgrind and counts the instructions each executes (``perf/results/
judge_instructions.json``, see ``harness.py``): unlike wall or CPU time, the count does
not move with the machine's speed, so it can show a 5-10% difference that the timings'
15-30% spread hides. Counted runs go without the score display (its passes are spaced in
time, and valgrind's slowdown would change how many there are). Valgrind makes a run about 30
times slower, so 10 and 100 cases are the default sizes there: one case's judging is the
difference between them over 90 cases, without what a run pays once. An uncounted first run
decodes the folder's images, so that no counted run carries that loading work.

Usage: python perf/bench_judge.py [--cases 300 1000] [--repeats 3] [--latency 0.2]
       python perf/bench_judge.py --cases 300 --repeats 1 --profile plugin  (cProfile top 40)
       python perf/bench_judge.py --instructions [--cases 10 100]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

VARIANTS = ["plugin", "plugin_cache", "bare", "no_score"]
JUDGE_REPLY = '{"score": 3, "rationale": "The answer matches the image."}'
MODEL_REPLY = '{"reasoning_trace": "A round opacity in the left lobe.", "answer": "A nodule."}'
RESULTS = harness.RESULTS / "judge.json"
INSTRUCTION_RESULTS = harness.RESULTS / "judge_instructions.json"
COUNTED_VARIANTS = ["no_score", "bare", "plugin"]


def serve(latency: float) -> None:
    """The judge: every chat completion answered after ``latency`` seconds (keep-alive)."""
    import asyncio

    from aiohttp import web

    async def chat(request: web.Request) -> web.Response:
        await request.read()  # not parsed: the judge's CPU must not compete with the eval's
        await asyncio.sleep(latency)
        return web.json_response(
            {
                "id": "judge",
                "object": "chat.completion",
                "created": 0,
                "model": "judge",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": JUDGE_REPLY},
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def run() -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


def make_dataset(folder: Path, count: int, side: int) -> None:
    """Open-ended cases, each on its own noise PNG."""
    harness.make_image_cases(folder, count, side, task_type="open")


def bare_scorer() -> Any:
    """Three judge calls per case, concurrent, with the plugin's own requests: nothing else."""
    from inspect_ai.model import get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import TaskState
    from inspect_ai.util import collect

    from inspect_medreason.core.extraction import parse_open_reply
    from inspect_medreason.core.judges import JudgeSettings, JudgeTemplates, judge_messages
    from inspect_medreason.medreason.image_folder import ImageFolder
    from inspect_medreason.medreason.scorer import case_image_uris

    templates = JudgeTemplates.load()
    config = JudgeSettings().generate_config()  # the same requests: messages and config
    # The images are the ones Inspect put in the input; no folder is read.
    no_folder = ImageFolder(None, "none: the images are in the input")

    @scorer(metrics=[mean()])
    def three_calls() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            reply = parse_open_reply(state.output.completion)
            images = await case_image_uris(state, no_folder)
            question = str(state.metadata["question"])
            reference = state.metadata.get("reference_answer")
            requests = [
                (
                    "grader",
                    judge_messages(
                        "gt", templates, question, None, reply.answer, reference, images
                    ),
                ),
                (
                    "vision_grader",
                    judge_messages(
                        "va", templates, question, None, reply.answer, reference, images
                    ),
                ),
                (
                    "vision_grader",
                    judge_messages(
                        "rvf", templates, question, None, reply.reasoning_trace, reference, images
                    ),
                ),
            ]
            outputs = await collect(
                *(
                    get_model(role=role).generate(messages, config=config)
                    for role, messages in requests
                )
            )
            return Score(
                value=statistics.mean(json.loads(output.completion)["score"] for output in outputs)
            )

        return score

    return three_calls()


def run_variant(variant: str, folder: Path, base_url: str, connections: int) -> dict[str, float]:
    from inspect_ai import Task, eval
    from inspect_ai.model import get_model

    from inspect_medreason.medreason.medreason import open_ended

    judge = get_model("openai-api/bench/judge", base_url=base_url, api_key="bench")
    with tempfile.TemporaryDirectory() as logs:
        logs = os.environ.get("BENCH_JUDGE_KEEP_LOGS", logs)
        started, cpu_started = time.perf_counter(), time.process_time()
        with harness.collections_timed() as collections:
            task = open_ended(data=str(folder), judge_cache=variant == "plugin_cache")
            if variant.startswith("bare"):
                task = Task(dataset=task.dataset, solver=task.solver, scorer=bare_scorer())
            [log] = eval(
                task,
                model=harness.scripted_model(MODEL_REPLY),
                model_roles={"grader": judge, "vision_grader": judge},
                max_connections=connections,
                score=variant != "no_score",
                score_display=os.environ.get("BENCH_JUDGE_SCORE_DISPLAY", "1") == "1",  # --help
                display="none",
                log_dir=logs,
                log_images=False,
            )
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        harness.require_success(variant, log)
        log_bytes = Path(log.location).stat().st_size  # this run's log (a kept folder holds more)
        samples = log.eval.dataset.samples or 1
        result = {
            "seconds": elapsed,
            "cpu_seconds": cpu,
            "log_bytes_per_sample": log_bytes / samples,
            **collections.as_result(),
        }
        if variant != "no_score":
            check_scores(variant, log)
            result["metrics_pass_seconds"] = metrics_pass_seconds(log)
    return result


def metrics_pass_seconds(log: Any) -> float:
    """One metrics pass over every score of the run, timed with Inspect's public
    ``recompute_metrics``: Inspect makes such a pass for its progress display, spaced at
    ten times its cost (so once it exceeds 0.09 s it takes a tenth of the run), and once at
    the end. The log's samples are read in first: the log ``eval()`` returns reads them
    from its file on first access (about 2 s for 1,000 judged cases), which is no part of
    a pass."""
    from inspect_ai.log import recompute_metrics

    if not all(sample.scores for sample in log.samples or []):
        raise SystemExit("a sample of the run has no score")
    started = time.perf_counter()
    recompute_metrics(log)
    return time.perf_counter() - started


def check_scores(variant: str, log: Any) -> None:
    """Every judge call must have produced a score (3 from the stand-in judge)."""
    assert log.results is not None
    scores = {score.name: score for score in log.results.scores}
    if "open_ended_scorer" in scores:  # a score per component, Inspect's count of unscored
        if any(scores[name].unscored_samples for name in ("gt_final", "va_answer", "rvf_trace")):
            raise SystemExit(f"{variant}: judge components went unscored")
        if scores["gt_final"].metrics["mean"].value != 3:
            raise SystemExit(f"{variant}: unexpected judge scores")
    elif [score.metrics["mean"].value for score in scores.values()] != [3]:
        raise SystemExit(f"{variant}: unexpected judge scores")


def main() -> None:
    parser = argparse.ArgumentParser(description="open-ended judging vs the latency floor")
    parser.add_argument(
        "--cases",
        type=int,
        nargs="+",
        help="case counts (default 300 1000; 10 100 with --instructions)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2, help="judge latency, seconds")
    parser.add_argument("--max-connections", type=int, default=30)
    parser.add_argument("--side", type=int, default=256, help="image side in pixels")
    parser.add_argument("--profile", choices=VARIANTS, help="profile one run of a variant")
    parser.add_argument(
        "--no-score-display",
        action="store_true",
        help="run every variant with score_display=False (no metrics passes "
        "for Inspect's progress display)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count each variant's instructions under valgrind (one run each)",
    )
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    if args.cases is None:
        args.cases = [10, 100] if args.instructions else [300, 1000]
    if args.output is None:
        args.output = INSTRUCTION_RESULTS if args.instructions else RESULTS
    if args.instructions and not harness.valgrind_available():
        parser.error("--instructions needs valgrind (apt install valgrind)")

    # Counted runs go without the display: its passes are spaced in time, and valgrind's
    # slowdown would change how many there are.
    args.no_score_display = args.no_score_display or args.instructions
    if args.no_score_display:
        os.environ["BENCH_JUDGE_SCORE_DISPLAY"] = "0"  # inherited by the child runs
    if args.serve:
        serve(args.latency)
        return
    if args.child:
        print(json.dumps(run_variant(args.child, args.folder, args.base_url, args.max_connections)))
        return

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        result = (
            count_instructions(args, base_url) if args.instructions else measure(args, base_url)
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    if result is not None:
        harness.write_result(args.output, result)


def measure(args: argparse.Namespace, base_url: str) -> dict[str, Any] | None:
    by_size: dict[str, Any] = {}
    for count in args.cases:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "data"
            make_dataset(folder, count, args.side)
            if args.profile:
                profile(args.profile, folder, base_url, args.max_connections, Path(tmp))
                return None
            run = functools.partial(
                child, folder=folder, base_url=base_url, args=args, tmp=Path(tmp)
            )
            runs = harness.alternating_runs(VARIANTS, run, args.repeats, label=count)
        medians = harness.medians(
            runs,
            (
                "seconds",
                "cpu_seconds",
                "log_bytes_per_sample",
                "metrics_pass_seconds",
                "gc_seconds",
                "gc_full_collections",
            ),
        )
        floor = (
            medians["no_score"]["seconds"]
            + math.ceil(3 * count / args.max_connections) * args.latency
        )
        by_size[str(count)] = {
            **medians,
            "floor_seconds": round(floor, 3),
            "plugin_vs_bare": round(medians["plugin"]["seconds"] / medians["bare"]["seconds"], 3),
            "plugin_vs_bare_cpu": round(
                medians["plugin"]["cpu_seconds"] / medians["bare"]["cpu_seconds"], 3
            ),
            "plugin_vs_floor": round(medians["plugin"]["seconds"] / floor, 3),
            "bare_vs_floor": round(medians["bare"]["seconds"] / floor, 3),
        }
        print(count, json.dumps(by_size[str(count)]), flush=True)
    return {
        "latency_seconds": args.latency,
        "max_connections": args.max_connections,
        "image_side": args.side,
        "repeats": args.repeats,
        "score_display": not args.no_score_display,
        "statistic": "median",
        **harness.stamp(),
        "cpus": os.cpu_count(),
        "cases": by_size,
    }


def count_instructions(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    """One run of each counted variant under callgrind; the judging work per case is the
    variant's count minus the unscored eval's, over the cases."""
    by_size: dict[str, Any] = {}
    for count in args.cases:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "data"
            make_dataset(folder, count, args.side)
            # An uncounted first run decodes every image once (kept in the decode record), so
            # that no counted run pays it: loading is not judging, and the first counted run
            # would otherwise carry it alone.
            child("no_score", folder, base_url, args, Path(tmp))
            runs = {}
            for variant in COUNTED_VARIANTS:
                runs[variant] = child(variant, folder, base_url, args, Path(tmp), counted=True)
                print(count, variant, runs[variant], flush=True)
        counts = {variant: int(run["instructions"]) for variant, run in runs.items()}
        per_case = {
            variant: judging_per_case({count: counts}, variant) for variant in ("bare", "plugin")
        }
        by_size[str(count)] = {
            "instructions": counts,
            "scoring_instructions_per_case": per_case,
            "plugin_vs_bare_scoring": round(per_case["plugin"] / per_case["bare"], 3),
            "plugin_vs_bare_whole_run": round(counts["plugin"] / counts["bare"], 3),
        }
        print(count, json.dumps(by_size[str(count)]), flush=True)
    result: dict[str, Any] = {
        "latency_seconds": args.latency,
        "max_connections": args.max_connections,
        "image_side": args.side,
        "score_display": not args.no_score_display,
        "tool": harness.CALLGRIND,
        **harness.stamp(),
        "cpus": os.cpu_count(),
        "cases": by_size,
    }
    if len(args.cases) >= 2:
        sizes = {int(size): row["instructions"] for size, row in by_size.items()}
        per_case = {variant: judging_per_case(sizes, variant) for variant in ("bare", "plugin")}
        result["between_sizes"] = {
            "cases": [min(sizes), max(sizes)],
            "scoring_instructions_per_case": per_case,
            "plugin_vs_bare_scoring": round(per_case["plugin"] / per_case["bare"], 3),
        }
    return result


def judging_per_case(counts: dict[int, dict[str, int]], variant: str) -> int:
    """One case's judging by ``variant``, from instruction counts by case count: its count
    minus the unscored eval's, per case; with two sizes or more, the difference between the
    largest and the smallest run, so that what a run pays once (start-up of the judge clients,
    the final metrics and log) is not spread over its cases."""
    small, large = min(counts), max(counts)
    work = counts[large][variant] - counts[large]["no_score"]
    if large == small:
        return round(work / large)
    work -= counts[small][variant] - counts[small]["no_score"]
    return round(work / (large - small))


def child(
    variant: str,
    folder: Path,
    base_url: str,
    args: argparse.Namespace,
    tmp: Path,
    counted: bool = False,
) -> dict[str, float]:
    # A fresh judge cache per run: a repeat must not be served from the previous one.
    cache = tempfile.mkdtemp(dir=tmp)
    command = [
        sys.executable,
        __file__,
        "--child",
        variant,
        "--folder",
        str(folder),
        "--base-url",
        base_url,
        "--max-connections",
        str(args.max_connections),
    ]
    env = {**os.environ, "INSPECT_CACHE_DIR": cache, "INSPECT_DISPLAY": "none"}
    if counted:
        stdout, count = harness.run_counted(variant, command, tmp, env)
        return {**json.loads(stdout.strip().splitlines()[-1]), "instructions": count}
    return harness.run_child(variant, command, env)


def profile(variant: str, folder: Path, base_url: str, connections: int, tmp: Path) -> None:
    import cProfile
    import pstats

    os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
    profiler = cProfile.Profile()
    profiler.enable()
    print(run_variant(variant, folder, base_url, connections))
    profiler.disable()
    profiler.dump_stats(str(Path(tempfile.gettempdir()) / f"bench_judge_{variant}.prof"))
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(40)
    stats.sort_stats("cumulative").print_stats(60)


if __name__ == "__main__":
    main()
