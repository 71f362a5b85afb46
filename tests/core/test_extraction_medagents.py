"""Issue 59: a fourth hand-labelled set (tests/core/medagents_real_replies.md), 524 real
replies of nine models on ten medical benchmarks from MedAgentsBench's published outputs,
chosen for the forms the issue names (boxed answers, closing sentences, opening labels,
reasoning cut off), labelled before any reader ran and frozen by SHA-256."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MEDAGENTS = Path(__file__).with_name("medagents_real_replies.jsonl")
# Written when the labels were frozen, before any reader ran on the rows.
MEDAGENTS_SHA256 = "a57f11227b97032b4ab31692aec0893a413d6d6ad1900c585b7d94e60209ddf8"


def medagents_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in MEDAGENTS.read_text(encoding="utf-8").splitlines()]


def test_the_medagents_set_is_the_one_frozen_before_the_reader_ran() -> None:
    assert hashlib.sha256(MEDAGENTS.read_bytes()).hexdigest() == MEDAGENTS_SHA256


def test_every_medagents_row_has_its_provenance_and_a_label_of_its_question() -> None:
    rows = medagents_rows()
    assert len(rows) == 524
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["reply"] for row in rows}) == len(rows)
    for row in rows:
        source = row["source"]
        assert source["repo"] == "xk-huang/medagents-benchmark"
        assert source["commit"] == "56ca11eb1ef89f6bb7fad6284008bf39e08785b0"
        assert source["path"].startswith("output/") and source["licence"].startswith("MIT")
        assert row["labelled"].startswith("by hand, before any reader ran")
        labels = [label for label, _ in row["options"]]
        assert row["label"] is None or row["label"] in labels
