"""``medreason agreement``: its arguments, and the report of
:func:`inspect_medreason.analysis.agreement.judge_agreement` printed or written as Markdown,
JSON or HTML, with its plot."""

from __future__ import annotations

import argparse
import base64
import html
import math
import sys
from collections.abc import Sequence
from typing import Any

from inspect_medreason.analysis.agreement import (
    METHOD,
    SCALE,
    Agreement,
    ComponentAgreement,
    Estimate,
    agreement_of,
    plot_png,
    read_rater_scores,
)
from inspect_medreason.cli.command_line import (
    DATA_FILE,
    EXIT_OK,
    RATINGS_FILE,
    Subcommands,
    add_report_arguments,
    check_outputs,
    emit,
)
from inspect_medreason.cli.markdown import markdown_row, markdown_text
from inspect_medreason.core import strict_json


def _cell(estimate: Estimate | None) -> str:
    if estimate is None or math.isnan(estimate.value):
        return "—"
    low, high = estimate.interval.lower, estimate.interval.upper
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return f"{estimate.value:.2f}{interval}"


PAIR_HEADER = [
    "first",
    "second",
    "cases",
    "weighted κ",
    "exact",
    "within one",
    "Spearman ρ",
    "MAE",
    "ICC(2,1)",
    "bias (second − first)",
]


PAIR_KINDS = {
    "person-judge": "Judges against people",
    "person-person": "Between people",
    "judge-judge": "Between judges",
}


def _pair_rows(result: ComponentAgreement, kind: str | None = None) -> list[list[str]]:
    pairs = [p for p in result.pairs if kind is None or p.kind == kind]
    return [
        [
            p.first,
            p.second,
            str(p.cases),
            _cell(p.kappa),
            _cell(p.exact),
            _cell(p.within_one),
            _cell(p.spearman),
            _cell(p.mae),
            _cell(p.icc),
            _cell(p.bias),
        ]
        for p in pairs
    ]


def render(report: Agreement, fmt: str) -> str:
    """The report as Markdown, JSON or a standalone HTML page."""
    results, notes = report.components, list(report.notes)
    if fmt == "json":
        return strict_json.dumps(
            {"components": [_document(r) for r in results], "notes": notes, "method": METHOD},
            indent=2,
        )
    if fmt == "html":
        return _html(results, notes)
    lines = ["# Judge agreement", ""]
    for result in results:
        lines += [f"## {result.component}", ""]
        lines += [
            f"Krippendorff's α (ordinal, all raters): {_cell(result.alpha)}; "
            f"ICC(2,1): {_cell(result.icc)} on {result.icc_cases} cases every rater scored.",
            "",
        ]
        if result.people_icc is not None:
            lines += [
                f"ICC(2,1) of the people alone: {_cell(result.people_icc)} on "
                f"{result.people_icc_cases} cases each of them rated.",
                "",
            ]
        kinds = [k for k in PAIR_KINDS if any(p.kind == k for p in result.pairs)]
        for kind in kinds:
            if len(kinds) > 1 or kind != "judge-judge":
                lines += [f"### {PAIR_KINDS[kind]}", ""]
            lines += [markdown_row(PAIR_HEADER), "|" + "---|" * len(PAIR_HEADER)]
            lines += [markdown_row(row) for row in _pair_rows(result, kind)] + [""]
        lines += [
            "| rater | " + " | ".join(str(s) for s in SCALE) + " |",
            "|" + "---|" * (len(SCALE) + 1),
        ]
        lines += [
            markdown_row([rater, *(str(n) for n in counts)])
            for rater, counts in result.distributions.items()
        ] + [""]
        for pair in result.pairs:
            lines += [
                markdown_text(f"Confusion ({pair.first} rows, {pair.second} columns):"),
                "",
                "| | " + " | ".join(str(s) for s in SCALE) + " |",
                "|" + "---|" * (len(SCALE) + 1),
            ]
            lines += [
                f"| {s} | " + " | ".join(str(n) for n in row) + " |"
                for s, row in zip(SCALE, pair.confusion, strict=True)
            ]
            lines.append("")
        lines += [f"note: {markdown_text(n)}" for n in result.notes]
    lines += [f"note: {markdown_text(n)}" for n in notes]
    lines += ["", "[a, b] = 95% bootstrap interval over cases (1,000 resamples, fixed seed)."]
    return "\n".join(lines) + "\n"


def _document(result: ComponentAgreement) -> dict[str, Any]:
    return {
        "component": result.component,
        "raters": result.raters,
        "krippendorff_alpha_ordinal": result.alpha.as_dict() if result.alpha else None,
        "icc_2_1": result.icc.as_dict() if result.icc else None,
        "icc_cases": result.icc_cases,
        "people_icc_2_1": result.people_icc.as_dict() if result.people_icc else None,
        "people_icc_cases": result.people_icc_cases,
        "pairs": [
            {
                "first": p.first,
                "second": p.second,
                "kind": p.kind,
                "cases": p.cases,
                "weighted_kappa": p.kappa.as_dict(),
                "exact": p.exact.as_dict(),
                "within_one": p.within_one.as_dict(),
                "spearman": p.spearman.as_dict(),
                "bias": p.bias.as_dict(),
                "mae": p.mae.as_dict(),
                "icc_2_1": p.icc.as_dict(),
                "confusion": p.confusion,
            }
            for p in result.pairs
        ],
        "distributions": result.distributions,
        "notes": result.notes,
    }


def _html(results: Sequence[ComponentAgreement], notes: list[str]) -> str:
    parts = []
    for result in results:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in PAIR_HEADER)
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in _pair_rows(result)
        )
        parts.append(
            f"<h2>{result.component}</h2><p>Krippendorff's α (ordinal): {_cell(result.alpha)}; "
            f"ICC(2,1): {_cell(result.icc)} ({result.icc_cases} cases)</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        )
    image = base64.b64encode(plot_png(results)).decode("ascii")
    note_html = "".join(f"<p>{html.escape(n)}</p>" for n in notes)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>Judge agreement"
        "</title><style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:"
        "collapse}td,th{border-bottom:1px solid #ddd;padding:.3rem .6rem}img{max-width:100%}"
        f"</style></head><body><h1>Judge agreement</h1>{''.join(parts)}"
        f"<img alt='Confusion matrices and score distributions' src='data:image/png;base64,{image}'>"
        f"{note_html}</body></html>\n"
    )


def add_parsers(commands: Subcommands) -> None:
    """``agreement``: its arguments and the function that runs it."""
    agree = commands.add_parser(
        "agreement",
        help="how far the judges agree with each other, with reference scores and with "
        "people's ratings",
        description="Per component: weighted kappa, exact and within-one agreement, Spearman, "
        "mean absolute error, ICC(2,1), bias and confusion for each pair of raters (judges, a "
        "--reference, and with --ratings each person as rater:<name>: judges against each "
        "person, people with each other); Krippendorff's alpha and ICC for all and for the "
        "people alone; score distributions; 95% bootstrap intervals over cases.",
    )
    agree.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="judged open-ended logs")
    agree.add_argument(
        "--reference", help="reference scores in the judge_scores.json format" + DATA_FILE
    )
    agree.add_argument(
        "--ratings",
        nargs="+",
        default=[],
        metavar="FILE",
        help="people's ratings saved from a 'medreason rate' page (one file per rater), or "
        "the --store of a served round, of these logs: each person becomes a rater, "
        "rater:<name>" + RATINGS_FILE,
    )
    agree.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), only this score "
        "(open_ended_scorer, open_ended_scorer1, ...); by default each judging is a rater "
        "(counted once, however many copies of a log hold it)",
    )
    add_report_arguments(
        agree,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of confusion heat maps and distributions",
    )
    agree.set_defaults(handler=cmd_agreement)


def cmd_agreement(args: argparse.Namespace) -> int:
    outputs = check_outputs(args, [*args.logs, args.reference, *args.ratings])
    scores = read_rater_scores(
        args.logs, reference=args.reference or None, ratings=args.ratings, scorer=args.scorer
    )
    # printed before the agreement is computed: they explain a refusal for too few raters
    for note in scores.notes:
        print(f"note: {note}", file=sys.stderr)
    report = agreement_of(scores)
    emit(args, outputs, render(report, args.format), report.plot_png)
    return EXIT_OK
