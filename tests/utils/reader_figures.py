"""The MCQ reader's figures on a hand-labelled set of real replies (the development corpus, the
sealed set): wrong labels, what is read by a proven rule, what only a less-proven rule reads
(left to the extractor), what stays unread, and the readings per rule. docs/mcq.md publishes
them; `python tests/utils/reader_figures.py` prints them."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_medreason.core.extraction import EXTRACTION_MODE, extract_label


@dataclass
class ReaderFigures:
    rows: int = 0
    readable: int = 0
    read: int = 0
    tentative: int = 0
    wrong: list[str] = field(default_factory=list)
    wrong_tentative: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    # (rule, right or wrong) for each proven or tentative reading
    by_rule: Counter[tuple[str, bool]] = field(default_factory=Counter)
    # why a reply a person reads stayed unread (its method)
    unread_by_class: Counter[str] = field(default_factory=Counter)


def labelled_rows(path: Path) -> list[dict[str, Any]]:
    """A hand-labelled set's rows (one JSON object per line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def reader_figures(rows: list[dict[str, Any]]) -> ReaderFigures:
    figures = ReaderFigures(rows=len(rows))
    for row in rows:
        options = [(label, text) for label, text in row["options"]]
        got = extract_label(row["reply"], options)
        person = row["label"]
        if got.reading is not None:
            figures.by_rule[(got.rule or got.method, got.reading == person)] += 1
        if got.label is not None and got.label != person:
            figures.wrong.append(
                f"{row['id']}: read {got.label} ({got.method}), a person reads {person}"
            )
        if got.tentative_label is not None and got.tentative_label != person:
            figures.wrong_tentative.append(
                f"{row['id']}: tentatively {got.tentative_label} ({got.rule}), a person reads {person}"
            )
        if person is None:
            continue
        figures.readable += 1
        if got.label == person:
            figures.read += 1
        elif got.tentative_label == person:
            figures.tentative += 1
        elif got.label is None:
            figures.unread.append(f"{row['id']}: unread ({got.method}: {got.detail})")
            figures.unread_by_class[got.method] += 1
    return figures


# The rules proven by what they are (the answer field the prompt asks for, a reply that is
# nothing but one label: what the official strict rule reads too), not by a count.
PROVEN_BY_DESIGN = frozenset({"json_answer_field", "reply_is_label", "reply_is_option_text"})
# A rule is promoted when, on the sets it was not written from, it made at least this many
# readings and none was wrong.
PROMOTION_READINGS = 20


def rule_evidence(row_sets: list[list[dict[str, Any]]]) -> dict[str, tuple[int, int]]:
    """Per rule, its (right, wrong) readings, proven or tentative, over the sets given."""
    totals: Counter[tuple[str, bool]] = Counter()
    for rows in row_sets:
        totals.update(reader_figures(rows).by_rule)
    return {
        rule: (totals[(rule, True)], totals[(rule, False)])
        for rule in sorted({rule for rule, _ in totals})
    }


def main(paths: list[str]) -> None:
    for path in paths:
        rows = labelled_rows(Path(path))
        f = reader_figures(rows)
        print(
            f"{EXTRACTION_MODE} {Path(path).name}: {f.rows} rows, {f.readable} a person reads; "
            f"wrong {len(f.wrong)}, read {f.read} ({f.read / f.readable:.1%}), only a "
            f"less-proven rule {f.tentative} (wrong tentatively {len(f.wrong_tentative)}), "
            f"unread {len(f.unread)} {dict(f.unread_by_class)}"
        )
        print(
            "  per rule (right, wrong):",
            {
                rule: (f.by_rule[(rule, True)], f.by_rule[(rule, False)])
                for rule in sorted({rule for rule, _ in f.by_rule})
            },
        )


if __name__ == "__main__":
    main(
        sys.argv[1:]
        or [
            "tests/core/corpus_real_replies.jsonl",
            "tests/core/sealed_real_replies.jsonl",
            "tests/core/promotion_real_replies.jsonl",
        ]
    )
