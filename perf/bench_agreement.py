"""Wall time of ``medreason agreement`` as its input grows: many logs, a large reference.

Runs ``inspect_medreason/open_ended`` once on a few cases (the offline
``medreason/pipeline-check`` model as the model and both judges), writes ``--logs`` copies of
that log with ``inspect_ai.log.write_eval_log`` (each its own eval and task id, and its own
judge model names, as a folder of many runs is), and a ``--reference-rows`` row
``judge_scores.json`` of which only the log's cases match. Then times, each in a fresh
process: ``agreement`` on the folder of logs, and ``agreement`` on one log with the large
reference. The bar (issue 35): each finishes, or refuses saying how to narrow the input,
within 60 s.

Usage: python perf/bench_agreement.py [--logs 2000] [--reference-rows 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
from bench_cli import make_dataset

RESULTS = harness.RESULTS / "agreement.json"
TARGET_SECONDS = 60.0


def make_log(data: Path, log_dir: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "inspect_medreason/open_ended",
            "--model",
            "medreason/pipeline-check",
            "--model-role",
            "grader=medreason/pipeline-check",
            "--model-role",
            "vision_grader=medreason/pipeline-check",
            "-T",
            f"data={data}",
            "--no-log-images",
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
        check=True,
        env={**os.environ, "INSPECT_DISPLAY": "none"},
    )
    [log] = sorted(log_dir.glob("*.eval"))
    return log


def copy_logs(source: Path, folder: Path, count: int) -> None:
    """``count`` copies of ``source``, each a run of its own (eval and task ids) and a
    judging of its own (its judges' explanations name the copy: ``agreement`` counts a
    judging held by several files once), judged by judge models of their own names."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(source))
    harness.require_success("inspect_medreason/open_ended", log)
    folder.mkdir(parents=True, exist_ok=True)
    roles = dict(log.eval.model_roles or {})
    scores = [score for sample in log.samples or [] for score in (sample.scores or {}).values()]
    explanations = [score.explanation for score in scores]
    for index in range(count):
        for score, explanation in zip(scores, explanations, strict=True):
            score.explanation = f"{explanation} (judging {index})"
        log.eval.eval_id = f"copy{index:05d}"
        log.eval.task_id = f"task{index:05d}"
        log.eval.run_id = f"run{index:05d}"
        log.eval.model_roles = {
            role: config.model_copy(update={"model": f"{config.model}-{index % 7}"})
            if not isinstance(config, list)
            else config
            for role, config in roles.items()
        }
        write_eval_log(log, str(folder / f"run_{index:05d}.eval"))


def make_reference(source: Path, path: Path, rows: int) -> int:
    """A judge_scores.json of ``rows`` rows: the log's judged cases (scored as its judges
    scored them, shifted) and the rest for cases no log holds. Returns how many match."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(source))
    matching = []
    for sample in log.samples or []:
        score = sample.scores.get("open_ended_scorer") if sample.scores else None
        if score is None or not isinstance(score.value, dict):
            continue
        values = {k: score.value.get(k) for k in ("gt_final", "va_answer", "rvf_trace")}
        if all(isinstance(v, int | float) for v in values.values()):
            row = {k: int(min(4, float(v) + sample.epoch % 2)) for k, v in values.items()}  # type: ignore[arg-type]
            matching.append({"case_id": str(sample.id), **row})
    others = [
        {"case_id": f"other_{n:06d}", "gt_final": n % 5, "va_answer": (n * 3) % 5, "rvf_trace": 4}
        for n in range(rows - len(matching))
    ]
    path.write_text(json.dumps({"scores": matching + others}), encoding="utf-8")
    return len(matching)


def timed(argv: list[str], cwd: Path) -> dict[str, object]:
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "inspect_medreason.cli", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    last = run.stderr.strip().splitlines()[-1:] or [""]
    print(f"  exit {run.returncode} in {seconds:.1f} s: {last[0][:200]}")
    return {"seconds": round(seconds, 2), "exit": run.returncode, "last_line": last[0][:300]}


def main() -> None:
    parser = argparse.ArgumentParser(description="medreason agreement as its input grows")
    parser.add_argument("--logs", type=int, default=2000)
    parser.add_argument("--reference-rows", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        data = work / "data"
        if not (data / "cases.json").is_file():
            make_dataset(data, 24, images=4)  # 12 open cases
        source = next(iter(sorted((work / "source").glob("*.eval"))), None) or make_log(
            data, work / "source"
        )
        copies = work / "copies"
        if len(list(copies.glob("*.eval"))) != args.logs:
            for old in copies.glob("*.eval"):
                old.unlink()
            copy_logs(source, copies, args.logs)
        reference = work / "reference.json"
        matching = make_reference(source, reference, args.reference_rows)
        out = ["--format", "json", "--output", "out.json", "--force"]
        print(f"agreement on {args.logs} logs:")
        many = timed(["agreement", str(copies), *out], work)
        print(f"agreement on one log and a {args.reference_rows}-row reference:")
        large = timed(["agreement", str(source), "--reference", str(reference), *out], work)
    results = {
        **harness.stamp(),
        "logs": args.logs,
        "reference_rows": args.reference_rows,
        "reference_matching": matching,
        "many_logs": many,
        "large_reference": large,
        "target_seconds": TARGET_SECONDS,
    }
    harness.write_result(args.output, results)


if __name__ == "__main__":
    main()
