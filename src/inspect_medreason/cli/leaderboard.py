"""``medreason leaderboard``: the shell around ``analysis/leaderboard.py`` (arguments,
printing, writing the report and the plot)."""

from __future__ import annotations

import argparse

from inspect_medreason.analysis.leaderboard import plot_png, rank_models, render
from inspect_medreason.cli.command_line import (
    CALIBRATION_FILE,
    EXIT_OK,
    Subcommands,
    add_report_arguments,
    check_outputs,
    emit,
    positive_int,
    print_notes,
)
from inspect_medreason.cli.progress import track


def add_parsers(commands: Subcommands) -> None:
    """``leaderboard``: its arguments and the function that runs it."""
    board = commands.add_parser(
        "leaderboard",
        help="rank models from eval logs as the challenge does",
        description="One row per model: MCQ Accuracy, Open-ended GT, Open-ended VA, the rank on "
        "each (ties share the average rank), the mean rank and the overall position.",
    )
    board.add_argument("logs", nargs="+", metavar="LOG_OR_DIR")
    add_report_arguments(
        board,
        ["md", "csv", "json", "html"],
        "write the table here instead of printing it",
        "write a PNG with the three metrics side by side per model",
    )
    board.add_argument(
        "--breakdown", action="store_true", help="add per-category results (in the same format)"
    )
    board.add_argument(
        "--include-partial",
        action="store_true",
        help="show runs over part of the cases (--limit, --sample-id, unfinished) as their own "
        "unranked rows instead of leaving them out",
    )
    board.add_argument(
        "--label-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="keep runs apart by this task argument, e.g. --label-arg images (repeatable)",
    )
    board.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), only this score "
        "(open_ended_scorer, open_ended_scorer1, ...); by default a row for each",
    )
    board.add_argument(
        "--reducer",
        metavar="NAME",
        help="of a run reduced several ways over its epochs (--epochs-reducer mean,max), only "
        "this reducer's numbers; by default a row for each",
    )
    board.add_argument(
        "--bootstrap",
        type=positive_int,
        default=0,
        metavar="N",
        help="resample the cases N times and report how often each model holds each overall "
        "position, and its 95%% range of positions (reads every log's samples)",
    )
    board.add_argument(
        "--calibration",
        metavar="FILE",
        help="add the judge metrics calibrated to people's ratings (a 'medreason calibrate' "
        "file) beside the raw ones, labelled (calibrated), with intervals" + CALIBRATION_FILE,
    )
    board.set_defaults(handler=cmd_leaderboard)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    outputs = check_outputs(args, [*args.logs, args.calibration])
    board = rank_models(
        args.logs,
        args.label_arg,
        args.include_partial,
        scorer=args.scorer,
        reducer=args.reducer,
        calibration=args.calibration,
        bootstrap=args.bootstrap,
        on_note=lambda note: print_notes([note]),
        progress=track,
    )
    output = render(board, args.format, breakdown=args.breakdown)
    emit(args, outputs, output, lambda: plot_png(board.rows))
    return EXIT_OK
