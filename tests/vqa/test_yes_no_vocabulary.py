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
from inspect_medreason.vqa.scorer import vqa_scorer

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
