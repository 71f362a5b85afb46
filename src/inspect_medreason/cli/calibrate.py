"""``medreason calibrate``: its arguments, the calibration file
:func:`inspect_medreason.analysis.calibration.calibrate_judges` fits, written, and its
report printed or written as Markdown or JSON."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from inspect_medreason.analysis.agreement import Estimate
from inspect_medreason.analysis.calibration import (
    CalibrationFit,
    calibrate_judges,
    describe_judges,
)
from inspect_medreason.cli.command_line import (
    EXIT_OK,
    RATINGS_FILE,
    TOGETHER,
    Subcommands,
    positive_int,
    print_notes,
    printed_output,
)
from inspect_medreason.cli.markdown import markdown_text
from inspect_medreason.core.files import OutputSet


def _cell(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "—"
    low, high = estimate.interval.lower, estimate.interval.upper
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return f"{estimate.value:.2f}{interval}"


def render_report(fit: CalibrationFit, fmt: str) -> str:
    """The report as Markdown, or as JSON (the calibration file itself)."""
    if fmt == "json":
        return fit.file_text()
    document, results = fit.document, fit.components
    lines = [
        "# Judge calibration",
        "",
        markdown_text(
            f"{document['rater_count']} rater(s): {', '.join(document['raters'])}; "
            f"{describe_judges(document['judges'])}."
        ),
        "",
        "Cross-validated against the people's mean rating (before: the raw judge; after: the "
        "calibrated judge, each case predicted by a map fitted without it):",
        "",
        "| component | cases | MAE before | MAE after | change | Spearman before | Spearman "
        "after | κ before | κ after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.component} | {r.cases} | {_cell(r.before['mae'])} | {_cell(r.after['mae'])} "
            f"| {_cell(r.mae_change)} | {_cell(r.before['spearman'])} | "
            f"{_cell(r.after['spearman'])} | {_cell(r.before['weighted_kappa'])} | "
            f"{_cell(r.after['weighted_kappa'])} |"
        )
    lines += ["", "The fitted maps (judge score → calibrated score):", ""]
    for r in results:
        steps = ", ".join(f"{x:g}→{y:.2f}" for x, y in zip(r.judge, r.calibrated, strict=True))
        lines.append(
            f"- {r.component}: {steps} (judge mean {r.judge_mean:.2f}, people {r.people_mean:.2f})"
        )
    lines += [
        "",
        "[a, b] = 95% bootstrap interval over cases (1,000 resamples, fixed seed); κ: "
        "quadratic-weighted, scores rounded half up.",
    ]
    return "\n".join(lines) + "\n"


def add_parsers(commands: Subcommands) -> None:
    """``calibrate``: its arguments and the function that runs it."""
    command = commands.add_parser(
        "calibrate",
        help="fit a monotone map from judge scores to people's ratings (isotonic regression)",
        description="Per component (GT, VA, RVF, VA_final), on the cases people rated on a "
        "'medreason rate' page, fit the judge score -> the people's mean rating by isotonic "
        "regression; report cross-validated MAE, Spearman and weighted kappa before and after "
        "with 95% intervals; write a calibration file for 'leaderboard' and 'compare "
        "--calibration'. Refuses fewer than 30 rated cases per component.",
    )
    command.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="the page's logs")
    command.add_argument(
        "--ratings",
        nargs="+",
        required=True,
        metavar="FILE",
        help="one ratings file per rater, or the --store of a served round" + RATINGS_FILE,
    )
    command.add_argument("--output", required=True, help="the calibration file (.json)" + TOGETHER)
    command.add_argument("--format", choices=["md", "json"], default="md")
    command.add_argument(
        "--report",
        type=printed_output,
        help="write the report here instead of printing it" + TOGETHER,
    )
    command.add_argument("--folds", type=positive_int, default=5, help="cross-validation folds (5)")
    command.add_argument("--seed", type=int, default=0, help="the folds' seed (0)")
    command.add_argument("--force", action="store_true", help="overwrite output files")
    command.set_defaults(handler=cmd_calibrate)


def cmd_calibrate(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [*args.logs, *args.ratings])
    output = outputs.add(args.output)
    if args.report:
        outputs.add(args.report)
    fit = calibrate_judges(args.logs, args.ratings, folds=args.folds, seed=args.seed)
    for note in fit.notes:
        print(f"note: {note}", file=sys.stderr)
    report = render_report(fit, args.format)
    files: dict[Path, bytes | str] = {output: fit.file_text()}
    if args.report:
        files[Path(args.report)] = report
    print_notes(outputs.write(files))
    if args.report:
        print(f"wrote {args.report}", file=sys.stderr)
    else:
        print(report, end="")
    print(f"wrote {output} ({fit.page_id}: {fit.rater_count} rater(s))", file=sys.stderr)
    return EXIT_OK
