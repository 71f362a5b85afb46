"""The medreason_prompt solver, and swapping it for another solver."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import scripted_output, user_text
from inspect_ai import eval
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentImage,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import multiple_choice

from inspect_medreason.medreason.medreason import mcq, open_ended


def test_the_solver_prompts_per_track_and_keeps_the_images(
    official_dataset: Path, tmp_path: Path
) -> None:
    seen: list[tuple[list[ChatMessage], GenerateConfig]] = []

    def respond(
        messages: list[ChatMessage], _tools: Any, _choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        seen.append((list(messages), config))
        return scripted_output(json.dumps({"reasoning_trace": "seen", "answer": "A"}))

    [log] = eval(
        mcq(data=str(official_dataset)),
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.samples is not None
    messages, _ = next(item for item in seen if "(q2)" in user_text(item[0]))
    assert isinstance(messages[0], ChatMessageSystem)  # the system prompt reaches the model
    text = user_text(messages)
    assert "Options:" in text and "B. Sagittal" in text and '"reasoning_trace"' in text
    images = [
        c
        for m in messages
        if not isinstance(m.content, str)
        for c in m.content
        if isinstance(c, ContentImage)
    ]
    assert len(images) == 2  # q2's two images, in order, untouched
    sample = next(s for s in log.samples if s.id == "q2")
    assert sample.choices == ["Axial", "Sagittal", "Coronal"] and sample.target == "C"
    # The sample itself carries the case: its question, not the prompt or a system message.
    first = sample.input[0] if isinstance(sample.input, list) else None
    assert first is not None and first.role == "user" and first.text.endswith("Which plane? (q2)")
    assert sample.scores is not None and sample.scores["mcq_scorer"].answer == "A"


def test_open_prompt_and_blind_notice(official_dataset: Path, tmp_path: Path) -> None:
    texts: list[str] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        texts.append(user_text(messages))
        return scripted_output(json.dumps({"reasoning_trace": "r", "answer": "a"}))

    [log] = eval(
        open_ended(data=str(official_dataset), images=False),
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
        score=False,
    )
    assert log.status == "success"
    [text] = texts
    assert text.startswith("Note: the image(s) for this question are withheld")
    assert "state uncertainty explicitly" in text and "Options:" not in text


def test_another_solver_runs_on_the_same_samples_and_is_scored(
    official_dataset: Path, tmp_path: Path
) -> None:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        letter = "C" if "(q2)" in text else "A"
        return scripted_output(f"Let me think.\nANSWER: {letter}")

    [log] = eval(
        mcq(data=str(official_dataset)),
        solver=multiple_choice(),
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.results is not None
    accuracy = (
        next(s for s in log.results.scores if s.name == "mcq_scorer").metrics["accuracy"].value
    )
    assert accuracy == 2 / 3  # q1 (A) and q2 (C) right, q3 (A for B) wrong
