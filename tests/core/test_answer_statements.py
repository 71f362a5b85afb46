"""Issue 31: one reader of answer statements reads every answer a person would read (MCQ
labels, yes/no, short answers; English and Chinese) and still never guesses. Rows of the
project's own making, one table per class the issue names."""

from __future__ import annotations

import time

import pytest

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.extraction import NO_ANSWER_METHODS, extract_label, strip_thinking
from inspect_medreason.core.short_answers import (
    YES_NO_VOCABULARIES,
    read_short_answer,
    read_yes_no,
    yes_no_vocabulary,
)

SHAPES = [("A", "a triangle"), ("B", "a yellow bus"), ("C", "the nucleus"), ("D", "three objects")]
CHEST = [("A", "气胸"), ("B", "胸腔积液"), ("C", "肺实变"), ("D", "肺结节")]
HEPATITIS = [("A", "Hepatitis B"), ("B", "Hepatitis C"), ("C", "Hepatitis E"),
             ("D", "Autoimmune hepatitis")]  # fmt: skip
GERMS = [
    ("A", "Streptococcus"),
    ("B", "Staphylococcus"),
    ("C", "Klebsiella"),
    ("D", "Pseudomonas"),
    ("E", "Enterococcus"),
]

# (reply, options, label read)
READ: list[tuple[str, list[tuple[str, str]], str]] = [
    # JSON answer fields
    ('{"reasoning_trace": "Round nucleus.", "answer": "C"}', SHAPES, "C"),
    ('```json\n{"rationale": "Three shapes.", "final_answer": "(d)"}\n```', SHAPES, "D"),
    # ANSWER:-style markers, English and Chinese
    ("The bus is yellow.\nFinal Answer: B", SHAPES, "B"),
    ("答：C", SHAPES, "C"),
    ("回答：B", SHAPES, "B"),
    ("解答：A", SHAPES, "A"),
    ("正确答案是C", SHAPES, "C"),
    ("分析：细胞核位于中央。\n答：（C）", SHAPES, "C"),
    ("【答案】C", SHAPES, "C"),
    ("B选项正确", SHAPES, "B"),
    # \boxed{}, <answer> tags, "the answer is"
    ("So we get $\\boxed{D}$.", SHAPES, "D"),
    ("<answer>B</answer>", SHAPES, "B"),
    ("The answer is clearly (C).", SHAPES, "C"),
    ("The answer is most likely D because three objects are shown.", SHAPES, "D"),
    ("I think it's C", SHAPES, "C"),
    # a line that concludes with nothing but a label, and "I'd say"
    ("It is B.", SHAPES, "B"),
    ("Looking at the image.\nTherefore, **D**", SHAPES, "D"),
    ("So it's (C)", SHAPES, "C"),
    ("I'd say B", SHAPES, "B"),
    ("I would say a triangle.", SHAPES, "A"),
    ("B would be my answer.", SHAPES, "B"),
    ("So B is correct.", SHAPES, "B"),
    # a negated Chinese choice names what is not chosen
    ("本题选C，不选A。", CHEST, "C"),
    ("选C，故不选B", CHEST, "C"),
    # a sentence describing the answer after it is no statement
    ("Answer: B\nThe answer is supported by the blunted costophrenic angle.", SHAPES, "B"),
    # a disease named with a letter is its option's text, not the letter
    ("Hepatitis B is the most likely diagnosis.", HEPATITIS, "A"),
    ("I believe it is (B).", SHAPES, "B"),
    ("I think it's the nucleus.", SHAPES, "C"),
    # a thinking model: the trace is never the answer
    ("<think>The answer is A.</think>\nThe answer is D.", SHAPES, "D"),
    ('<think>Option B looks right</think>{"answer": "C"}', SHAPES, "C"),
    ("It could be A. It could be B.</think>\nANSWER: B", SHAPES, "B"),
    # a label opening the reply, a separator and text
    ("B. a yellow bus", SHAPES, "B"),
    ("(b) the nucleus", SHAPES, "B"),
    ("D) three objects", SHAPES, "D"),
    ("A: a triangle", SHAPES, "A"),
    ("B - the yellow bus on the left", SHAPES, "B"),
    ("**C.** The nucleus sits in the centre.\nIt is round.", SHAPES, "C"),
    ("B。不是 A", SHAPES, "B"),
    ("B, not A: the bus is yellow.", SHAPES, "B"),
    # an option's Chinese text inside a sentence
    ("影像显示右侧胸腔积液。", CHEST, "B"),
    ("考虑为肺实变，建议随访。", CHEST, "C"),
    # the last statement stays authoritative over an opening label
    ("A. a triangle\nOn reflection, the answer is B.", SHAPES, "B"),
]

# (reply, options, method, words the reason must hold)
REFUSED: list[tuple[str, list[tuple[str, str]], str, str]] = [
    ("B\nD", SHAPES, "ambiguous", "several lines"),
    ("Low vitamin D is the most likely cause.", SHAPES, "unparsed", "no answer statement"),
    ("Plan B is the best option here.", SHAPES, "unparsed", "no answer statement"),
    ("The answer is B. fragilis.", GERMS, "no_option", "B. fragilis"),
    ("The answer is not B.", SHAPES, "no_option", "not B"),
    ("It is not B.", SHAPES, "unparsed", "no answer statement"),
    ("It is B or C.", SHAPES, "unparsed", "no answer statement"),
    ("Answer: A or B", SHAPES, "ambiguous", "no single option"),
    ("A, B, and C", SHAPES, "ambiguous", "several labels"),
    ("A. a triangle, or B. a yellow bus", SHAPES, "ambiguous", "also names B"),
    ("B is not my selection.", SHAPES, "unparsed", "no answer statement"),
    ("B: incorrect, the bus is red.", SHAPES, "denied_label", "deny"),
    ("C. The nucleus is not visible here.", SHAPES, "denied_label", "deny"),
    ("I don't know.", [(c, f"finding {c}") for c in "ABCDEFGHI"], "unparsed", "no answer"),
    ("I think it's a hard call.", SHAPES, "unparsed", "no answer statement"),
    ("<answer>A <answer>B</answer></answer>", SHAPES, "broken_tag", "nested"),
    ("<answer>B</answer>\n<answer>C<answer>D</answer>", SHAPES, "broken_tag", "nested"),
    ("<think>The answer is B, the yellow bus", SHAPES, "thinking_only", "never closes"),
    ("E. coli is the most likely organism.", GERMS, "unparsed", "no answer statement"),
    ("未见胸腔积液。", CHEST, "unparsed", "no option's text"),
    ("不考虑胸腔积液。", CHEST, "unparsed", "no option's text"),
    ("胸腔积液不明显，肺实变可能。", CHEST, "unparsed", "no option's text"),
    ("A - a triangle\nB - a yellow bus\nC - the nucleus", SHAPES, "unparsed", "no answer"),
    ("A: a triangle - no. B: a yellow bus - yes.", SHAPES, "ambiguous", "also names B"),
    ("Answer: B\nFinal answer: cannot be determined", SHAPES, "no_option", "no single option"),
]


@pytest.mark.parametrize(("reply", "options", "expected"), READ)
def test_every_answer_statement_is_read(
    reply: str, options: list[tuple[str, str]], expected: str
) -> None:
    result = extract_label(reply, options)
    assert result.reading == expected, (result.method, result.detail)


@pytest.mark.parametrize(("reply", "options", "method", "reason"), REFUSED)
def test_no_guess_and_the_reason_is_given(
    reply: str, options: list[tuple[str, str]], method: str, reason: str
) -> None:
    result = extract_label(reply, options)
    assert result.reading is None, (result.method, result.detail)
    assert result.method == method and result.method in NO_ANSWER_METHODS
    assert reason in result.detail, result.detail


@pytest.mark.parametrize("reply", ["<answer>B</answr>", "The bus is yellow. B</answer>"])
def test_a_broken_tag_holding_one_label_is_read_as_the_answer_amid_broken_tags(
    reply: str,
) -> None:
    """A tag a person reads past (``</answr>``, a closing tag with no opening) holding one
    label is read by broken_format_ending (proven in robust-v11), and says so."""
    result = extract_label(reply, SHAPES)
    assert (result.label, result.method) == ("B", "broken_format_ending")
    assert "broken tags" in result.detail, result.detail


def test_the_label_readings_name_no_wrong_option() -> None:
    """Every read row's label is its own; a refused statement put after a clear answer is
    still refused (the last statement is authoritative), never read as the earlier label.
    (A reply's opening and a refused hedge are statements only where they stand first or
    name an option, so they are not among these.)"""
    for reply, options, expected in READ:
        assert extract_label(reply, options).reading in {expected}
    statements = [
        (reply, options)
        for reply, options, method, _ in REFUSED
        if method in {"broken_tag", "no_option"} or reply in {"B\nD", "Answer: A or B"}
    ]
    assert len(statements) >= 6
    for reply, options in statements:
        assert extract_label(f"Answer: A\n{reply}", options).reading is None, reply


def test_thinking_is_set_aside_in_linear_time() -> None:
    assert strip_thinking("<think>x</think>ANSWER: B").text == "ANSWER: B"
    assert strip_thinking("ANSWER: B").unclosed_thinking is False
    started = time.perf_counter()
    for reply in ("<think>" * 50_000, "</think>" * 50_000, "B. x\n" * 50_000):
        extract_label(reply, SHAPES)
    assert time.perf_counter() - started < 10


# (reply, answer text read, method)
SHORT: list[tuple[str, str, str]] = [
    ("\\boxed{yes}", "yes", "boxed"),
    ("<answer>no</answer>", "no", "answer_tag"),
    ("The answer is yes.", "yes.", "answer_statement"),
    ("Reasoning about the cortex.\nANSWER: No", "No", "answer_line"),
    ('{"reasoning_trace": "Cortex intact.", "answer": "no"}', "no", "json_answer_field"),
    ("答案是：否", "否", "chinese_statement"),
    ("<think>Answer: yes</think>\nAnswer: no", "no", "answer_line"),
    ("Answer:\n\nleft kidney", "left kidney", "answer_line"),
    (
        "No, this is not a fracture: the cortex is continuous and the trabecular pattern is "
        "normal across the whole distal radius.",
        "No, this is not a fracture: the cortex is continuous and the trabecular pattern is "
        "normal across the whole distal radius.",
        "opening_yes_no",
    ),
    ("Yes.\n\nThe heart is enlarged beyond half the thoracic width.", "Yes.", "opening_yes_no"),
    ("是的，肺部有积液。\n详见下文。", "是的,肺部有积液。", "opening_yes_no"),
    ("Liver", "Liver", "bare_reply"),
]


@pytest.mark.parametrize(("reply", "text", "method"), SHORT)
def test_short_answers_are_read_like_labels(reply: str, text: str, method: str) -> None:
    answer = read_short_answer(reply)
    assert (answer.text, answer.method) == (text, method)


@pytest.mark.parametrize(
    ("reply", "method", "reason"),
    [
        ("<answer>yes<answer>no</answer></answer>", "broken_tag", "nested"),
        ("<think>Answer: yes", "thinking_only", "never closes"),
        ("Long reasoning\nwithout any conclusion at all", "unparsed", "no answer statement"),
        ("Answer: yes\n\\boxed{}", "empty_statement", "states nothing"),
    ],
)
def test_short_answers_refused_say_why(reply: str, method: str, reason: str) -> None:
    answer = read_short_answer(reply)
    assert answer.text == "" and answer.method == method and reason in answer.detail


@pytest.mark.parametrize(
    ("text", "vocabulary", "expected"),
    [
        ("yes", "vqa_rad", "yes"),
        ("No, this is not a fracture.", "vqa_rad", "no"),
        ("true", "vqa_rad", None),  # VQA-RAD's peers count yes and no only
        ("No doubt, the heart is enlarged.", "vqa_rad", None),  # an idiom, not "no"
        ("No idea.", "slake", None),
        ("No fracture is seen.", "vqa_rad", "no"),
        ("False.", "path_vqa", None),
        ("present", "vqa_rad", None),
        ("true", "slake", "yes"),  # SLAKE's synonyms
        ("否", "slake", "no"),
        ("没有", "slake", "no"),
        ("是的,肺部有积液。", "slake", "yes"),
        ("否", "vqa_rad", None),
        ("yes and no", "slake", None),
        ("Yes and no, it depends.", "vqa_rad", None),
        ("yes or no", "default", None),
    ],
)
def test_yes_no_follows_each_datasets_vocabulary(
    text: str, vocabulary: str, expected: str | None
) -> None:
    said, reason = read_yes_no(text, vocabulary)
    assert said == expected
    assert bool(reason) is (expected is None)


def test_a_refused_yes_no_says_why() -> None:
    assert "vqa_rad's rule" in read_yes_no("true", "vqa_rad")[1]
    assert "both yes and no" in read_yes_no("Yes and no.", "slake")[1]
    assert "neither yes nor no" in read_yes_no("the left lung", "slake")[1]


def test_vocabularies_are_recordable_and_unknown_ones_refused() -> None:
    record = yes_no_vocabulary("vqa_rad").as_record()
    assert record["yes"] == ["yes"] and record["no"] == ["no"] and record["rule"]
    assert set(YES_NO_VOCABULARIES) >= {"default", "vqa_rad", "path_vqa", "slake"}
    with pytest.raises(TaskArgumentError, match="yes_no_vocabulary='rad'"):
        yes_no_vocabulary("rad")
