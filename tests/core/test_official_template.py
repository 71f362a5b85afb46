"""What the challenge's template and baseline containers would submit (issue 31): a
re-statement of their documented parsers, guesses included, scored by the official rule."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import extract_label
from inspect_medreason.core.official_template import official_reading

OPTIONS = [
    ("A", "Pneumothorax"),
    ("B", "Pleural effusion"),
    ("C", "Consolidation"),
    ("D", "Cardiomegaly"),
]

# (reply, template submits, baseline submits)
ROWS: list[tuple[str, str | None, str | None]] = [
    # what both containers ask for
    ('{"reasoning_trace": "Meniscus sign.", "answer": "B"}', "B", "B"),
    ('```json\n{"rationale": "Air bronchograms.", "final_answer": "C"}\n```', "C", "C"),
    ('Here you go: {"answer": "D"} thanks', "D", "D"),
    # normalize_mcq_answer reads "B. text" and "(C)" as the label
    ('{"answer": "B. Pleural effusion"}', "B", "B"),
    ('{"answer": "(C)"}', "C", "C"),
    # text markers: the template takes the text after the LAST "Final answer:", the
    # baseline the first line after the FIRST "answer:" (any case)
    ("Answer: B\nFinal answer: D", "D", "B"),
    ("reasoning...\nANSWER: $C$", "C", "C"),
    # "The answer is C": the template finds the word C; the baseline's first letter is the
    # T of "The", not a label, so it falls back to the first option
    ("The answer is C", "C", "A"),
    # the English article: both read option A
    ("A large effusion blunts the angle.", "A", "A"),
    # an option's text
    ("Findings favour consolidation", "C", "C"),
    # nothing to read: the template submits the reply itself (not a label: wrong), the
    # baseline the first option
    ("Unclear.", "Unclear.", "A"),
    # an empty answer field: every option text contains "", so the template submits A
    ('{"answer": ""}', "A", "A"),
    # JSON null is str()-ed to "None": no label and no option text holds "none", so the
    # template submits "None" (wrong); the baseline falls back to A
    ('{"answer": null}', "None", "A"),
    # nesting too deep for json.loads: the template does not catch RecursionError and stops
    ('{"answer": ' + "[" * 5000 + "]" * 5000 + "}", None, "A"),
]


@pytest.mark.parametrize(("reply", "template", "baseline"), ROWS)
def test_each_container_submits_what_its_parser_reads(
    reply: str, template: str | None, baseline: str | None
) -> None:
    assert official_reading(reply, OPTIONS, "template").submitted == template
    assert official_reading(reply, OPTIONS, "baseline").submitted == baseline


def test_the_official_rule_is_exact_match_after_strip() -> None:
    reading = official_reading('{"answer": "B"}', OPTIONS, "template")
    assert reading.correct("B") and reading.correct(" B ") and not reading.correct("b")
    stopped = official_reading('{"answer": ' + "[" * 5000 + "]" * 5000 + "}", OPTIONS, "template")
    assert stopped.submitted is None and not stopped.correct("A")
    assert "would stop" in stopped.how


def test_the_careful_reader_refuses_where_the_containers_guess() -> None:
    """The rows where a container guesses are rows the project's reader leaves unanswered:
    the two numbers differ exactly there, and the careful one never names a wrong label."""
    for reply in ("A large effusion blunts the angle.", "Unclear.", '{"answer": ""}'):
        assert extract_label(reply, OPTIONS).label is None
        assert official_reading(reply, OPTIONS, "baseline").submitted == "A"


def test_labels_are_matched_shortest_first_and_case_blind_by_the_template() -> None:
    options = [("A", "x"), ("AB", "y")]
    assert official_reading("Answer: ab", options, "template").submitted == "AB"
    assert official_reading("Answer: b", [("A", "x"), ("B", "y")], "template").submitted == "B"


def test_how_says_what_was_read() -> None:
    reading = official_reading("The answer is C", OPTIONS, "baseline")
    assert "first option" in reading.how and "'The answer is C'" in reading.how
