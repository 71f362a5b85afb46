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
from utils.published_schemas import vqa_rad_parquet

from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.solvers import RUN_SYSTEM_MESSAGE
from inspect_medreason.medreason.medreason import mcq, open_ended
from inspect_medreason.vqa.vqa import medreason_vqa_rad


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


def _system_turns(messages: list[ChatMessage]) -> list[str]:
    return [m.text for m in messages if isinstance(m, ChatMessageSystem)]


def test_the_track_prompt_is_a_system_message_in_the_samples_messages(
    official_dataset: Path, tmp_path: Path
) -> None:
    seen: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        seen.append(list(messages))
        return scripted_output(json.dumps({"reasoning_trace": "r", "answer": "A"}))

    [log] = eval(
        mcq(data=str(official_dataset)),
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.samples is not None
    system_text = load_template("mcq_system").text.strip()
    # Exactly one system turn reaches the model, and it is the track's (braces intact).
    assert all(_system_turns(messages) == [system_text] for messages in seen)
    for sample in log.samples:
        assert _system_turns(sample.messages) == [system_text]  # in the sample's messages
        assert sample.metadata["system_prompt"] == "mcq_system"


def test_the_runs_system_message_replaces_the_track_prompt_and_is_recorded(
    official_dataset: Path, tmp_path: Path
) -> None:
    seen: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        seen.append(list(messages))
        return scripted_output(json.dumps({"reasoning_trace": "r", "answer": "A"}))

    run_message = "You are a terse radiologist. Reply in JSON."
    [log] = eval(
        mcq(data=str(official_dataset)),
        # By name, as the command line gives it: Inspect gives the model the run's config.
        model="mockllm/model",
        model_args={"custom_outputs": respond},
        display="none",
        log_dir=str(tmp_path / "logs"),
        system_message=run_message,  # Inspect's own switch (--system-message)
    )
    assert log.status == "success" and log.samples is not None and len(seen) == 3
    # The run's message replaces the track's, never joins it, and is never ignored.
    assert all(_system_turns(messages) == [run_message] for messages in seen)
    assert all(s.metadata["system_prompt"] == RUN_SYSTEM_MESSAGE for s in log.samples)
    assert log.eval.model_generate_config.system_message == run_message


def test_a_template_tasks_system_prompt_follows_the_run_too(tmp_path: Path) -> None:
    data = vqa_rad_parquet(tmp_path / "vqa_rad")
    seen: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        seen.append(list(messages))
        return scripted_output("ANSWER: yes")

    for run_message in (None, "Answer briefly."):
        seen.clear()
        [log] = eval(
            medreason_vqa_rad(data=str(data)),
            model="mockllm/model",
            model_args={"custom_outputs": respond},
            model_roles={"grader": get_model("mockllm/model", custom_outputs=respond)},
            display="none",
            log_dir=str(tmp_path / "logs"),
            system_message=run_message,
            score=False,
        )
        assert log.status == "success" and log.samples is not None and seen
        expected = run_message or load_template("vqa_system", family="vqa").text.strip()
        assert all(_system_turns(messages) == [expected] for messages in seen)
        recorded = RUN_SYSTEM_MESSAGE if run_message else "vqa_system"
        assert all(s.metadata["system_prompt"] == recorded for s in log.samples)
