"""Issue 59: a fresh draw of 220 format-breaking DAPO rollouts (tests/core/dapo_heldout_replies.md),
labelled blind and frozen by SHA-256 before any reader ran: the evidence for
``unclosed_thinking_answer`` as refined in robust-v10."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from utils.reader_figures import reader_figures

DAPO = Path(__file__).with_name("dapo_heldout_replies.jsonl")
DAPO_SHA256 = "8e6fdd605cb78094a54a77a684ac1e1b0503d566a4e686a27ed78731adfcf757"


def dapo_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DAPO.read_text(encoding="utf-8").splitlines()]


def test_the_dapo_draw_is_the_one_frozen_before_the_reader_ran() -> None:
    assert hashlib.sha256(DAPO.read_bytes()).hexdigest() == DAPO_SHA256


def test_every_dapo_row_has_its_provenance_and_a_label_of_its_question() -> None:
    rows = dapo_rows()
    assert len(rows) == 220
    assert len({row["id"] for row in rows}) == len({row["reply"] for row in rows}) == len(rows)
    for row in rows:
        assert row["source"]["repo"] == "JuncyLu/trl_DAPO" and len(row["source"]["commit"]) == 40
        assert row["labelled"].startswith("by hand, before any reader ran")
        assert row["label"] is None or row["label"] in [label for label, _ in row["options"]]


def test_the_reader_gives_no_wrong_label_on_the_dapo_draw() -> None:
    """Measured blind with robust-v10's refined rule: one wrong label, by a proven rule (a
    label line, then "**Solution:** C": two answers, now none); after that fix none. 97 of
    the 172 replies a person reads are read (the answer ending an unclosed <think>, 85/0,
    promoted on this draw), 9 more tentatively; the rest end on junk a person reads past
    ("... addCriterion\nD</answer>"), left unread (docs/mcq.md)."""
    figures = reader_figures(dapo_rows())
    assert figures.wrong == [] and figures.wrong_tentative == []
    assert (figures.read, figures.readable) == (97, 172)
