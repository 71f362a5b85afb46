"""``medreason compare``: the shell around ``analysis/comparison.py`` (arguments, printing,
writing the report and the plot)."""

from __future__ import annotations

import argparse
import sys

from inspect_medreason.analysis.comparison import compare_logs, render
from inspect_medreason.cli.command_line import (
    CALIBRATION_FILE,
    EXIT_OK,
    Subcommands,
    add_report_arguments,
    check_outputs,
    claim_caption,
    emit,
)
from inspect_medreason.cli.progress import track


def add_parsers(commands: Subcommands) -> None:
    """``compare``: its arguments and the function that runs it."""
    compare = commands.add_parser(
        "compare",
        help="is run B really better than run A? a paired comparison of two logs",
        description="On the cases both logs scored: each metric's difference (B - A) with a "
        "95% interval and a clustered sign-flip test that count images, not cases (the shift "
        "report's statistic), the smallest detectable difference, and the differences per "
        "modality and organ system.",
    )
    compare.add_argument("log_a", metavar="LOG_A", help="the reference run (A)")
    compare.add_argument("log_b", metavar="LOG_B", help="the run compared with it (B)")
    compare.add_argument(
        "--calibration",
        metavar="FILE",
        help="also compare the judge metrics calibrated to people's ratings (a 'medreason "
        "calibrate' file), labelled (calibrated), beside the raw ones" + CALIBRATION_FILE,
    )
    add_report_arguments(
        compare,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of the differences with their intervals",
    )
    compare.set_defaults(handler=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    outputs = check_outputs(args, [args.log_a, args.log_b, args.calibration])
    claim_caption(args, outputs)
    comparison = compare_logs(args.log_a, args.log_b, args.calibration, track)
    for warning in comparison.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    output = render(comparison, args.format)
    emit(args, outputs, output, comparison.plot_png, comparison.plot_caption)
    return EXIT_OK
