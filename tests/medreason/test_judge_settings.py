"""One path for judge settings: a judge's temperature, seed and max_tokens travel with its
Inspect model role; the protocol's defaults fill in what the role leaves unset; what was
used is in the log. The other judge arguments are declared and checked in one place, and
the old -T spellings still work for one version, with a warning."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output
from inspect_ai import eval
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.judges import GRADER_MAX_TOKENS, JUDGE_DEFAULTS, judge_arguments
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.medreason.medreason import open_ended
from inspect_medreason.vqa.vqa import medreason_vqa_rad


def answer(*_: Any) -> ModelOutput:
    return scripted_output(json.dumps({"reasoning_trace": "A dense region.", "answer": "x"}))


class RecordingJudge:
    """A judge that scores 3 and remembers the generation config of every call."""

    def __init__(self) -> None:
        self.configs: list[GenerateConfig] = []

    def __call__(
        self, messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        self.configs.append(config)
        return scripted_output('{"score": 3, "rationale": "ok"}')


def run(task: Any, grader: Any, vision: Any, tmp_path: Path) -> Any:
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=answer),
        model_roles={"grader": grader, "vision_grader": vision},
        limit=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def judge_records(log: Any) -> list[dict[str, Any]]:
    """Every component's judge record of every sample (a single judge per role here)."""
    return [
        record
        for sample in log.samples
        for record in sample.scores["open_ended_scorer"].metadata["judges"].values()
    ]


def test_a_roles_own_generation_settings_are_used_and_logged(tmp_path: Path) -> None:
    text, vision = RecordingJudge(), RecordingJudge()
    grader = get_model(
        "mockllm/model",
        custom_outputs=text,
        config=GenerateConfig(temperature=0.7, max_tokens=99),
        memoize=False,
    )
    log = run(
        open_ended(),
        grader,
        get_model("mockllm/model", custom_outputs=vision, memoize=False),
        tmp_path,
    )
    assert text.configs and {(c.temperature, c.max_tokens, c.seed) for c in text.configs} == {
        (0.7, 99, 42)
    }
    # the role that sets nothing is called with the protocol's defaults
    assert {(c.temperature, c.max_tokens, c.seed) for c in vision.configs} == {(0.0, 512, 42)}
    by_role = {record["role"]: record["generation"] for record in judge_records(log)}
    assert by_role["grader"] == {
        "temperature": 0.7,
        "seed": 42,
        "max_tokens": 99,
        "from": {"temperature": "role", "seed": "default", "max_tokens": "role"},
    }
    assert by_role["vision_grader"]["from"] == {
        "temperature": "default",
        "seed": "default",
        "max_tokens": "default",
    }
    judges = (log.eval.metadata or {})["judges"]
    assert "model role's own" in judges["generation_rule"]
    assert judges["settings"]["temperature"] == 0.0  # the default where a role sets none


@pytest.mark.parametrize(
    ("given", "setting", "value"),
    [
        ("judge_temperature", "temperature", 0),
        ("judge_seed", "seed", 42),
        ("judge_max_tokens", "max_tokens", 512),
    ],
)
def test_the_removed_spellings_are_refused_with_what_to_give_instead(
    given: str, setting: str, value: int
) -> None:
    with pytest.raises(TaskArgumentError) as refusal:
        open_ended(**{given: 0.2})
    assert (
        f"-T {given} (it was removed: give the judge's {setting} with its role, "
        f"--model-role 'grader={{model: ..., {setting}: {value}}}')"
    ) in str(refusal.value.message)


def test_judge_arguments_are_declared_once_and_checked_before_anything_runs() -> None:
    # each is a parameter of its own: a name a task does not take is refused, naming the one
    # it likely misspells
    with pytest.raises(TaskArgumentError, match=r"judge_timoeut \(did you mean -T judge_timeout"):
        open_ended(judge_timoeut=0)
    with pytest.raises(TaskArgumentError, match=r"judge_temprature \(-T judge_temperature was re"):
        open_ended(judge_temprature=0)
    with pytest.raises(TaskArgumentError, match=r"medreason_vqa_rad takes no -T panel_reduce"):
        medreason_vqa_rad(data=str(sample_data_dir()), panel_reduce="mean")
    with pytest.raises(TaskArgumentError, match=r"judge_timeout"):
        open_ended(judge_timeout=-1)
    with pytest.raises(TaskArgumentError, match=r"panel_reduce='mode'"):
        open_ended(panel_reduce="mode")
    judges = judge_arguments(
        allow_self_judging="no",
        retries="3",
        structured_output=True,
        cache=False,
        timeout="30",
        max_connections=None,
        reply_budget=GRADER_MAX_TOKENS,
    )
    assert judges.settings == replace(
        JUDGE_DEFAULTS, retries=3, timeout=30.0, max_tokens=GRADER_MAX_TOKENS
    )
    assert judges.allow_self_judging is False
    # what every judged scorer is built with: its judge_* parameters, one by one
    assert judges.scorer_arguments() == {
        "allow_self_judging": False,
        **{f"judge_{name}": value for name, value in asdict(judges.settings).items()},
    }
