"""Every task parameter is visible to Inspect: a named parameter of the task function (none
hidden in ``**kwargs``), documented with an ``Args:`` entry; the judge parameters are the
same set with the same defaults (JudgeSettings') on every judged task. The one catch-all,
``**unknown_parameters``, exists only to refuse a name the task does not take (Inspect would
merely warn and run with the default)."""

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
from inspect_medreason.core.params import refuse_unknown_parameters


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


CATCH_ALL = "unknown_parameters"


def named_parameters(function: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """A task's parameters without its refusing catch-all."""
    parameters = dict(inspect.signature(function).parameters)
    catch_all = parameters.pop(CATCH_ALL, None)
    assert catch_all is not None and catch_all.kind is inspect.Parameter.VAR_KEYWORD
    return parameters


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_parameter_is_named_and_documented(name: str) -> None:
    parameters = named_parameters(TASKS[name])
    hidden = [
        p.name
        for p in parameters.values()
        if p.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    assert not hidden, f"{name} hides parameters in *{hidden}"
    assert documented_arguments(TASKS[name]) == list(parameters), (
        f"{name}: its Args: entries must name each parameter, in order"
    )


def misspelt(parameter: str) -> str:
    """``parameter`` with two letters swapped (``judge_timeout`` -> ``judge_timoeut``)."""
    middle = len(parameter) // 2
    return (
        parameter[: middle - 1]
        + parameter[middle]
        + parameter[middle - 1]
        + parameter[middle + 1 :]
    )


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_refuses_a_misspelt_parameter_naming_the_likely_one(name: str) -> None:
    """The catch-all's only use: the task refuses (before reading data or calling a model)
    every name it does not take, each with the parameter it most likely misspells."""
    parameters = list(named_parameters(TASKS[name]))
    given = {"no_such_setting": 1}
    if parameters:
        given[misspelt(parameters[-1])] = 0
    with pytest.raises(TaskArgumentError) as refusal:
        TASKS[name](**given)
    message = str(refusal.value.message)
    assert f"{name} takes no" in message and "-T no_such_setting" in message
    if parameters:
        assert f"-T {misspelt(parameters[-1])} (did you mean -T {parameters[-1]}?)" in message


def test_the_refusal_suggests_nothing_for_a_name_unlike_any_parameter() -> None:
    def toy(seed: int = 0, **unknown_parameters: Any) -> None:
        refuse_unknown_parameters(toy, unknown_parameters)

    toy(seed=1)  # a named parameter passes
    with pytest.raises(
        TaskArgumentError, match=r"toy takes no -T colour\. Its parameters are: seed"
    ):
        toy(colour="red")


def test_a_misspelt_parameter_stops_inspect_before_any_model_call(tmp_path: Path) -> None:
    # Inspect would pass only named parameters on and warn about the rest; the catch-all
    # turns that warning into a refusal.
    with pytest.raises(TaskArgumentError, match=r"did you mean -T judge_temperature\?"):
        eval(
            "inspect_medreason/open_ended",
            task_args={"judge_temprature": 0},
            model="mockllm/model",
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").iterdir())


@pytest.mark.parametrize(
    "name", sorted(n for n in TASKS if "allow_self_judging" in str(inspect.signature(TASKS[n])))
)
def test_judge_parameters_are_one_set_with_judge_settings_defaults(name: str) -> None:
    parameters = named_parameters(TASKS[name])
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
            for setting in (
                "retries",
                "structured_output",
                "cache",
                "timeout",
                "max_connections",
                "failure",
            )
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
