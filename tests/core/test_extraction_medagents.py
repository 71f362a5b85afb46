"""Issue 59: a fourth hand-labelled set (tests/core/medagents_real_replies.md), 524 real
replies of nine models on ten medical benchmarks from MedAgentsBench's published outputs,
chosen for the forms the issue names (boxed answers, closing sentences, opening labels,
reasoning cut off), labelled before any reader ran and frozen by SHA-256."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from utils.reader_figures import labelled_rows, reader_figures

MEDAGENTS = Path(__file__).with_name("medagents_real_replies.jsonl")
# Written when the labels were frozen, before any reader ran on the rows.
MEDAGENTS_SHA256 = "a57f11227b97032b4ab31692aec0893a413d6d6ad1900c585b7d94e60209ddf8"
# A second, disjoint draw, frozen before any rule was written from the first set's misses.
HELDOUT = Path(__file__).with_name("medagents_heldout_replies.jsonl")
HELDOUT_SHA256 = "b88d1de9e57512789bb05afc7a31087bbfd96332c636083a0d48a7bc0dc8d8fa"
# A third, disjoint draw of closing sentences over eight models, frozen before any robust-v11
# rule ran on it.
CLOSING = Path(__file__).with_name("medagents_closing_replies.jsonl")
CLOSING_SHA256 = "61cae7eef3a7dc4b4bc3bd14bcfcd8cf9a6a8ee793a2111ccb7d981b522fc9a0"


def medagents_rows(path: Path = MEDAGENTS) -> list[dict[str, Any]]:
    return labelled_rows(path)


def heldout_rows() -> list[dict[str, Any]]:
    return medagents_rows(HELDOUT)


def closing_rows() -> list[dict[str, Any]]:
    return medagents_rows(CLOSING)


def test_the_medagents_sets_are_the_ones_frozen_before_the_reader_ran() -> None:
    assert hashlib.sha256(MEDAGENTS.read_bytes()).hexdigest() == MEDAGENTS_SHA256
    assert hashlib.sha256(HELDOUT.read_bytes()).hexdigest() == HELDOUT_SHA256
    assert hashlib.sha256(CLOSING.read_bytes()).hexdigest() == CLOSING_SHA256


def test_every_medagents_row_has_its_provenance_and_a_label_of_its_question() -> None:
    rows, held_out, closing = medagents_rows(), heldout_rows(), closing_rows()
    assert (len(rows), len(held_out), len(closing)) == (524, 260, 160)
    every = rows + held_out + closing
    assert len({row["id"] for row in every}) == len({row["reply"] for row in every}) == len(every)
    for row in every:
        source = row["source"]
        assert source["repo"] == "xk-huang/medagents-benchmark"
        assert source["commit"] == "56ca11eb1ef89f6bb7fad6284008bf39e08785b0"
        assert source["path"].startswith("output/") and source["licence"].startswith("MIT")
        assert row["labelled"].startswith("by hand, before any reader ran")
        labels = [label for label, _ in row["options"]]
        assert row["label"] is None or row["label"] in labels


def test_the_reader_gives_no_wrong_label_on_any_medagents_set() -> None:
    for rows in (medagents_rows(), heldout_rows(), closing_rows()):
        figures = reader_figures(rows)
        assert figures.wrong == []


def test_the_held_out_draw_is_read_as_a_person_reads_it() -> None:
    """Issue 59's bar on replies the rules were not written from, with no extractor: at
    least 97% of what a person reads is read, none wrongly (robust-v11: 188 of 191)."""
    figures = reader_figures(heldout_rows())
    assert figures.wrong == []
    assert figures.read / figures.readable >= 0.97, figures.unread


def test_the_closing_draw_is_read_but_for_reasoning_cut_off_in_its_thinking() -> None:
    """Measured blind (robust-v11): 105 of the 117 replies a person reads, 0 wrong. The 11
    unread are QwQ-32B cut off at its token limit inside a <think> never closed, after a
    commitment in the thinking's own voice ("so the answer is D. Because Black's formula
    states that"); the first two sets' labellers left all 164 such replies unlabelled, so no
    rule reads the thinking's voice (docs/mcq.md). Of what only less-proven rules read,
    closing_choice's one reading is right and label_is_correct's one is wrong (a bare "B"
    answer line its own explanation calls incorrect, labelled null): tentative labels both,
    neither rule has the evidence to be promoted."""
    figures = reader_figures(closing_rows())
    assert figures.wrong == []
    assert (figures.read, figures.readable) == (105, 117)
    assert figures.unread_by_class == {"thinking_only": 11}
