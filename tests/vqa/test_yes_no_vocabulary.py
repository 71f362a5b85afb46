"""The VQA scorer reads short answers with the shared reader and counts yes/no by the
dataset's own vocabulary, recorded in the log (issue 31)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output, user_text
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from inspect_ai.solver import generate

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.short_answers import read_short_answer, read_yes_no
from inspect_medreason.vqa.scorer import closed_correct, vqa_scorer

# (question, reference, reply)
ROWS = [
    ("q-boxed", "yes", "Looking at the cortex.\n\\boxed{yes}"),
    ("q-tag", "no", "<answer>no</answer>"),
    ("q-stated", "yes", "The answer is yes."),
    ("q-opening", "no", "No, this is not a fracture: the cortex is continuous.\nMore detail."),
    ("q-think", "no", "<think>Answer: yes</think>\nANSWER: no"),
    ("q-true", "yes", "True."),
    ("q-both", "yes", "Yes and no, it depends on the view."),
]


def run(vocabulary: str, tmp_path: Path) -> EvalLog:
    samples = [
        Sample(
            input=question,
            target=reference,
            id=question,
            metadata={"question": question, "answer_type": "closed"},
        )
        for question, reference, _ in ROWS
    ]
    replies = {question: reply for question, _, reply in ROWS}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output(replies[user_text(messages)])

    task = Task(
        dataset=MemoryDataset(samples),
        solver=generate(),
        scorer=vqa_scorer(yes_no_vocabulary=vocabulary),
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / vocabulary),
    )
    assert log.status == "success", log.error
    return log


def scores(log: EvalLog) -> dict[str, Any]:
    assert log.samples is not None
    return {str(s.id): s.scores["vqa_scorer"] for s in log.samples if s.scores}


def test_vqa_rad_counts_yes_and_no_only(tmp_path: Path) -> None:
    log = run("vqa_rad", tmp_path)
    by_id = scores(log)
    for question in ("q-boxed", "q-tag", "q-stated", "q-opening", "q-think"):
        assert by_id[question].value == 1.0, (question, by_id[question].explanation)
    assert by_id["q-true"].value == 0.0
    assert "vqa_rad's rule" in by_id["q-true"].explanation
    assert by_id["q-both"].value == 0.0
    assert "both yes and no" in by_id["q-both"].explanation
    assert by_id["q-true"].metadata["yes_no_vocabulary"] == "vqa_rad"
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(5 / 7)
    # the choice is in the log's record of the scorer, not only per sample
    [recorded] = log.eval.scorers or []
    assert (recorded.options or {})["yes_no_vocabulary"] == "vqa_rad"


def test_slake_counts_its_synonyms(tmp_path: Path) -> None:
    by_id = scores(run("slake", tmp_path))
    assert by_id["q-true"].value == 1.0
    assert by_id["q-both"].value == 0.0  # still both at once: no answer
    assert by_id["q-true"].metadata["yes_no_vocabulary"] == "slake"


def test_an_unknown_vocabulary_is_refused_before_any_sample() -> None:
    with pytest.raises(TaskArgumentError, match="choose one of"):
        vqa_scorer(yes_no_vocabulary="radiology")


# (answer, question, polarity under slake): 存在/不存在 always; 正常/异常 by the question
CHINESE_POLARITY: list[tuple[str, str | None, str | None]] = [
    ("存在", "图中是否存在肺结节？", "yes"),
    ("不存在", "图中是否存在肺结节？", "no"),
    ("存在。", None, "yes"),
    ("有", "有没有积液？", "yes"),
    ("没有", "有没有积液？", "no"),
    ("是", "这是CT吗？", "yes"),
    ("否", "这是CT吗？", "no"),
    ("正常", "这张图片看起来正常吗？", "yes"),
    ("异常", "这张图片看起来正常吗？", "no"),
    ("不正常", "这张图片看起来正常吗？", "no"),
    ("正常", "肝脏是否存在异常？", "no"),
    ("异常", "肝脏是否存在异常？", "yes"),
    # the question does not say which polarity it asks, or asks both: no reading
    ("正常", None, None),
    ("正常", "这是什么器官？", None),
    ("异常", "这个肺是正常还是异常？", None),
]


@pytest.mark.parametrize(("answer", "question", "expected"), CHINESE_POLARITY)
def test_chinese_polarity_words(answer: str, question: str | None, expected: str | None) -> None:
    said, reason = read_yes_no(answer, "slake", question)
    assert said == expected, reason
    if expected is None:
        assert "question" in reason


def test_vqa_rad_does_not_read_chinese_normality() -> None:
    assert read_yes_no("正常", "vqa_rad", "这张图片看起来正常吗？")[0] is None


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        ("The lung", "Lung", True),
        ("the lungs", "Lung", True),
        ("A kidney.", "Kidney", True),
        ("Kidneys", "kidney", True),
        ("Pelvis", "pelvis", True),
        ("Left lung", "Lung", False),
        ("Liver", "Lung", False),
    ],
)
def test_closed_answers_drop_articles_and_plurals(
    answer: str, reference: str, expected: bool
) -> None:
    assert closed_correct(answer, reference, "slake") is expected


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("## Thinking\nThe pleura...\n## Final Response\nThe left lung", "The left lung"),
        ("Reasoning.\n\n**Final Answer**\n\nyes", "yes"),
        ("### Answer\n存在", "存在"),
        # a statement after the heading is read as it always was
        ("## Final Response\nSome words.\nThe answer is no.", "no."),
    ],
)
def test_answers_under_headings(reply: str, answer: str) -> None:
    assert read_short_answer(reply).text == answer


def test_the_question_decides_normality_in_a_run(tmp_path: Path) -> None:
    question = "这张图片看起来正常吗？"
    samples = [
        Sample(
            input=question,
            target="是",
            id="normal",
            metadata={"question": question, "answer_type": "closed"},
        )
    ]
    task = Task(
        dataset=MemoryDataset(samples),
        solver=generate(),
        scorer=vqa_scorer(yes_no_vocabulary="slake"),
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=[scripted_output("正常")]),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert scores(log)["normal"].value == 1.0
