"""Issue 59: the second blind set (tests/core/cotlab_real_replies.md), 300 MedGemma-4B replies
labelled by hand and split into a development half and a held-out half, both frozen by SHA-256
before any reader ran. The held-out half was measured once with robust-v8: 2 wrong labels.
robust-v9 fixes their forms (the half is no longer blind) and leaves 7 null adjudications of
a contradicting JSON field or letter wrong on the development half; robust-v10, promoting the
line holding only a label, reads one more such letter on each half, so the no-wrong-label
tests stay strict xfails (figures in docs/mcq.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from utils.reader_figures import labelled_rows, reader_figures

HERE = Path(__file__).parent
FROZEN = {
    "dev": "c6c8342b5acc0f65f2cabf9c728ec3edcb57c57c426b4e14a9c93ccf91b51f50",
    "heldout": "65c6fb965fe5d98a19268e77a443b6b3a30b0b33cdf1d41fe2106fc848668bf7",
}


def cotlab_rows(half: str) -> list[dict[str, Any]]:
    path = HERE / f"cotlab_real_replies_{half}.jsonl"
    return labelled_rows(path)


@pytest.mark.parametrize("half", sorted(FROZEN))
def test_each_half_is_the_one_frozen_before_the_reader_ran(half: str) -> None:
    data = (HERE / f"cotlab_real_replies_{half}.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == FROZEN[half]


def test_the_halves_are_split_by_row_digest_with_provenance() -> None:
    dev, held = cotlab_rows("dev"), cotlab_rows("heldout")
    assert (len(dev), len(held)) == (130, 170)
    for half, rows in (("dev", dev), ("heldout", held)):
        for row in rows:
            even = int(hashlib.sha256(row["id"].encode()).hexdigest(), 16) % 2 == 0
            assert even == (half == "dev")
            assert len(row["source"]["commit"]) == 40 and row["source"]["path"]
            assert row["labelled"].startswith("by hand, before any reader ran")
            assert row["label"] is None or row["label"] in [label for label, _ in row["options"]]
    assert len({row["id"] for row in dev + held}) == 300


@pytest.mark.xfail(
    strict=True,
    reason="null adjudications of a contradicting letter are read as it (docs/mcq.md)",
)
@pytest.mark.parametrize("half", sorted(FROZEN))
def test_the_reader_gives_no_wrong_label_on_the_cotlab_set(half: str) -> None:
    figures = reader_figures(cotlab_rows(half))
    assert figures.wrong == [] and figures.wrong_tentative == []


def test_robust_v10_on_the_held_out_half() -> None:
    """robust-v10 on the held-out half (known since robust-v8, docs/mcq.md): 164 of the 165
    replies a person reads read; its one wrong label is of the development half's class, a
    final letter contradicting the reply's own reasoning ("... will decrease both Vmax and
    Km.\n\n**Final Answer:**\n\nC"), labelled null here, read as the letter the reply
    commits to by the line holding only a label, promoted in robust-v10 on the MedAgentsBench
    sets' labels, which read a commitment as the answer."""
    figures = reader_figures(cotlab_rows("heldout"))
    assert (figures.read, figures.readable) == (164, 165)
    assert figures.wrong == [
        "cotlab/01.26/2026-01-22/13-39-24_classification_medgemma_4b_mcq_plain_medmcqa/217: "
        "read C (label_line), a person reads None"
    ]
