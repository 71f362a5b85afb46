"""Wall time and peak memory of the ``medreason`` commands on a large eval log.

Builds N cases (half MCQ, half open, on 50 shared images), runs
``inspect_medreason/medreason`` on them once with the offline ``medreason/pipeline-check``
model as the model and both judges (``--no-log-images``), then times, each in a fresh
process, ``export``, ``judge-scores``, ``score`` (on the files those two wrote),
``leaderboard``, ``compare`` (the log against itself) and ``agreement`` (the judges against
the judge scores written), with each one's peak RSS. The target (issue 14): each <= 5 s on a
4,000-case log, memory flat in the number of samples (compare --cases 1000 and 4000).

Usage: python perf/bench_cli.py [--cases 4000] [--keep DIR]
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

RESULTS = harness.RESULTS / "cli.json"
# Runs the CLI in this process and prints its peak RSS (KiB) after it returns.
CHILD = (
    "import resource, sys\n"
    "from inspect_medreason.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('PEAK_KIB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def make_dataset(folder: Path, count: int, images: int = 50) -> None:
    """Half MCQ, half open cases on ``images`` shared 64-pixel PNGs, answers apart."""
    harness.noise_images(folder, images)
    cases, truth = [], []
    for index in range(count):
        case_id = f"case_{index:05d}"
        image = f"images/img_{index % images:04d}.png"
        if index % 2:
            cases.append(
                {
                    "case_id": case_id,
                    "task_type": "mcq",
                    "image_path": image,
                    "question": f"Which finding? ({case_id})",
                    "options": ["first", "second", "third", "fourth"],
                    "metadata": {"modality": "CT"},
                }
            )
            truth.append({"case_id": case_id, "task_type": "mcq", "answer": "ABCD"[index % 4]})
        else:
            cases.append(
                {
                    "case_id": case_id,
                    "task_type": "open",
                    "image_path": image,
                    "question": f"Describe the finding. ({case_id})",
                    "metadata": {"modality": "MRI"},
                }
            )
            truth.append({"case_id": case_id, "task_type": "open", "answer": "A small nodule."})
    (folder / "cases.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")
    (folder / "ground_truth.json").write_text(json.dumps({"cases": truth}), encoding="utf-8")


def make_log(folder: Path, log_dir: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "inspect_medreason/medreason",
            "--model",
            "medreason/pipeline-check",
            "--model-role",
            "grader=medreason/pipeline-check",
            "--model-role",
            "vision_grader=medreason/pipeline-check",
            "-T",
            f"data={folder}",
            "--no-log-images",
            "--log-dir",
            str(log_dir),
            "--max-connections",
            "50",
            "--display",
            "none",
        ],
        check=True,
        env={**os.environ, "INSPECT_DISPLAY": "none"},
    )
    [log] = sorted(log_dir.glob("*.eval"))
    from inspect_ai.log import read_eval_log

    harness.require_success("inspect_medreason/medreason", read_eval_log(log, header_only=True))
    return log


def timed(argv: list[str], cwd: Path) -> dict[str, float]:
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-c", CHILD, *argv], cwd=cwd, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"medreason {' '.join(argv)} failed:\n{run.stderr[-2000:]}")
    peak = next(
        int(line.split()[1]) for line in run.stderr.splitlines() if line.startswith("PEAK_KIB")
    )
    return {"seconds": round(seconds, 3), "peak_rss_mib": round(peak / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description="medreason commands on a large log")
    parser.add_argument("--cases", type=int, default=4000)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        data = work / "data"
        if not (data / "cases.json").is_file():
            make_dataset(data, args.cases)
        logs = work / "logs"
        log = next(iter(sorted(logs.glob("*.eval"))), None) or make_log(data, logs)
        commands = {
            "export": ["export", str(log), "--output", "results.json", "--force"],
            "judge-scores": ["judge-scores", str(log), "--output", "judge_scores.json", "--force"],
            "score": [
                "score",
                "--predictions",
                "results.json",
                "--ground-truth",
                str(data / "ground_truth.json"),
                "--judge-scores",
                "judge_scores.json",
                "--output",
                "metrics.json",
                "--force",
            ],
            "leaderboard": [
                "leaderboard",
                str(logs),
                "--format",
                "json",
                "--output",
                "board.json",
                "--force",
            ],
            # every sample of both runs (the log against itself: the reading is the work)
            "compare": [
                "compare",
                str(log),
                str(log),
                "--format",
                "json",
                "--output",
                "compare.json",
                "--force",
            ],
            # the judges against the judge scores written above, as a reference rater
            "agreement": [
                "agreement",
                str(log),
                "--reference",
                "judge_scores.json",
                "--format",
                "json",
                "--output",
                "agreement.json",
                "--force",
            ],
        }
        measured = {name: timed(argv, work) for name, argv in commands.items()}
        log_mib = log.stat().st_size / 1024**2
    results = {
        **harness.stamp(),
        "cases": args.cases,
        "log_mib": round(log_mib, 1),
        "commands": measured,
        "worst_seconds": max(m["seconds"] for m in measured.values()),
        "target_seconds": 5.0,
    }
    for name, values in measured.items():
        print(f"{name:>13}: {values['seconds']:.2f} s, peak {values['peak_rss_mib']:.0f} MiB")
    print(
        f"log {log_mib:.1f} MiB for {args.cases} cases; worst/target = "
        f"{results['worst_seconds'] / 5.0:.2f}"
    )
    harness.write_result(args.output, results)


if __name__ == "__main__":
    main()
