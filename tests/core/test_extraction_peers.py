"""Issue 40: the ideas of other frameworks' answer-parsing tests, in this project's own rows
(VLMEvalKit's ``can_infer``, MMMU / MMMU-Pro's ``parse_multi_choice_response``,
simple-evals' multilingual answer pattern, lm-eval-harness' ``MultiChoiceRegexFilter``,
OpenCompass' ``first_option_postprocess``): what they read is read here too, and where they
would guess (a first letter, a random option, a refusal taken as a label) the reply is no
answer."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import NO_ANSWER_METHODS, extract_label

CHEST = [("A", "Pneumothorax"), ("B", "Pleural effusion"), ("C", "Consolidation"),
         ("D", "Cardiomegaly")]  # fmt: skip

ROWS: list[tuple[str, str | None]] = [
    # VLMEvalKit can_infer: a bare label, a bracketed one, one option's text
    ("B", "B"),
    ("(B)", "B"),
    ("B.", "B"),
    ("Pleural effusion", "B"),
    # ... and its rejections: a refusal is no answer, as are several options
    ("Sorry, I can't help with images of people yet.", None),
    ("I'm sorry, but without the image provided, I cannot answer.", None),
    ("Cannot determine the answer", None),
    ("Pleural effusion or consolidation", None),
    ("A and B", None),
    ("Both A and C", None),
    # MMMU / MMMU-Pro: bracketed labels and option content after an answer phrase; a label
    # merely mentioned mid-sentence is not chosen (MMMU would take it, or guess at random)
    ("Answer: (C)", "C"),
    ("The correct answer is (C) Consolidation.", "C"),
    ("I believe the answer is C. Consolidation explains the air bronchograms.", "C"),
    ("After reviewing, (C) fits best, though (A) is close.", None),
    # simple-evals: "Answer:" with spacing, dollars, full-width letters, a line break
    ("Answer: $B$", "B"),
    ("Answer : D", "D"),
    ("ANSWER:B", "B"),
    ("答案：Ｄ", "D"),
    ("Answer:\nC", "C"),
    ("ANSWER: ب", None),  # another alphabet's letter is not mapped onto A-D here
    # lm-eval-harness: "the answer is (X)", any case
    ("so the answer is (d).", "D"),
    ("The answer is: A", "A"),
    ("THE ANSWER IS B", "B"),
    # OpenCompass first_option_postprocess, Chinese
    ("答案是B", "B"),
    ("答案应该是C", "C"),
    ("答案为：A", "A"),
    ("故答案为D。", "D"),
    ("故选D", "D"),
    ("选C", "C"),
    ("选项A正确", "A"),
    ("正确答案是 B", "B"),
    ("C。", "C"),
    ("B：胸腔积液", "B"),
    # where a first-letter or regex reader guesses, a person reads none
    ("A large left pneumothorax? No: the lung markings reach the chest wall.", None),
    ("Either B or C.", None),
    ("I cannot decide between A and D.", None),
    ("Not A.", None),
]


@pytest.mark.parametrize(("reply", "expected"), ROWS)
def test_peer_framework_forms(reply: str, expected: str | None) -> None:
    result = extract_label(reply, CHEST)
    assert result.reading == expected, (result.method, result.detail)
    if expected is None:
        assert result.method in NO_ANSWER_METHODS
