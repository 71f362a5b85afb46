"""Issue 59 item 3: a question the model writes itself is never the answer, however it is
headed; the answer stated before it is (MedGemma-4B writes ``**Final Answer:** A`` and then
``## Medical Question ... **Answer:** B`` in about 40% of its replies)."""

from __future__ import annotations

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
