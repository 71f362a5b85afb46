"""MedXpertQA-MM on small local files in its published schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import run_with_grader, scripted_output, user_text
from inspect_ai.model import ChatMessage, ModelOutput
from utils.published_schemas import medxpertqa_folder

from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm


def test_medxpertqa_mm(tmp_path: Path) -> None:
    folder = tmp_path / "mx"
    medxpertqa_folder(folder)
    seen: dict[str, str] = {}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        seen["MM-1" if "Which diagnosis" in text else "MM-2"] = text
        return scripted_output("ANSWER: C" if "Which diagnosis" in text else "The answer is B.")

    log = run_with_grader(medxpertqa_mm(data=str(folder)), respond, tmp_path)
    assert "Answer Choices" not in seen["MM-1"] and "C. Septic arthritis" in seen["MM-1"]
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 0.5
    assert (
        metrics["accuracy by body_system:Skeletal"].value == 1.0
        and metrics["accuracy by medical_task:Treatment"].value == 0.0
    )
    assert log.samples is not None
    first_turn = log.samples[0].input[-1]
    assert not isinstance(first_turn, str) and len(first_turn.content) == 3
