"""NEW_BENCHMARK on small files in its published layout: rows become samples, a missing
field is refused with where it is, known replies score as they should, and the task runs
end to end on mockllm (with the blind control and an image shift). Nothing downloads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import datasets
import pytest
from conftest import scripted_output, user_text
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage, ModelOutput, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target
from inspect_ai.solver import TaskState

# Only the family's own modules (DatasetError through dataset.py), so the imports' order
# does not depend on the family's name.
from inspect_medreason.new_benchmark import (
    new_benchmark,
    new_benchmark_scorer,
)
from inspect_medreason.new_benchmark.dataset import (
    DatasetError,
    record_to_sample,
)

from .published_layout import TEST_ROWS, published_snapshot


def wrong_answer(reference: str) -> str:
    """An answer other than ``reference``: another row's, or a made-up one."""
    others = [answer for _, answer in TEST_ROWS if answer.lower() != reference.lower()]
    return others[0] if others else f"not {reference}"


# Replies to the test split's questions, made from its rows (whatever cases you write there):
# the first read and right, the second read and wrong, every other one no answer.
REPLIES = {
    TEST_ROWS[0][0]: f"Looking at the image.\nANSWER: {TEST_ROWS[0][1]}",
    TEST_ROWS[1][0]: f"ANSWER: {wrong_answer(TEST_ROWS[1][1])}",
    **{question: "I cannot tell.\nThe image is too small." for question, _ in TEST_ROWS[2:]},
}


def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    text = user_text(messages)
    for question, reply in REPLIES.items():
        if question in text:
            return scripted_output(reply)
    raise AssertionError(f"an unexpected prompt: {text[:200]}")


def run(task_args: dict[str, Any], tmp_path: Path) -> EvalLog:
    data = published_snapshot(tmp_path / "data")
    [log] = eval(
        new_benchmark(data=str(data), **task_args),
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def images_sent(log: EvalLog) -> int:
    return sum(
        isinstance(part, ContentImage)
        for sample in log.samples or []
        for message in sample.messages
        if isinstance(message, ChatMessageUser) and not isinstance(message.content, str)
        for part in message.content
    )


def test_a_row_becomes_a_sample_with_its_question_and_answer() -> None:
    sample = record_to_sample({"question": "Is it?", "answer": "yes"}, "case_1", [])
    assert sample.id == "case_1"
    assert sample.target == "yes"
    assert sample.metadata is not None and sample.metadata["question"] == "Is it?"


def test_a_missing_field_is_refused_with_its_file_row_and_field(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    datasets.Dataset.from_dict(
        {"image": ["a.png"], "question": ["Is it?"], "answer": [""]}
    ).to_parquet(str(tmp_path / "data" / "test-00000-of-00001-0123abcd.parquet"))
    with pytest.raises(DatasetError, match=r"row 0.*answer"):
        new_benchmark(data=str(tmp_path))


def scored(reply: str, target: str) -> Score:
    state = TaskState(
        model="mockllm/model",  # type: ignore[arg-type]
        sample_id="case_1",
        epoch=1,
        input="Is it?",
        messages=[],
        output=ModelOutput.from_content(model="mockllm", content=reply),
    )
    score = asyncio.run(new_benchmark_scorer()(state, Target(target)))
    assert score is not None
    return score


@pytest.mark.parametrize(
    ("reply", "value", "answer"),
    [
        ("It is.\nANSWER: Yes.", CORRECT, "Yes."),
        ("ANSWER: no", INCORRECT, "no"),
        ("I cannot tell.\nThe image is too small.", INCORRECT, ""),  # no answer, never a guess
    ],
)
def test_the_scorer_on_known_replies(reply: str, value: str, answer: str) -> None:
    score = scored(reply, "yes")
    assert (score.value, score.answer) == (value, answer)
    assert str(score.explanation).startswith("no answer:") == (answer == "")


def test_known_replies_score_as_they_should_end_to_end(tmp_path: Path) -> None:
    log = run({}, tmp_path)
    assert log.samples is not None and len(log.samples) == len(TEST_ROWS)  # the test split
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(1 / len(TEST_ROWS))
    explanations = [
        str(score.explanation) for sample in log.samples for score in (sample.scores or {}).values()
    ]
    assert sum(e.startswith("no answer:") for e in explanations) == len(TEST_ROWS) - 2  # no guess
    assert images_sent(log) == len(TEST_ROWS)
    assert log.eval.metadata is not None and log.eval.metadata["split"] == "test"


def test_the_blind_control_sends_no_image_and_says_so(tmp_path: Path) -> None:
    log = run({"images": False}, tmp_path)
    assert images_sent(log) == 0
    assert log.samples and all(s.metadata["images_withheld"] for s in log.samples)
    assert log.eval.metadata is not None and log.eval.metadata["images"] is False


def test_an_image_shift_is_applied_and_recorded(tmp_path: Path) -> None:
    log = run({"shift": "noise", "severity": 2, "shift_seed": 1}, tmp_path)
    assert log.eval.metadata is not None
    assert log.eval.metadata["shift"]["severity"] == 2
    assert log.samples
    assert all(
        s.metadata["shift"]["model"] and s.metadata["shift"]["severity"] == 2 for s in log.samples
    )
