"""``medreason shift``: its arguments, and the report of
:func:`inspect_medreason.analysis.shift.shift_report` printed or written as Markdown, JSON or
HTML, with its plot and, with ``--examples``, the contact sheets of the images each shifted
run's model saw."""

from __future__ import annotations

import argparse
import base64
import html
import math
import sys
from pathlib import Path
from typing import Any

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.markdown import html_table
from inspect_medreason.analysis.shift import (
    NOTE,
    SUMMARY_NOTE,
    ShiftReport,
    ShiftRun,
    contact_sheets,
    shift_report,
    summarise,
)
from inspect_medreason.cli.command_line import (
    EXIT_OK,
    Subcommands,
    add_report_arguments,
    check_outputs,
    claim_caption,
    emit,
)
from inspect_medreason.core import strict_json
from inspect_medreason.core.files import OutputSet
from inspect_medreason.core.intervals import PairedResult


def _number(value: float | None, digits: int = 3) -> str:
    return (
        "—"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def _change(result: PairedResult) -> str:
    return f"{result.difference:+.3f}" if result.cases else "—"


def _interval(result: PairedResult) -> str:
    return f"[{_number(result.interval.lower)}, {_number(result.interval.upper)}]"


HEADER = ["model", "task", "shift", "severity", "seed", "judge image", "metric", "cases",
          "clean", "shifted", "shifted − clean", "95% interval", "test", "p", "note"]  # fmt: skip
MODALITY_HEADER = ["model", "shift", "severity", "metric", "modality", "cases", "clean",
                   "shifted", "shifted − clean", "95% interval", "note"]  # fmt: skip
BEHAVIOUR_HEADER = ["model", "task", "shift", "severity", "same answer", "answered pairs",
                    "says poor quality: clean", "shifted", "change", "95% interval"]  # fmt: skip


def _p(value: float | None) -> str:
    return "—" if value is None else ("<0.001" if value < 0.001 else f"{value:.3f}")


def _rows(report: ShiftReport) -> list[list[str]]:
    return [
        [
            p.shifted.model,
            p.shifted.task,
            str(p.shifted.shift),
            str(p.shifted.severity),
            str(p.shifted.seed),
            str(p.shifted.judge_image or "—"),
            metric,
            str(r.cases),
            _number(r.mean_a),
            _number(r.mean_b),
            _change(r),
            _interval(r),
            r.test,
            _p(r.p_value),
            r.note,
        ]
        for p in report.pairs
        for metric, r in p.metrics.items()
    ]


def _modality_rows(report: ShiftReport) -> list[list[str]]:
    return [
        [
            p.shifted.model,
            str(p.shifted.shift),
            str(p.shifted.severity),
            metric,
            m.modality,
            str(m.result.cases),
            _number(m.result.mean_a),
            _number(m.result.mean_b),
            _change(m.result),
            _interval(m.result),
            m.result.note,
        ]
        for p in report.pairs
        for metric, changes in p.modalities.items()
        for m in changes
    ]


def _behaviour_rows(report: ShiftReport) -> list[list[str]]:
    return [
        [
            p.shifted.model,
            p.shifted.task,
            str(p.shifted.shift),
            str(p.shifted.severity),
            _number(p.consistency),
            str(p.consistency_pairs),
            _number(p.poor_quality.mean_a),
            _number(p.poor_quality.mean_b),
            _change(p.poor_quality),
            _interval(p.poor_quality),
        ]
        for p in report.pairs
    ]


SUMMARY_HEADER = ["model", "task", "metric", "corruption error per shift (1 = clean)",
                  "mean (mCE)", "relative drop per modality", "note"]  # fmt: skip


def _summary_rows(report: ShiftReport) -> list[list[str]]:
    return [
        [
            s.model,
            s.task,
            s.metric,
            ", ".join(f"{shift} {_number(ce, 2)}" for shift, ce in s.shifts.items()),
            _number(s.mean_ce, 2),
            ", ".join(f"{m} {_number(d, 2)}" for m, d in s.modality_drop.items()),
            s.note,
        ]
        for s in summarise(report)
    ]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _warnings(report: ShiftReport) -> list[str]:
    return [w for p in report.pairs for w in p.warnings]


def render(report: ShiftReport, fmt: str) -> str:
    """The report as Markdown, JSON or a standalone HTML page."""
    if fmt == "json":
        return strict_json.dumps(document(report), indent=2, default=str)
    if fmt == "html":
        return _html(report)
    lines = ["# Image-quality shifts", ""]
    lines += [f"> warning: {w}" for w in _warnings(report)]
    lines += ["", *_table(HEADER, _rows(report)), "", NOTE, ""]
    lines += ["## Summary across shifts", "", *_table(SUMMARY_HEADER, _summary_rows(report))]
    lines += ["", SUMMARY_NOTE, "", "## By modality", ""]
    lines += _table(MODALITY_HEADER, _modality_rows(report))
    lines += [
        "",
        "## Answers and quality remarks",
        "",
        *_table(BEHAVIOUR_HEADER, _behaviour_rows(report)),
    ]
    return "\n".join(lines) + "\n"


def _result(r: PairedResult) -> dict[str, Any]:
    return {
        "cases": r.cases,
        "clean": r.mean_a,
        "shifted": r.mean_b,
        "change": r.difference,
        # NaN bounds are written null, with the reason in "note"
        "interval": {"lower": r.interval.lower, "upper": r.interval.upper, "level": 0.95},
        "test": r.test,
        "p_value": r.p_value,
        "note": r.note,
    }


def _run(run: ShiftRun) -> dict[str, Any]:
    return {
        "log": str(run.path),
        "model": run.model,
        "task": run.task,
        "shift": run.shift,
        "severity": run.severity,
        "seed": run.seed,
        "judge_image": run.judge_image,
        "epochs": run.epochs,
    }


def document(report: ShiftReport) -> dict[str, Any]:
    return {
        "pairs": [
            {
                "clean": _run(p.clean),
                "shifted": _run(p.shifted),
                "metrics": {m: _result(r) for m, r in p.metrics.items()},
                "by_modality": {
                    m: {c.modality: _result(c.result) for c in changes}
                    for m, changes in p.modalities.items()
                },
                "answer_consistency": {"same": p.consistency, "pairs": p.consistency_pairs},
                "says_poor_quality": _result(p.poor_quality),
                "warnings": p.warnings,
            }
            for p in report.pairs
        ],
        "summary": [
            {
                "model": s.model,
                "task": s.task,
                "metric": s.metric,
                "corruption_error": s.shifts,
                "mean_corruption_error": s.mean_ce,
                "relative_drop_by_modality": s.modality_drop,
                "note": s.note,
            }
            for s in summarise(report)
        ],
        "notes": report.notes,
        "method": NOTE,
        "summary_method": SUMMARY_NOTE,
    }


def _html(report: ShiftReport) -> str:
    image = base64.b64encode(report.plot_png()).decode("ascii")
    warnings = "".join(f"<p class='warn'>warning: {html.escape(w)}</p>" for w in _warnings(report))
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        "<title>Image-quality shifts</title>\n<style>body{font-family:system-ui,sans-serif;"
        "margin:2rem}table{border-collapse:collapse;margin:1rem 0}th,td{border-bottom:1px "
        "solid #d9e2ec;padding:.3rem .6rem;text-align:right}th{background:#f0f4f8}"
        ".warn{color:#b44d12}img{max-width:100%}</style>\n</head>\n<body>\n"
        f"<h1>Image-quality shifts</h1>\n{warnings}{html_table(HEADER, _rows(report))}"
        f"<p>{html.escape(NOTE)}</p>\n"
        "<figure><img alt='The change of each metric against severity, per shift' "
        f"src='data:image/png;base64,{image}'>\n"
        f"<figcaption>{html.escape(report.plot_caption())}</figcaption></figure>\n"
        f"<h2>Summary across shifts</h2>\n{html_table(SUMMARY_HEADER, _summary_rows(report))}"
        f"<p>{html.escape(SUMMARY_NOTE)}</p>\n"
        f"<h2>By modality</h2>\n{html_table(MODALITY_HEADER, _modality_rows(report))}"
        f"<h2>Answers and quality remarks</h2>\n{html_table(BEHAVIOUR_HEADER, _behaviour_rows(report))}"
        "</body>\n</html>\n"
    )


def add_parsers(commands: Subcommands) -> None:
    """``shift``: its arguments and the function that runs it."""
    shift = commands.add_parser(
        "shift",
        help="how much each model loses under image-quality shifts, against its clean run",
        description="Pairs each shifted run (-T shift=... -T severity=1..3) with the clean run "
        "of the same model and task on the same cases (refusing, by name, runs that cannot be "
        "paired) and reports per metric and modality the change with a paired bootstrap 95% "
        "interval, answer consistency and how often replies call the image poor "
        "(docs/shift.md).",
    )
    shift.add_argument("logs", nargs="+", metavar="LOGS", help="eval logs or folders of them")
    shift.add_argument(
        "--examples",
        metavar="DIR",
        help="write here, per shift and severity, a contact sheet (PNG) of the images the "
        "model saw, made again from the data folder and each sample's shift record",
    )
    shift.add_argument(
        "--data",
        metavar="FOLDER",
        help="the data folder the images are read from for --examples (a log names none; "
        "for a log written before that, the one its run recorded)",
    )
    add_report_arguments(
        shift,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of each metric against severity, one panel per shift and metric",
    )
    shift.set_defaults(handler=cmd_shift)


def cmd_shift(args: argparse.Namespace) -> int:
    outputs = check_outputs(args, args.logs)
    claim_caption(args, outputs)
    examples = Path(args.examples) if args.examples else None
    if examples is not None and examples.exists() and not examples.is_dir():
        raise AnalysisError([f"--examples {examples}: not a folder"])
    report = shift_report(args.logs)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    emit(args, outputs, render(report, args.format), report.plot_png, report.plot_caption)
    if examples is not None:
        sheets, notes = contact_sheets(report, args.data or None)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        examples.mkdir(parents=True, exist_ok=True)
        sheet_outputs = OutputSet(args.force, args.logs)
        files: dict[Path, bytes | str] = {
            sheet_outputs.add(examples / name): data for name, data in sheets.items()
        }
        sheet_outputs.write(files)
        print(f"wrote {len(files)} contact sheet(s) to {examples}", file=sys.stderr)
    return EXIT_OK
