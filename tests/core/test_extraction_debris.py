"""Issue 59 item 6: debris after a clear final answer (an empty ``Final Answer:``, a code
fence, a code line) does not undo it; a later statement that says something still does."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import extract_label

OPTIONS = [("A", "Pneumonia"), ("B", "Effusion"), ("C", "Edema")]


@pytest.mark.parametrize(
    "reply",
    [
        "Final Answer: B\n\nFinal Answer:",
        "Final Answer: B\n\n**Final Answer:**\n```\n```",
        "The answer is B.\nAnswer: \n```python\nprint(1)\n```",
        "Final Answer: B\nprint(x)",
        "Final Answer: B\n```",
    ],
)
def test_debris_after_the_answer_does_not_undo_it(reply: str) -> None:
    assert extract_label(reply, OPTIONS).label == "B"


@pytest.mark.parametrize(
    "reply",
    ["Answer: B\nFinal Answer: unknown", "Answer: B\n\\boxed{}", "Final Answer:", "Answer: B or C"],
)
def test_a_later_statement_that_says_something_still_counts(reply: str) -> None:
    assert extract_label(reply, OPTIONS).label is None


YES_NO = [("A", "yes"), ("B", "no")]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The pleura is smooth.\nSo, the answer to this question is no.", "B"),
        ("So, the answer to this question is no. The effusion is absent.", "B"),
        ("The answer to the question would be yes.", "A"),
        ("So, the answer to this question is yes or no, I cannot tell.", None),
        ("The answer to this question is complex.", None),
    ],
)
def test_issue_59_item_4_yes_no_committed_in_the_reply(reply: str, expected: str | None) -> None:
    """Item 4: 'the answer to this question is no' commits to no; a hedge is no answer."""
    assert extract_label(reply, YES_NO).label == expected
