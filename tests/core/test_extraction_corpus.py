"""Issue 40: real published model replies, hand-labelled with what a person reads (the
label, or none), each with its source, commit and licence (tests/core/corpus_real_replies.md).
The reader must never give a wrong label on them and must read nearly all that a person
reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_medreason.core.extraction import extract_label

CORPUS = Path(__file__).with_name("corpus_real_replies.jsonl")


def corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def test_every_row_has_its_provenance() -> None:
    rows = corpus()
    assert len(rows) >= 300
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["model"] for row in rows}) >= 9
    for row in rows:
        source = row["source"]
        assert source["repo"] and source["path"] and source["licence"]
        assert len(source["commit"]) == 40
        labels = [label for label, _ in row["options"]]
        assert row["label"] is None or row["label"] in labels


def test_no_wrong_label_and_nearly_all_read() -> None:
    wrong: list[str] = []
    missed: list[str] = []
    readable = 0
    for row in corpus():
        options = [(label, text) for label, text in row["options"]]
        got = extract_label(row["reply"], options)
        if row["label"] is None:
            if got.label is not None:
                wrong.append(f"{row['id']}: read {got.label} ({got.method}), a person reads none")
            continue
        readable += 1
        if got.label is None:
            missed.append(f"{row['id']}: unread ({got.method}: {got.detail})")
        elif got.label != row["label"]:
            wrong.append(
                f"{row['id']}: read {got.label} ({got.method}), a person reads {row['label']}"
            )
    assert wrong == []
    assert len(missed) <= 0.03 * readable, missed
