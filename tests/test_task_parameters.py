"""Every task parameter is visible to Inspect: a named parameter of the task function (none
hidden in ``**kwargs``), documented with an ``Args:`` entry; the judge parameters are the
same set with the same defaults (JudgeSettings') on every judged task."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import Task, eval

import inspect_medreason._registry as registry
from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.judges import (
    DEFAULT_PANEL_REDUCE,
    DEPRECATED_JUDGE_PARAMETERS,
    JUDGE_DEFAULTS,
    JUDGE_PARAMETERS,
    PANEL_PARAMETERS,
    PROMPT_PARAMETERS,
)


def registered_tasks() -> dict[str, Callable[..., Task]]:
    found = {}
    for name in registry.__all__:
        candidate = getattr(registry, name)
        if callable(candidate) and typing.get_type_hints(candidate).get("return") is Task:
            found[name] = candidate
    return found


TASKS = registered_tasks()


def documented_arguments(function: Callable[..., Any]) -> list[str]:
    """The names of a Google-style docstring's ``Args:`` entries."""
    doc = inspect.getdoc(function) or ""
    section = re.search(r"^Args:\n((?:[ \t]+.*\n?|\n)*)", doc, re.MULTILINE)
    if section is None:
        return []
    lines = section.group(1).splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return [
        line.strip().split(":", 1)[0]
        for line in lines
        if line.strip() and len(line) - len(line.lstrip()) == indent
    ]


def test_the_registry_lists_every_task_its_families_declare() -> None:
    """The registry's tasks are those the families' eval.yaml files declare, so a task this
    test's parametrisation missed (or one registered without its eval.yaml) fails here."""
    families = Path(registry.__file__).parent
    declared = {
        entry["name"]
        for path in families.glob("*/eval.yaml")
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["tasks"]
    }
    assert set(TASKS) == declared


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_parameter_is_named_and_documented(name: str) -> None:
    parameters = inspect.signature(TASKS[name]).parameters
    hidden = [
        p.name
        for p in parameters.values()
        if p.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    assert not hidden, f"{name} hides parameters in *{hidden}"
    assert documented_arguments(TASKS[name]) == list(parameters), (
        f"{name}: its Args: entries must name each parameter, in order"
    )


@pytest.mark.parametrize(
    "name", sorted(n for n in TASKS if "allow_self_judging" in str(inspect.signature(TASKS[n])))
)
def test_judge_parameters_are_one_set_with_judge_settings_defaults(name: str) -> None:
    parameters = inspect.signature(TASKS[name]).parameters
    expected = {*JUDGE_PARAMETERS, *DEPRECATED_JUDGE_PARAMETERS}
    expected |= set(PROMPT_PARAMETERS) & set(parameters)
    expected |= set(PANEL_PARAMETERS) & set(parameters)
    judging = {p for p in parameters if p.startswith("judge_") or p in expected}
    assert judging == expected
    defaults = {
        "allow_self_judging": False,
        "judge_prompts": None,
        "panel_reduce": DEFAULT_PANEL_REDUCE,
        **{f"judge_{setting}": None for setting in ("temperature", "seed", "max_tokens")},
        **{
            f"judge_{setting}": getattr(JUDGE_DEFAULTS, setting)
            for setting in ("retries", "structured_output", "cache", "timeout", "max_connections")
        },
    }
    assert {p: parameters[p].default for p in judging} == {p: defaults[p] for p in judging}


def test_a_judge_parameter_given_to_inspect_reaches_the_task(tmp_path: Path) -> None:
    # Inspect passes a -T value on only when the task names the parameter.
    with pytest.raises(TaskArgumentError, match=r"judge_timeout"):
        eval(
            "inspect_medreason/open_ended",
            task_args={"judge_timeout": -1},
            model="mockllm/model",
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
