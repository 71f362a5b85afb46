"""Issue 59 item 2: the forms real replies close on (the promotion set's misses): a closing
choice naming a label or an option's whole text, the field MIRAGE's prompt asks for
(``answer_choice``), ``Ans:``, and an answer line that ends a ``<think>`` block left open.
Each names its rule; whether it gives a label on its own is ``PROVEN_RULES``' decision."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import extract_label

OPTIONS = [("A", "Alcohol"), ("B", "Cocaine"), ("C", "Iron deficiency"), ("D", "Dextrose infusion")]


@pytest.mark.parametrize(
    ("reply", "expected", "rule"),
    [
        ("Thus the most likely substance used is **B. Cocaine**. Cocaine explains it.", "B",
         "closing_choice"),
        ("Therefore, the most appropriate next step is D. Dextrose infusion.\"}", "D",
         "closing_choice"),
        ("So the most likely cause of her anaemia is iron deficiency, given the smear.", "C",
         "closing_choice"),
        ('{"step_by_step_thinking": "x. y." "answer_choice": "A"}', "A", "answer_statement"),
        ('{"step_by_step_thinking": "x", "answer_choice": "B"}', "B", "json_answer_field"),
        ("Ans: c", "C", "answer_statement"),
        ("<think>\nThe film shows fluid.\n\nAnswer: D", "D", "unclosed_thinking_answer"),
        ("<think>\nThe smear is microcytic.\nanswer\nC", "C", "unclosed_thinking_answer"),
    ],
)  # fmt: skip
def test_a_closing_form_is_read_by_its_rule(reply: str, expected: str, rule: str) -> None:
    result = extract_label(reply, OPTIONS)
    assert result.reading == expected, (result.method, result.detail)
    assert result.rule == rule


@pytest.mark.parametrize(
    "reply",
    [
        "The most likely cause is not iron deficiency.",
        "The most likely cause is (C). But more tests are needed first.",
        "The most likely cause is iron deficiency. However, alcohol is possible.",
        "The most likely cause is alcohol or iron deficiency.",
        "The most likely diagnosis is B-cell lymphoma.",
        "<think>The answer is A",  # a trace that is one statement states no answer
        "<think>\nIt is small.\nc\n<answer>D\n\nD",  # two bare labels end the trace
        '{"chosen_option": "A"}',
    ],
)
def test_a_closing_form_that_weighs_denies_or_guesses_is_no_answer(reply: str) -> None:
    assert extract_label(reply, OPTIONS).reading is None
