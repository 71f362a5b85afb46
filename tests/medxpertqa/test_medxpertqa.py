"""MedXpertQA-MM on small local files in its published schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import run_with_grader, scripted_output, user_text, write_jsonl, write_png
from inspect_ai.model import ChatMessage, ModelOutput

from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm


def test_medxpertqa_mm(tmp_path: Path) -> None:
    folder = tmp_path / "mx"
    write_png(folder / "images" / "MM-1-a.jpeg")
    write_png(folder / "images" / "MM-1-b.jpeg")
    write_png(folder / "images" / "MM-2-a.jpeg")
    rows = [
        {"id": "MM-1", "question": "Which diagnosis? Answer Choices: (A) a (B) b (C) c (D) d (E) e",
         "options": {"A": "Gout", "B": "Pseudogout", "C": "Septic arthritis", "D": "RA", "E": "OA"},
         "label": "C", "images": ["images/MM-1-a.jpeg", "images/MM-1-b.jpeg"],
         "medical_task": "Diagnosis", "body_system": "Skeletal", "question_type": "Reasoning"},
        {"id": "MM-2", "question": "Next step?",
         "options": {"A": "CT", "B": "MRI", "C": "Biopsy", "D": "Wait", "E": "Surgery"},
         "label": "A", "images": ["images/MM-2-a.jpeg"],
         "medical_task": "Treatment", "body_system": "Nervous", "question_type": "Understanding"},
    ]  # fmt: skip
    write_jsonl(folder / "test.jsonl", rows)
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
