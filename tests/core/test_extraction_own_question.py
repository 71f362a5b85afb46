"""Issue 59 item 3: a question the model writes itself is never the answer, however it is
headed; the answer stated before it is (MedGemma-4B writes ``**Final Answer:** A`` and then
``## Medical Question ... **Answer:** B`` in about 40% of its replies)."""

from __future__ import annotations

import time

import pytest

from inspect_medreason.core.extraction import extract_label

OPTIONS = [("A", "Pneumonia"), ("B", "Effusion"), ("C", "Edema"), ("D", "Normal")]

HEADINGS = [
    "## Medical Question",
    "**Question 2:**",
    "Q:",
    "### New Question",
    "Medical Question:",
    "## Practice question 3",
    "**Case 2**",
    "Next MCQ:",
    "> **Exercise 4.**",
    "问题2：",
    "题目",
    "【新问题】",
    "练习题目 3：",
]


@pytest.mark.parametrize("heading", HEADINGS)
def test_the_answer_before_an_invented_question_is_read(heading: str) -> None:
    reply = (
        "The film shows consolidation in the right lower lobe.\n\n**Final Answer:** A\n\n"
        f"{heading}\nWhich finding is shown?\nA. x\nB. y\n\n**Answer:** B"
    )
    assert extract_label(reply, OPTIONS).label == "A"


@pytest.mark.parametrize(
    "reply",
    [
        "## Question analysis\nIt asks about the lung.\n\nAnswer: B",
        "Some text.\n## Question analysis:\nIt asks X.\n\nAnswer: B",
        "Some text.\nThe question asks about the pleura.\nAnswer: B",
        "Some text.\nQuestion type: diagnosis.\nAnswer: B",
        "Some text.\nCase: a 40-year-old man with dyspnoea.\nAnswer: B",
        "Question: which finding is shown?\nThe answer is B",
    ],
)
def test_a_heading_about_the_given_question_does_not_hide_the_answer(reply: str) -> None:
    assert extract_label(reply, OPTIONS).label == "B"


@pytest.mark.parametrize(
    "lead_in",
    [
        "Here's another question for practice:",
        "Let's try a similar case:",
        "**Next practice question** -",
        "One more question:",
        "User: What about this one?",
        "Human: and the lateral film?",
        "<start_of_turn>user\nAnd this one?",
        "<|im_start|>user\nAnd this one?",
        "[INST] next one [/INST]",
    ],
)
def test_an_announced_question_or_a_new_turn_ends_the_reply(lead_in: str) -> None:
    """Issue 59 item 3: however the model moves on to a question of its own (announcing
    it, or running on into a new conversation turn), the answer before it is read."""
    reply = f"The costophrenic angle is blunted.\n\nAnswer: A<end_of_turn>\n\n{lead_in}\nAnswer: B"
    assert extract_label(reply, OPTIONS).label == "A"


@pytest.mark.parametrize(
    "reply",
    [
        "Let me consider the next case: the pleura.\nThe answer is B.",
        "The user asks about the pleura.\nAnswer: B",
        "**System:** respiratory\nAnswer: B",
        "Assistant: the film shows fluid.\nAnswer: B",
    ],
)
def test_words_about_the_given_question_do_not_end_the_reply(reply: str) -> None:
    assert extract_label(reply, OPTIONS).label == "B"


@pytest.mark.parametrize("heading", ["## Medical Question", "**Question 2:**", "Q:", "问题2："])
def test_the_json_answer_before_an_invented_question_is_read(heading: str) -> None:
    """The answer field of the JSON the prompt asks for is read before a question the
    model invents: the JSON it answers its own question with is never the answer."""
    reply = (
        '{"reasoning_trace": "Consolidation in the right lower lobe.", "answer": "A"}\n\n'
        f'{heading}\nWhich finding is shown?\nA. x\nB. y\n{{"reasoning_trace": "y", "answer": "B"}}'
    )
    found = extract_label(reply, OPTIONS)
    assert (found.label, found.method) == ("A", "json_answer_field")
    # the given question restated before the JSON is no invented one
    restated = 'Question: which finding is shown?\n{"reasoning_trace": "x", "answer": "C"}'
    assert extract_label(restated, OPTIONS).label == "C"
    # and JSON only after an invented question is no answer at all, never its label
    late = f'The film shows consolidation.\n\n{heading}\nWhich?\n{{"answer": "B"}}'
    assert extract_label(late, OPTIONS).label != "B"


@pytest.mark.parametrize(
    "invented",
    [
        "A 30-year-old woman has a cough. What is the next step?\nA) X-ray\nB) CT\nC) MRI\n"
        "**Answer:** B",
        "Which organ is most often injured in blunt trauma?\n(A) Spleen\n(B) Liver\n\nAnswer: A",
        "**Which vaccine is due at 12 months?**\nA. Tdap\nB. MMR\nThe answer is B.",
    ],
)
def test_an_unheaded_question_with_its_own_options_after_the_answer_ends_the_reply(
    invented: str,
) -> None:
    """Issue 59: MedGemma answers, then writes a new vignette with no heading at all, its
    own options and its own answer; the answer given before it is the reply's."""
    reply = f"The angle is blunted.\n\n**Final Answer:** D\n{invented}"
    assert extract_label(reply, OPTIONS).label == "D"


def test_a_restated_question_with_its_options_before_any_answer_is_the_question_asked() -> None:
    reply = "Which finding is shown?\nA. Pneumonia\nB. Effusion\n\nThe angle is blunted.\nAnswer: B"
    assert extract_label(reply, OPTIONS).label == "B"


@pytest.mark.parametrize(
    "lead_in", ["Let's analyze each option:", "Now consider every option:", "The other options:"]
)
def test_a_review_lead_in_is_no_answer_even_when_the_review_is_cut_off(lead_in: str) -> None:
    reply = f"Answer: C\n\nWhy:\n{lead_in}\n\n*   **A) Pneumonia:** there is no consolidation"
    assert extract_label(reply, OPTIONS).label == "C"


def test_many_question_lines_are_read_in_linear_time() -> None:
    """Looking for a question the model wrote itself is done once per reply, not once per
    line: lines ending in "?" by the thousand, with an answer marker at the start, at the
    end or nowhere, took 40-120 s each before; together they take well under 10 s."""
    started = time.perf_counter()
    for reply in (
        "Is it?\n" * 5_000,
        "word " * 20_000 + "?\n" * 3_000,
        "?\n" * 30_000 + "Answer: B",
        "Answer: B\n" + "Is it?\nA. x\nB. y\n" * 2_000,
    ):
        assert extract_label(reply, OPTIONS).reading in {None, "B"}
    assert time.perf_counter() - started < 10
