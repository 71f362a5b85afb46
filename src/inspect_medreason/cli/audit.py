"""``medreason check-data``: an audit of a data set before anyone trains or evaluates on it.

Findings:

- **answer leakage**: the reference reasoning (``visual_description``) contains the case's
  normalised reference answer (an open answer, or the text of an MCQ's correct option) as a
  whole phrase, so a model prompted or trained with it can read the answer off. Answers that
  are a bare yes/no are not checked (their words occur in any description);
- **conflicting answers**: cases on the same image content (by hash, whatever the file names)
  asking the same question with different answers (MCQ answers compared by option text);
- **duplicate questions**: the same question on the same image content more than once;
- **MCQ answer-label balance**: how often each label is the answer, against what a uniform
  draw over each case's own options would give (chi-square test);
- **coverage**: cases per track, modality and organ system;
- **images** that are missing, leave the data folder, do not decode, or are tiny.

The command's arguments and what it prints are at the end of the module.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

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
from inspect_medreason.core.extraction import normalise_text
from inspect_medreason.core.files import OutputSet, file_sha256
from inspect_medreason.core.images import ImagePathError, check_images_decode
from inspect_medreason.core.loaders import (
    UNKNOWN_GROUP,
    load_cases,
    prepare_image,
    refuse_non_utf8_path,
)
from inspect_medreason.core.schema import Case

# Smaller than this on either side is reported as tiny (icons, thumbnails, broken exports).
DEFAULT_MIN_SIDE = 32
UNCHECKABLE_ANSWERS = frozenset({"yes", "no", "是", "否"})
# How many examples a finding lists in the Markdown report (JSON lists them all).
SHOWN_EXAMPLES = 20


def reference_answer_text(case: Case) -> str | None:
    """The answer as words: an open case's answer, or the text of an MCQ's correct option."""
    if case.answer is None or not case.answer.strip():
        return None
    if case.task_type == "mcq":
        by_label = {option.label: option.text for option in case.options}
        return by_label.get(case.answer.strip())
    return case.answer


def leaks_answer(case: Case) -> bool | None:
    """True when the reference reasoning holds the normalised answer as a whole phrase;
    None when it cannot be checked (no reasoning, no answer, a bare yes/no)."""
    answer = reference_answer_text(case)
    if not case.reference_reasoning or answer is None:
        return None
    needle = normalise_text(answer)
    if not needle or needle in UNCHECKABLE_ANSWERS:
        return None
    return f" {needle} " in f" {normalise_text(case.reference_reasoning)} "


@dataclass
class ImageFinding:
    path: str
    problem: str
    cases: list[str]


@dataclass
class Audit:
    """Everything ``check-data`` found; ``leakage`` decides ``--strict``."""

    data: str
    cases: int
    by_track: dict[str, int]
    by_modality: dict[str, int]
    by_organ_system: dict[str, int]
    leakage: list[dict[str, str]] = field(default_factory=list)
    leakage_checked: int = 0
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    label_balance: dict[str, Any] = field(default_factory=dict)
    images: list[ImageFinding] = field(default_factory=list)
    distinct_images: int = 0

    @property
    def clean(self) -> bool:
        return not (self.leakage or self.conflicts or self.duplicates or self.images)


def _image_hashes(
    cases: list[Case], data_dir: Path, min_side: int
) -> tuple[dict[str, str], list[ImageFinding]]:
    """Content hash per image path, and what is wrong with the images (each file once)."""
    users: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        for relative in case.image_paths:
            users[relative].append(case.case_id)
    hashes: dict[str, str] = {}
    findings: list[ImageFinding] = []
    resolved: dict[str, Path] = {}
    real_root = Path(os.path.realpath(data_dir))
    for relative, case_ids in users.items():
        try:
            resolved[relative] = prepare_image(
                data_dir, relative, check_decodes=False, real_root=real_root
            )
        except ImagePathError as error:
            findings.append(ImageFinding(relative, str(error), case_ids))
    # Decoded in full as the loader does, and remembered across runs with it.
    undecodable = check_images_decode(list(resolved.values()))
    for relative, path in resolved.items():
        case_ids = users[relative]
        if path in undecodable:
            findings.append(ImageFinding(relative, undecodable[path], case_ids))
            continue
        with Image.open(path) as image:
            width, height = image.size
        if min(width, height) < min_side:
            findings.append(
                ImageFinding(
                    relative,
                    f"tiny: {width}x{height} pixels (under {min_side} on a side)",
                    case_ids,
                )
            )
        hashes[relative] = file_sha256(path)
    return hashes, findings


def label_balance(cases: list[Case]) -> dict[str, Any]:
    """Answer-label counts against a uniform draw over each case's own options."""
    from scipy.stats import chisquare

    mcq = [case for case in cases if case.task_type == "mcq" and case.answer]
    if not mcq:
        return {}
    observed: Counter[str] = Counter(str(case.answer).strip() for case in mcq)
    expected: dict[str, float] = defaultdict(float)
    for case in mcq:
        for label in case.labels:
            expected[label] += 1 / len(case.labels)
    labels = sorted(expected)
    rows = {
        label: {
            "answers": observed[label],
            "expected": round(expected[label], 1),
            "share": round(observed[label] / len(mcq), 3),
        }
        for label in labels
    }
    result: dict[str, Any] = {"cases": len(mcq), "labels": rows}
    if len(labels) > 1:
        test = chisquare(
            [observed[label] for label in labels], [expected[label] for label in labels]
        )
        result["chi_square"] = round(float(test.statistic), 3)
        result["p_value"] = float(test.pvalue)
    return result


def audit_data(data: str | Path, min_side: int = DEFAULT_MIN_SIDE) -> Audit:
    """Audit every case of ``data`` (any layout the loader reads). Raises DatasetError when
    the records themselves cannot be read; image problems are findings, not errors."""
    refuse_non_utf8_path(data)
    loaded = load_cases(data, check_images=False)
    cases = loaded.cases

    def count(values: list[str | None]) -> dict[str, int]:
        return dict(Counter(value or UNKNOWN_GROUP for value in values).most_common())

    report = Audit(
        data=str(data),
        cases=len(cases),
        by_track=count([case.task_type for case in cases]),
        by_modality=count([case.metadata.modality for case in cases]),
        by_organ_system=count([case.metadata.organ_system for case in cases]),
    )
    for case in cases:
        leaked = leaks_answer(case)
        if leaked is None:
            continue
        report.leakage_checked += 1
        if leaked:
            report.leakage.append(
                {
                    "case_id": case.case_id,
                    "task_type": case.task_type,
                    "answer": str(reference_answer_text(case)),
                }
            )
    hashes, report.images = _image_hashes(cases, loaded.data_dir, min_side)
    report.distinct_images = len(set(hashes.values()))
    groups: dict[tuple[tuple[str, ...], str], list[Case]] = defaultdict(list)
    for case in cases:
        content = tuple(sorted(hashes.get(path, f"unreadable:{path}") for path in case.image_paths))
        groups[content, normalise_text(case.question)].append(case)
    for members in groups.values():
        if len(members) < 2:
            continue
        ids = [case.case_id for case in members]
        answers = {
            normalise_text(text)
            for case in members
            if (text := reference_answer_text(case)) is not None
        }
        entry = {
            "cases": ids,
            "question": members[0].question[:200],
            "images": members[0].image_paths,
        }
        if len(answers) > 1:
            report.conflicts.append({**entry, "answers": sorted(answers)})
        else:
            report.duplicates.append(entry)
    report.label_balance = label_balance(cases)
    return report


def render(report: Audit, output_format: str) -> str:
    if output_format == "json":
        document = asdict(report)
        document["clean"] = report.clean
        return strict_json.dumps(document, indent=2, ensure_ascii=False) + "\n"
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


# --- the command line: medreason check-data -----------------------------------------------


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
