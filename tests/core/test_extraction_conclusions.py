"""robust-v10 (issue 59), written from the first MedAgentsBench set's misses and measured on
its held-out draw: a conclusion announced on the line before its label (also after a review
of the options), the given options weighed again under a question the model asks itself, a
label followed by its own option's text that holds another letter, bracketed labels listed
as the answer, an apostrophe in an option's text."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import PROVEN_RULES, extract_label

OPTIONS = [
    ("A", "Cardiac catheterization"),
    ("B", "Aspirin"),
    ("C", "Increased chloride in the patient's sweat"),
    ("D", "L scale"),
    ("E", "D scale"),
]
REVIEW = (
    "Let's analyze each option:\n\n- **(A) Cardiac catheterization**: indicated now.\n"
    "- **(B) Aspirin**: already given.\n- **(E) D scale**: not relevant.\n\n"
)


@pytest.mark.parametrize(
    ("reply", "expected", "rule"),
    [
        # a conclusion announced on the line before, after a review of the options too
        (REVIEW + "Therefore, the most appropriate next step in management is:\n\n"
         "**(A) Cardiac catheterization**", "A", "colon_conclusion"),
        ("The ECG shows ST elevation.\n\nThe best option is:\n(A) Cardiac catheterization\n\n"
         "This restores flow fastest.", "A", "colon_conclusion"),
        ("Reasoning.\n\nTherefore, the patient is at greatest risk for:\n\n**B** (Aspirin).",
         "B", "colon_conclusion"),
        # its own option's text, though that text holds another option's letter
        ("Therefore, the correct answer is:\n\n**(D) L scale**.", "D", "colon_conclusion"),
        # an apostrophe inside a word, quotes taken off or not
        ("Answer: Increased chloride in the patient's sweat\n\nCystic fibrosis.", "C",
         "answer_statement"),
        ("Answer: Increased chloride in the patient’s sweat", "C", "answer_statement"),
        # the given options weighed again under a question asked aloud, then a boxed answer
        ("Hmm, A might be it.\n\nSo, considering these points, which one is right?\n\n"
         "Option A, cardiac catheterization, is invasive.\n\nOption B, aspirin, was given.\n\n"
         "**Final Answer**\n\n\\[ \\boxed{A} \\]", "A", "boxed"),
    ],
)  # fmt: skip
def test_a_conclusion_is_read_with_its_rule(reply: str, expected: str, rule: str) -> None:
    found = extract_label(reply, OPTIONS)
    assert (found.label, found.rule) == (expected, rule), found
    assert rule in PROVEN_RULES


@pytest.mark.parametrize(
    "reply",
    [
        # a list's introduction, not a conclusion
        "The options are:\n(A) Cardiac catheterization\n(B) Aspirin",
        "Let's analyze each option:\n(A) Cardiac catheterization is invasive",
        # a hypothesis
        "If the troponin were normal, the answer would be:\n\n(B) Aspirin",
        # a denial, a supposition: not the conclusion
        "Reasoning.\n\nTherefore, the answer is not:\n\n(A) Cardiac catheterization",
        "Reasoning.\n\nAssuming a normal troponin, one might pick:\n\n(A) Cardiac catheterization",
        # another option named after the conclusion
        "Therefore, the most likely step is:\n\n**(A) Cardiac catheterization**\n\n"
        "On reflection, B fits better.",
        # several bracketed labels given as the answer
        "Answer: (A) Cardiac catheterization, (B) Aspirin, (D) L scale\n\n(Note: all three.)",
    ],
)
def test_what_is_not_a_single_conclusion_is_no_label_by_these_rules(reply: str) -> None:
    found = extract_label(reply, OPTIONS)
    assert found.rule != "colon_conclusion"
    assert found.label is None, found


def test_the_answer_to_a_not_question_is_still_its_conclusion() -> None:
    """ "Which is not ...?": the option that is not is the answer."""
    reply = (
        "Analysis.\n\nThe option that does not come from insensible loss is:\n\n**B** - aspirin."
    )
    found = extract_label(reply, OPTIONS)
    assert (found.label, found.rule) == ("B", "colon_conclusion"), found


def test_an_invented_question_with_the_same_generic_options_still_ends_the_reply() -> None:
    """Options that only read the same ("A) Increased") are a new question's, not the given
    options weighed again (which carry commentary: "Option C, water, is produced ...")."""
    options = [("A", "Increased"), ("B", "Decreased"), ("C", "Unchanged")]
    reply = (
        "**Answer:** A\n\nWhat happens to GFR here?\nA) Increased\nB) Decreased\n"
        "C) Unchanged\n\n**Answer:** B"
    )
    assert extract_label(reply, options).label == "A"


def test_the_new_endings_stay_linear_on_long_lines() -> None:
    import time

    started = time.perf_counter()
    for reply in (
        "<think>\nx\n<answer>A" + " " * 100_000 + "x",
        "<think>\nx\nanswer A" + " " * 100_000 + "x",
        "so the answer is " * 12_000,
        "Therefore, the answer is:\n(A) Cardiac catheterization " + "is " * 30_000,
        # a label line, then many lines of a marker and another label (each was checked
        # against every line before it: 5.6 s)
        "B\n" + "x: C\n" * 39_000,
    ):
        extract_label(reply, OPTIONS)
    assert time.perf_counter() - started < 5.0


def test_a_question_the_model_writes_with_new_options_still_ends_the_reply() -> None:
    """The check for the given options weighed again does not let an invented question
    back in: its options are its own."""
    reply = (
        "**Final Answer:** A\n\nA 55-year-old smoker presents with wheeze. Which is the most "
        "likely diagnosis?\nA) Asthma\nB) COPD\nC) Bronchiectasis\n\n**Answer:** B"
    )
    found = extract_label(reply, OPTIONS)
    assert found.label == "A", found


@pytest.mark.parametrize(
    ("reply", "label", "tentative", "rule"),
    [
        # an answer line ending a <think> never closed: the model's answer, proven
        ("<think>\nThe ECG shows ST elevation.\n\nAnswer: A", "A", None,
         "unclosed_thinking_answer"),
        ("<think>\nThe ECG is abnormal.\nST elevation in II, III, aVF.answer\nA", "A", None,
         "unclosed_thinking_answer"),
        # the thinking's own voice, cut off at a token limit: no answer
        ("<think>\nSo the answer should be (B). Alternatively, (A) is possible but", None, None,
         "thinking_only"),
        ("<think>\nHmm, ST elevation.\nSo I think the answer is A.", None, None, "thinking_only"),
        # the endings written from the first DAPO draw's misses, proven on the second
        ("<think>\nThe image shows a bowl of aspirin tablets. <answer>B</answer>", "B", None,
         "unclosed_thinking_ending"),
        ("<think>\nThe image shows aspirin.\n addCriterion\nB</answer>", "B", None,
         "unclosed_thinking_ending"),
        ("<think>\n<answer>B</answer>", "B", None, "unclosed_thinking_ending"),
        # the thinking's voice, naming an option on its last line, is not one of them
        ("<think>\nI'm going to select answer A. But no.\nSo answer A", None, None,
         "thinking_only"),
        # a label before thinking that runs on: tentative, not a reply that is only a label
        ("A\n<think>\nThe tusks are large", None, "A", "label_before_thinking"),
    ],
)  # fmt: skip
def test_an_unclosed_think_is_read_only_where_it_ends_on_an_answer(
    reply: str, label: str | None, tentative: str | None, rule: str
) -> None:
    found = extract_label(reply, OPTIONS)
    assert (found.label, found.tentative_label, found.rule) == (label, tentative, rule), found


def test_a_label_line_then_another_label_after_an_unknown_marker_is_no_answer() -> None:
    found = extract_label("D\n\n**Solution:** C", OPTIONS)
    assert found.label is None and found.method == "ambiguous", found
    # after a known answer marker the last statement decides, as everywhere
    assert extract_label("D\n\n**Answer:** C", OPTIONS).label == "C"
