"""Every task parameter is visible to Inspect and inspect_evals: a named parameter of the
task's signature (none hidden in ``**kwargs``), documented with an ``Args:`` entry, logged
with its default in ``task_args``; the shared judge and shift parameters are declared once
(``core.params.task_parameters``) and are the same set with the same defaults on every task
that takes them. The one catch-all, ``**unknown_parameters``, exists only to refuse a name the
task does not take (Inspect would merely warn and run with the default)."""

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
    JUDGE_DEFAULTS,
    JUDGE_PARAMETERS,
    JUDGE_PROMPTS_PARAMETER,
    PANEL_REDUCE_PARAMETER,
    RETIRED_JUDGE_PARAMETERS,
)
from inspect_medreason.core.params import (
    ParameterGroup,
    SharedParameter,
    refuse_unknown_parameters,
    task_parameters,
)
from inspect_medreason.core.shift.catalog import SHIFT_PARAMETERS


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
    with pytest.raises(TaskArgumentError, match=r"did you mean -T judge_timeout\?"):
        eval(
            "inspect_medreason/open_ended",
            task_args={"judge_timoeut": 0},
            model="mockllm/model",
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").iterdir())


def test_the_shared_parameters_default_as_their_settings_do() -> None:
    """The judge group's defaults are JudgeSettings' (what a scorer built without a task
    uses), so a task and ``inspect score`` judge alike."""
    defaults = {p.name: p.default for p in JUDGE_PARAMETERS}
    assert defaults == {
        "allow_self_judging": False,
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
    assert (JUDGE_PROMPTS_PARAMETER.default, PANEL_REDUCE_PARAMETER.default) == (
        None,
        DEFAULT_PANEL_REDUCE,
    )
    assert {p.name: p.default for p in SHIFT_PARAMETERS} == {
        "shift": None,
        "severity": 0,
        "shift_seed": 0,
        "shift_judge_image": "clean",
    }


SHARED = {
    "judges": [p.name for p in JUDGE_PARAMETERS],
    "image shift": [p.name for p in SHIFT_PARAMETERS],
}
OPTIONAL = {p.name: p for p in (JUDGE_PROMPTS_PARAMETER, PANEL_REDUCE_PARAMETER)}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_task_takes_each_shared_group_whole_with_its_declared_defaults_and_entries(
    name: str,
) -> None:
    """A task takes a shared group whole or not at all, each parameter with the group's
    type, default and Args: entry, and no retired judge parameter."""
    parameters = named_parameters(TASKS[name])
    declared = {p.name: p for p in (*JUDGE_PARAMETERS, *SHIFT_PARAMETERS, *OPTIONAL.values())}
    for group, names in SHARED.items():
        taken = [n for n in names if n in parameters]
        assert taken in ([], names), f"{name} takes part of the {group} parameters: {taken}"
    if set(OPTIONAL) & set(parameters):
        assert set(SHARED["judges"]) <= set(parameters)
    doc = inspect.getdoc(TASKS[name]) or ""
    for shared in (declared[n] for n in parameters if n in declared):
        parameter = parameters[shared.name]
        assert (parameter.default, parameter.annotation) == (shared.default, shared.annotation)
        entry = re.search(rf"^    {shared.name}: (.*(?:\n        .*)*)", doc, re.MULTILINE)
        assert entry is not None and " ".join(entry.group(1).split()) == shared.doc
    assert not set(RETIRED_JUDGE_PARAMETERS) & set(parameters)


FITS_ON_A_SCREEN = 50


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_function_fits_on_one_screen(name: str) -> None:
    source = inspect.getsource(inspect.unwrap(TASKS[name]))
    lines = len(source.splitlines())
    assert lines <= FITS_ON_A_SCREEN, f"{name} is {lines} lines"


def test_a_removed_judge_parameter_is_refused_with_what_to_give_instead() -> None:
    for name in sorted(n for n in TASKS if "judge_retries" in named_parameters(TASKS[n])):
        with pytest.raises(TaskArgumentError) as refusal:
            TASKS[name](judge_temperature=0.3)
        message = str(refusal.value.message)
        assert f"{name} takes no -T judge_temperature (it was removed: give the judge's " in (
            message
        )
        assert "--model-role 'grader={model: ..., temperature: 0}'" in message


def test_every_shared_group_problem_is_reported_at_once() -> None:
    with pytest.raises(TaskArgumentError) as refusal:
        TASKS["open_ended"](shift="sharpen", judge_timeout="soon", judge_failure="explode")
    message = str(refusal.value.message)
    assert "-T shift='sharpen' is not a shift" in message
    assert "-T judge_timeout='soon': expected a number" in message
    assert "-T judge_failure='explode': expected unscored" in message


def test_inspect_logs_every_parameter_with_its_default(tmp_path: Path) -> None:
    """Inspect reads the composed signature: the log's task_args hold every parameter, the
    shared ones too, with the value given or its default; eval-retry replays what was given."""
    [log] = eval(
        "inspect_medreason/open_ended",
        task_args={"judge_retries": 1, "shift": "noise", "severity": 1},
        model="medreason/pipeline-check",
        model_roles={
            "grader": "medreason/pipeline-check",
            "vision_grader": "medreason/pipeline-check",
        },
        limit=1,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    expected = {
        name: parameter.default for name, parameter in named_parameters(TASKS["open_ended"]).items()
    }
    expected.update(judge_retries=1, shift="noise", severity=1)
    assert log.eval.task_args == expected
    assert log.eval.task_args_passed == {"judge_retries": 1, "shift": "noise", "severity": 1}
    assert (log.eval.metadata or {})["judges"]["settings"]["retries"] == 1
    assert (log.eval.metadata or {})["shift"]["name"] == "noise"


def test_a_misdeclared_task_fails_where_it_is_defined() -> None:
    group = ParameterGroup((SharedParameter("colour", str, "red", "The colour."),), dict)

    def undocumented(size: int = 1, *, paint: dict[str, Any]) -> Task:
        """No Args: entry for size."""
        raise AssertionError

    def defaulted(size: int = 1, *, paint: dict[str, Any] | None = None) -> Task:
        """A group placeholder with a default.

        Args:
            size: The size.
        """
        raise AssertionError

    for body in (undocumented, defaulted):
        with pytest.raises(TypeError, match=body.__name__):
            task_parameters(paint=group)(body)

    def painted(size: int = 1, *, paint: dict[str, Any]) -> Task:
        """Paints.

        Args:
            size: The size.
        """
        return Task(metadata={"size": size, **paint})

    public = task_parameters(paint=group)(painted)
    assert list(inspect.signature(public).parameters) == ["size", "colour", CATCH_ALL]
    assert documented_arguments(public) == ["size", "colour"]
    assert public(size="2", colour="blue").metadata == {"size": "2", "colour": "blue"}
    with pytest.raises(TaskArgumentError, match=r"painted takes no -T color \(did you mean"):
        public(color="blue")


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
