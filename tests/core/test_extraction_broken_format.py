"""robust-v11 (issue 59): the answer a format-breaking model gives amid the debris of its tags
(``broken_format_ending``, written from the first two DAPO draws' misses, promoted on the third
draw and the MedAgentsBench closing draw), and what it refuses: a second answer, a label
among listed options, a question the model wrote itself."""

from __future__ import annotations

import time

import pytest

from inspect_medreason.core.extraction import PROVEN_RULES, extract_label

TOYS = [("A", "dolls"), ("B", "cars"), ("C", "red hat"), ("D", "stage")]

READ: list[tuple[str, str]] = [
    ("<think>\nThe image shows toy cars.\nanswer>B</answer>", "B"),
    ("<think>\nThe jockey in red leads.</answer>C<th<th<th<th<th", "C"),
    ("<think>\nThe room is set up as a stage.\nAssistant\nD", "D"),
    ("<think>\nThe toys are dolls addCriterion\nA: dolls\n</answer>", "A"),
    ("<think>\nThe red hat leads.\n<conclusion>C</con<th", "C"),
    ("<think>\n答案：D", "D"),
    ("<think>\nThe hat is red. <answer>c</answer>", "C"),
    ("The bus is yellow. answer>B</answer>", "B"),
    ("The toys are cars.\n<answer:B</answer>", "B"),
    ("<think>\nThe car rests on the sand.\n<strong>Answer</strong>: B", "B"),
]


@pytest.mark.parametrize(("reply", "label"), READ)
def test_the_answer_amid_broken_tags_is_read_and_named(reply: str, label: str) -> None:
    found = extract_label(reply, TOYS)
    assert (found.label, found.method) == (label, "broken_format_ending"), found
    assert "broken tags" in found.detail


REFUSED: list[str] = [
    # a label followed by more of the word: not a label
    "<think>\nThe image shows toys.\nanswer>B2 xx",
    # an answer, then another bare label
    "<think>\nThe image shows toys.\nanswer>D\n\nA",
    "<think>\nc\n<answer>D\n\nD",
    # "answer: A patient" is a sentence, not a label
    "To answer: A patient with toys.",
    # the thinking's own voice, cut off: not a broken tag
    "<think>The plane is coronal, so ANSWER: C",
    # the options listed, cut off at a label
    "<think>\nWhich toy?\nA: dolls\nB: cars\nC",
    # a run of brackets before a label: no marker, no label line
    "<think>\nThe toys are cars (((((((((((((((B",
    # two answers, however marked
    "<think>\nThe toys.\nanswer>D then answer:A",
    "<think>\nThe toys are dolls. <answer>D the stage... <answer>B</answer>",
    "To answer: A patient ... answer>B</answer>",
    # the answer to a question the model wrote itself
    "<think>\nThe toys.\nQ2: which is red?\nanswer>C</answer>",
    "<think>\nThe toys.\n**Question 2:** Which toy is red?\nAnswer: C",
    # a label and another option's text
    "<think>\nThe toys.\naddCriterion\nA: cars\n</answer>",
    # more than debris after the answer: a reply that goes on
    "<think>\nanswer>B</answer> " + "and then the model writes on about the image " * 10,
]


@pytest.mark.parametrize("reply", REFUSED)
def test_what_a_person_would_not_read_as_one_answer_is_no_answer(reply: str) -> None:
    found = extract_label(reply, TOYS)
    assert found.label is None and found.tentative_label is None, found


def test_the_answer_before_a_question_the_model_wrote_itself_is_read() -> None:
    reply = (
        "<think>\nThe toys.\nanswer>B</answer>\n**Question 2:** Which toy is red?\n"
        "answer>C</answer>"
    )
    assert extract_label(reply, TOYS).label == "B"


def test_the_rule_is_proven() -> None:
    """Its evidence (tests/core/test_extraction_promotion.py) put it among the proven rules:
    a reading of it is scored, not left to the extractor."""
    assert "broken_format_ending" in PROVEN_RULES


def test_hostile_debris_stays_linear_to_read() -> None:
    """Tag fragments, markers and listed options repeated to the reader's limit (200,000
    characters) are read in well under a second each; a line of 30,000 "answer:A" once took
    83 s (the review lead-in was sought over the whole line before every marker)."""
    started = time.perf_counter()
    for reply in (
        "<think>\n" + "answer>" * 50_000,
        "<think>\n" + "</answer>C" * 30_000,
        "<think>\nx</answer>C" + "<th" * 60_000,
        "<think>\n" + "A: dolls\n" * 30_000,
        "<think>\n" + "<" * 150_000 + "B",
        "<think>\n" + "Assistant\n" * 40_000 + "D",
        "answer:A " * 30_000,
        "Let's analyze each option: " * 10_000,
    ):
        assert extract_label(reply, TOYS).reading in {None, "A", "B", "C", "D"}
    assert time.perf_counter() - started < 8.0
