"""Issue 59: the promotion set (tests/core/promotion_real_replies.md), 304 real replies from
three repositories the rules had not used (MIRAGE predictions of Llama-3.2-3B on MedQA,
MMLU and BioASQ; Qwen2.5-VL rollouts with answer tags; mistral-small on MetaMedQA),
labelled by hand before any reader ran and frozen by SHA-256. It is the evidence that
promoted the rules named in ``PROVEN_RULES`` (docs/mcq.md): any wrong label fails."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from utils.reader_figures import reader_figures

PROMOTION = Path(__file__).with_name("promotion_real_replies.jsonl")
# The digest written when the labels were frozen (after the adjudication the .md lists),
# before any reader ran on the rows.
PROMOTION_SHA256 = "65f18314488b7baade89c162e60701757bb8dfb90ef81a8be530489cf72253bc"


def promotion_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PROMOTION.read_text(encoding="utf-8").splitlines()]


def test_the_promotion_set_is_the_one_frozen_before_the_reader_ran() -> None:
    assert hashlib.sha256(PROMOTION.read_bytes()).hexdigest() == PROMOTION_SHA256


def test_every_promotion_row_has_its_provenance_and_a_label_of_its_question() -> None:
    rows = promotion_rows()
    assert len(rows) == 304
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["source"]["repo"] for row in rows}) >= 3
    for row in rows:
        source = row["source"]
        assert source["repo"] and source["path"] and source["licence"]
        assert len(source["commit"]) == 40
        assert row["labelled"].startswith("by hand, before any reader ran")
        labels = [label for label, _ in row["options"]]
        assert row["label"] is None or row["label"] in labels


def test_the_reader_gives_no_wrong_label_on_the_promotion_set() -> None:
    figures = reader_figures(promotion_rows())
    assert figures.wrong == []
    assert figures.wrong_tentative == []
