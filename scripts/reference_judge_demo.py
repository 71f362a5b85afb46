"""The open-ended shift demo of docs/shift.md ("An open-ended drop, judged offline"): a clean
and a blur-3 open-ended run of ``medreason/image-sensitive`` on the demo data, judged by
``medreason/reference-judge`` in both roles, then ``medreason shift`` and ``medreason
compare`` on them. Prints the lines the document shows; ``tests/core/test_reference_judge_demo.py``
checks that the document holds them.

    python scripts/reference_judge_demo.py WORKDIR
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model

import inspect_medreason
from inspect_medreason.analysis.comparison import compare_logs
from inspect_medreason.analysis.shift import shift_report
from inspect_medreason.medreason.medreason import open_ended

METRICS = ("Open-ended GT", "Open-ended VA")
SHIFT = {"shift": "blur", "severity": 3}


def run_demo(workdir: Path) -> tuple[EvalLog, EvalLog]:
    """The clean and the blur-3 run, their logs under ``workdir/logs``."""
    data = workdir / "demo"
    shutil.copytree(Path(inspect_medreason.__file__).parent / "sample_data", data)
    truth = {"cases": str(data / "cases.json"), "answers": str(data / "ground_truth.json")}
    judge = get_model(
        "medreason/reference-judge",
        memoize=False,
        cases=truth["cases"],
        answers=truth["answers"],
    )
    logs = []
    for shift in ({}, SHIFT):
        [log] = eval(
            open_ended(data=str(data), **shift),
            model="medreason/image-sensitive",
            model_args=truth,
            model_roles={"grader": judge, "vision_grader": judge},
            display="none",
            log_dir=str(workdir / "logs"),
        )
        logs.append(log)
    return logs[0], logs[1]


def case_scores(log: EvalLog) -> dict[str, tuple[str, dict[str, float]]]:
    """Each case's extracted answer and judge scores, by case id (a shifted sample's id
    without its ``@shift-severity`` suffix)."""
    scores: dict[str, tuple[str, dict[str, float]]] = {}
    for sample in log.samples or []:
        [score] = sample.scores.values() if sample.scores else [None]
        assert score is not None and isinstance(score.value, dict), sample.id
        answer = (score.metadata or {})["answer"]  # the extracted answer the scorer recorded
        values = {key: float(value) for key, value in score.value.items()}
        scores[str(sample.id).split("@")[0]] = (answer, values)
    return scores


def report_lines(workdir: Path, clean: EvalLog, shifted: EvalLog) -> list[str]:
    """The rows the document shows: the shift report's and the comparison's means and change
    per metric, and the change on the cases whose answer changed and on the others."""
    [pair] = shift_report([str(workdir / "logs")]).pairs
    comparison = compare_logs(clean.location, shifted.location)
    before, after = case_scores(clean), case_scores(shifted)
    changed = sorted(case for case in before if before[case][0] != after[case][0])
    same = sorted(case for case in before if before[case][0] == after[case][0])
    lines = [
        "| read by | metric | cases | clean | blur 3 | change |",
        "|---|---|---|---|---|---|",
    ]
    for name, results in (
        ("medreason shift", pair.metrics),
        ("medreason compare", comparison.results),
    ):
        for metric in METRICS:
            result = results[metric]
            lines.append(
                f"| {name} | {metric} | {result.cases} | {result.mean_a:.3f} | "
                f"{result.mean_b:.3f} | {result.difference:+.3f} |"
            )
    for label, cases in (("answer changed", changed), ("answer the same", same)):
        for key, metric in (("gt_final", "Open-ended GT"), ("va_final", "Open-ended VA")):
            if not cases:
                continue
            mean_a = sum(before[case][1][key] for case in cases) / len(cases)
            mean_b = sum(after[case][1][key] for case in cases) / len(cases)
            lines.append(
                f"| {label} | {metric} | {len(cases)} | {mean_a:.3f} | {mean_b:.3f} | "
                f"{mean_b - mean_a:+.3f} |"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path, help="a new or empty folder for the data and logs")
    workdir = parser.parse_args().workdir
    workdir.mkdir(parents=True, exist_ok=True)
    clean, shifted = run_demo(workdir)
    print("\n".join(report_lines(workdir, clean, shifted)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
