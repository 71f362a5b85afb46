"""``medreason check-data``: its arguments, its Markdown and JSON report, what it prints.
The audit itself is ``analysis.data_audit``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspect_medreason.analysis.data_audit import DEFAULT_MIN_SIDE, Audit, audit_data
from inspect_medreason.cli.command_line import (
    EXIT_FAILED,
    EXIT_OK,
    TOGETHER,
    Subcommands,
    positive_int,
    print_notes,
    printed_output,
)
from inspect_medreason.cli.markdown import markdown_row, markdown_text
from inspect_medreason.core import strict_json
from inspect_medreason.core.files import OutputSet

# How many examples a finding lists in the Markdown report (JSON lists them all).
SHOWN_EXAMPLES = 20


def render(report: Audit, output_format: str) -> str:
    if output_format == "json":
        return strict_json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"
    lines = [
        f"# Data audit: {markdown_text(report.data)}",
        "",
        f"{report.cases} cases ({', '.join(f'{n} {t}' for t, n in report.by_track.items())}), "
        f"{report.distinct_images} distinct images by content.",
        "",
        f"## Answer leakage: {len(report.leakage)} of {report.leakage_checked} checkable cases",
        "",
        "The reference reasoning (visual_description) contains the normalised reference answer: "
        "never prompt or train with it for these cases.",
    ]

    def examples(rows: list[str], total: int) -> None:
        if not rows:
            return
        lines.append("")
        # each example is user text (case ids, questions, answers, paths): escaped
        lines.extend(f"- {markdown_text(row[2:])}" for row in rows[:SHOWN_EXAMPLES])
        if total > SHOWN_EXAMPLES:
            lines.append(f"- ... and {total - SHOWN_EXAMPLES} more (--format json lists all)")

    examples(
        [
            f"- {row['case_id']} ({row['task_type']}): answer {row['answer'][:80]!r}"
            for row in report.leakage
        ],
        len(report.leakage),
    )
    lines += ["", f"## Same image and question, conflicting answers: {len(report.conflicts)}"]
    examples(
        [
            f"- {', '.join(c['cases'])}: {c['question'][:80]!r} -> {c['answers']}"
            for c in report.conflicts
        ],
        len(report.conflicts),
    )
    lines += ["", f"## Duplicate questions (same image content): {len(report.duplicates)}"]
    examples(
        [f"- {', '.join(d['cases'])}: {d['question'][:80]!r}" for d in report.duplicates],
        len(report.duplicates),
    )
    lines += ["", "## MCQ answer labels", ""]
    balance = report.label_balance
    if balance:
        lines += ["| label | answers | expected if uniform | share |", "|---|---|---|---|"]
        lines += [
            markdown_row([label, str(row["answers"]), str(row["expected"]), f"{row['share']:.1%}"])
            for label, row in balance["labels"].items()
        ]
        if "p_value" in balance:
            lines += [
                "",
                f"Chi-square {balance['chi_square']:g}, p = {balance['p_value']:.3g} "
                f"({balance['cases']} MCQ cases).",
            ]
    else:
        lines.append("No MCQ case with an answer.")
    lines += ["", f"## Images with problems: {len(report.images)}"]
    examples(
        [
            f"- {finding.path}: {finding.problem} (cases: {', '.join(finding.cases[:5])}"
            f"{' ...' if len(finding.cases) > 5 else ''})"
            for finding in report.images
        ],
        len(report.images),
    )
    for title, counts in (
        ("modality", report.by_modality),
        ("organ system", report.by_organ_system),
    ):
        lines += ["", f"## Cases per {title}", "", "| value | cases |", "|---|---|"]
        lines += [markdown_row([value, str(n)]) for value, n in counts.items()]
    return "\n".join(lines) + "\n"


def add_parsers(commands: Subcommands) -> None:
    """``check-data``: its arguments and the function that runs it."""
    check = commands.add_parser(
        "check-data",
        help="audit a data set: answer leakage, conflicts, duplicates, balance, images",
        description="Before training or evaluating on DATA (a cases file, a folder or an unzipped "
        "release): reference reasoning that contains the answer, the same image and question "
        "with conflicting answers, duplicate questions, MCQ answer-label balance, cases per "
        "modality and organ system, images that are missing, undecodable or tiny.",
    )
    check.add_argument("data", metavar="DATA")
    check.add_argument("--format", choices=["md", "json"], default="md")
    check.add_argument(
        "--output",
        type=printed_output,
        help="write the report here instead of printing it" + TOGETHER,
    )
    check.add_argument("--force", action="store_true", help="overwrite the output file")
    check.add_argument(
        "--strict", action="store_true", help="exit 1 when any case leaks its answer"
    )
    check.add_argument(
        "--min-side",
        type=positive_int,
        default=DEFAULT_MIN_SIDE,
        help=f"images smaller than this many pixels on a side are tiny ({DEFAULT_MIN_SIDE})",
    )
    check.set_defaults(handler=cmd_check_data)


def cmd_check_data(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [args.data])
    if args.output:
        outputs.add(args.output)
    report = audit_data(args.data, min_side=args.min_side)
    text = render(report, args.format)
    if args.output:
        print_notes(outputs.write({Path(args.output): text}))
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    print(
        f"check-data: {report.cases} cases; answer leakage in {len(report.leakage)}, "
        f"{len(report.conflicts)} conflicting and {len(report.duplicates)} duplicate question "
        f"group(s), {len(report.images)} image problem(s)",
        file=sys.stderr,
    )
    return EXIT_FAILED if args.strict and report.leakage else EXIT_OK
