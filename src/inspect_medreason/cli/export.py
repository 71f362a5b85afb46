"""``medreason export`` and ``medreason judge-scores``: the shell around
``analysis/export.py`` (arguments, printing, writing the files)."""

from __future__ import annotations

import argparse
from pathlib import Path

from inspect_medreason.analysis.export import judge_score_file, official_results
from inspect_medreason.cli.command_line import (
    DATA_FILE,
    EXIT_FAILED,
    EXIT_OK,
    TOGETHER,
    Subcommands,
    print_notes,
    print_problems,
)
from inspect_medreason.cli.progress import track
from inspect_medreason.core.files import OutputSet


def add_parsers(commands: Subcommands) -> None:
    """``export`` and ``judge-scores``: their arguments and the functions that run them."""
    export = commands.add_parser(
        "export",
        help="write the official results.json (and zip) from eval logs",
        description="Write the official results.json v1.0 from logs of the mcq, open_ended or "
        "medreason tasks (several logs are merged). Refuses to write an invalid file unless "
        "--force.",
    )
    export.add_argument("logs", nargs="+", metavar="LOG", help="eval log files or folders")
    export.add_argument("--output", required=True, help="results.json to write" + TOGETHER)
    export.add_argument(
        "--zip", help="also write a submission zip holding only results.json" + TOGETHER
    )
    export.add_argument("--name", help="submission name (default: the model names)")
    export.add_argument(
        "--model", help="the model whose runs to export, when the logs hold several's"
    )
    export.add_argument(
        "--cases", help="validate completeness and labels against this cases.json" + DATA_FILE
    )
    export.add_argument(
        "--force", action="store_true", help="write even if invalid; overwrite files"
    )
    export.set_defaults(handler=cmd_export)

    judge = commands.add_parser(
        "judge-scores",
        help="write the official judge_scores.json from judged logs",
        description="Write {'scores': [{case_id, gt_final, va_answer, rvf_trace}]} for every "
        "open case whose three components were scored; unscored ones are reported and left "
        "out, never written as zeros.",
    )
    judge.add_argument("logs", nargs="+", metavar="LOG")
    judge.add_argument("--output", required=True, help="judge_scores.json to write" + TOGETHER)
    judge.add_argument(
        "--model", help="the model whose judged runs to write, when the logs hold several's"
    )
    judge.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), the score to "
        "write (open_ended_scorer, open_ended_scorer1, ...); refused without it",
    )
    judge.add_argument("--force", action="store_true", help="overwrite the output file")
    judge.set_defaults(handler=cmd_judge_scores)


def cmd_export(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [*args.logs, args.cases])
    output = outputs.add(args.output)
    zip_path = outputs.add(args.zip) if args.zip else None
    results = official_results(args.logs, args.name, args.model, args.cases, track)
    print_notes(list(results.notes))
    problems = list(results.problems)
    if problems and not args.force:
        print_problems(
            f"refusing to write {args.output}: the submission would be invalid", problems
        )
        return EXIT_FAILED
    if problems:
        print_problems("writing an INVALID submission because of --force", problems)
    # results.json and the zip holding only it are written together: both or neither, so
    # the pair always matches (``outputs`` checked both paths before any work).
    files: dict[Path, bytes | str] = {output: results.text}
    if zip_path is not None:
        files[zip_path] = results.zip_bytes()
    print_notes(outputs.write(files))
    counts = results.counts()
    print(
        f"wrote {args.output} ({len(results.submission.answers)} answers: {counts['mcq']} mcq, "
        f"{counts['open']} open)" + (f" and {args.zip}" if args.zip else "")
    )
    return EXIT_OK


def cmd_judge_scores(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, args.logs)
    output = outputs.add(args.output)
    scores = judge_score_file(args.logs, args.model, args.scorer, track)
    print_notes(list(scores.notes))
    print_notes(outputs.write({output: scores.text}))
    print(f"wrote {args.output} ({len(scores.scores)} open cases)")
    if scores.left_out:
        print_problems("left out (not written as zeros)", list(scores.left_out))
    return EXIT_OK
