"""Issue 59: three disjoint draws of format-breaking DAPO rollouts (tests/core/dapo_heldout_replies.md),
each labelled blind and frozen by SHA-256 before the rules written from the draw before it
ran: the evidence for ``unclosed_thinking_answer`` as refined in robust-v10 (the first),
``unclosed_thinking_ending`` (the second) and ``broken_format_ending`` (the third)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from utils.reader_figures import labelled_rows, reader_figures

DAPO = Path(__file__).with_name("dapo_heldout_replies.jsonl")
DAPO_SHA256 = "8e6fdd605cb78094a54a77a684ac1e1b0503d566a4e686a27ed78731adfcf757"
# A second, disjoint draw, frozen before the rules written from the first draw's misses ran.
SECOND = Path(__file__).with_name("dapo_second_replies.jsonl")
SECOND_SHA256 = "56b718416dac10472f563acabb9815357ac014cc847a2668336a87bdfae3ad0f"
# A third, from runs neither earlier draw used, frozen before broken_format_ending ran.
THIRD = Path(__file__).with_name("dapo_third_replies.jsonl")
THIRD_SHA256 = "e845eb8c6970929652fdfdade13abf207cf2d4609b404e6a983f350a5bb3fd8f"


def dapo_rows(path: Path = DAPO) -> list[dict[str, Any]]:
    return labelled_rows(path)


def second_rows() -> list[dict[str, Any]]:
    return dapo_rows(SECOND)


def third_rows() -> list[dict[str, Any]]:
    return dapo_rows(THIRD)


def test_the_dapo_draws_are_the_ones_frozen_before_the_reader_ran() -> None:
    assert hashlib.sha256(DAPO.read_bytes()).hexdigest() == DAPO_SHA256
    assert hashlib.sha256(SECOND.read_bytes()).hexdigest() == SECOND_SHA256
    assert hashlib.sha256(THIRD.read_bytes()).hexdigest() == THIRD_SHA256


def test_every_dapo_row_has_its_provenance_and_a_label_of_its_question() -> None:
    first, second, third = dapo_rows(), second_rows(), third_rows()
    assert (len(first), len(second), len(third)) == (220, 200, 200)
    rows = first + second + third
    assert len({row["id"] for row in rows}) == len({row["reply"] for row in rows}) == len(rows)
    for row in rows:
        assert row["source"]["repo"] == "JuncyLu/trl_DAPO" and len(row["source"]["commit"]) == 40
        assert row["labelled"].startswith("by hand, before any reader ran")
        assert row["label"] is None or row["label"] in [label for label, _ in row["options"]]


def test_the_reader_gives_no_wrong_label_on_any_dapo_draw() -> None:
    """Measured blind: the first draw gave one wrong label by a proven rule (a label line,
    then "**Solution:** C": two answers, now none), the second one (a label before a
    <think> that runs on to junk, "A\n<think>...", now less-proven), the third one
    ("<answer>D ... <answer>B</answer>" read B by the answer ending an unclosed <think>: two
    answers, now none); after those fixes none. robust-v11 reads 165 of the first draw's
    172, 159 of the second's 164 and 157 of the third's 175: the rest end on forms no rule
    is proven for (docs/mcq.md)."""
    first, second, third = (
        reader_figures(dapo_rows()),
        reader_figures(second_rows()),
        reader_figures(third_rows()),
    )
    assert first.wrong == [] and second.wrong == [] and third.wrong == []
    assert first.wrong_tentative == [] and third.wrong_tentative == []
    assert (first.read, first.readable) == (165, 172)
    assert (second.read, second.readable) == (159, 164)
    assert (third.read, third.readable) == (157, 175)


def test_the_third_draw_measures_the_broken_format_ending_blind() -> None:
    """broken_format_ending was written from the first two draws' misses; on the third,
    frozen before it ran, its 33 readings are all right (its promotion evidence)."""
    figures = reader_figures(third_rows())
    assert figures.by_rule[("broken_format_ending", True)] == 33
    assert figures.by_rule[("broken_format_ending", False)] == 0
