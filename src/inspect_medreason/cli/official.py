"""``medreason score`` and ``medreason validate``: the shell around ``analysis/official.py``
(arguments, printing, writing the metrics file)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from inspect_medreason.analysis.official import (
    SubmissionRefused,
    score_submission,
    validate_submission,
)
from inspect_medreason.cli.command_line import (
    DATA_FILE,
    EXIT_FAILED,
    EXIT_OK,
    TOGETHER,
    Subcommands,
    print_notes,
    print_problems,
    printed_output,
)
from inspect_medreason.cli.progress import track
from inspect_medreason.core.files import OutputSet


def add_parsers(commands: Subcommands) -> None:
    """``score`` and ``validate``: their arguments and the functions that run them."""
    score = commands.add_parser(
        "score",
        help="score like the official scoring.py",
        description="The official scoring.py, decision for decision and byte for byte: MCQ "
        "exact match on answer.strip(), the VA gate on judge scores, statistics.mean (null "
        "for an absent track). Refuses what it refuses (missing, extra, duplicate or "
        "mismatched cases, a blank answer or open reasoning_trace, a judge row without a "
        "score) and lists every problem. Values it accepts outside the rubric (NaN, 7, "
        "'3', rows for unknown cases) are accepted with a warning; --strict refuses them.",
    )
    score.add_argument(
        "--predictions", required=True, help="results.json (or a bare list)" + DATA_FILE
    )
    score.add_argument("--ground-truth", required=True, help="ground_truth.json" + DATA_FILE)
    score.add_argument(
        "--judge-scores", help="judge_scores.json (needed when there are open cases)" + DATA_FILE
    )
    score.add_argument(
        "--output",
        type=printed_output,
        help="write the metrics JSON here (prints only the metrics)" + TOGETHER,
    )
    score.add_argument(
        "--pretty", action="store_true", help="indent the JSON, as the official --pretty"
    )
    score.add_argument("--strict", action="store_true", help="refuse values outside the rubric")
    score.add_argument("--force", action="store_true", help="overwrite the output file")
    score.set_defaults(handler=cmd_score)

    validate = commands.add_parser(
        "validate",
        help="check a submission (.json or .zip) as validate_submission.py does",
        description="Refuse exactly what the official validate_submission.py refuses, listing "
        "every problem; warn (exit 0) where the official documentation is stricter than its "
        "validator (extra zip members, a missing version); --strict refuses those too.",
    )
    validate.add_argument("submission", help="results.json or a submission .zip" + DATA_FILE)
    validate.add_argument(
        "--cases",
        "--cases-json",
        dest="cases",
        help="the cases.json it answers (checks labels and completeness)" + DATA_FILE,
    )
    validate.add_argument("--strict", action="store_true", help="refuse on warnings too")
    validate.set_defaults(handler=cmd_validate)


def _print_warnings(warnings: list[str], strict: bool) -> None:
    if not warnings:
        return
    title = (
        "refused because of --strict"
        if strict
        else "warnings (accepted as the official script accepts them; --strict refuses)"
    )
    print(f"{title} ({len(warnings)}):", file=sys.stderr)
    for warning in warnings:
        print(f"  - {warning}", file=sys.stderr)


def cmd_score(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [args.predictions, args.ground_truth, args.judge_scores])
    if args.output:
        outputs.add(args.output)
    try:
        scored = score_submission(
            args.predictions, args.ground_truth, args.judge_scores, args.pretty, args.strict, track
        )
    except SubmissionRefused as refusal:  # its warnings first, then the error
        _print_warnings(refusal.warnings, args.strict)
        raise
    _print_warnings(list(scored.warnings), args.strict)
    if args.output:
        print_notes(outputs.write({Path(args.output): scored.text + "\n"}))
        print(json.dumps({"metrics": scored.metrics, "counts": scored.counts}, ensure_ascii=False))
        print(f"wrote {args.output} ({scored.counts['num_cases']} cases)", file=sys.stderr)
    else:
        print(scored.text)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    check = validate_submission(args.submission, args.cases)
    _print_warnings(list(check.warnings), args.strict)
    if not check.valid(args.strict):
        print_problems(f"{args.submission} is NOT a valid submission", list(check.problems))
        return EXIT_FAILED
    scope = (
        "against the cases file"
        if check.against_cases
        else "(no --cases: labels and completeness not checked)"
    )
    print(f"{args.submission} is valid {scope}: {check.answers} answers")
    return EXIT_OK
