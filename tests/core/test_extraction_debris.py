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
