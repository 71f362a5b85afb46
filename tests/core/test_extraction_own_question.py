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
