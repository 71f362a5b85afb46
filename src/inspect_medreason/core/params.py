"""Coercion of task and scorer arguments: `-T`/`-S` values arrive as YAML scalars or strings."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.model import GenerateConfig

from inspect_medreason.core.errors import TaskArgumentError


def coerce_bool(value: Any, name: str) -> bool:
    """Accept real booleans and the usual spellings (``true``, ``no``, ``1``...)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "1", "on"}:
        return True
    if text in {"false", "no", "0", "off"}:
        return False
    raise TaskArgumentError(f"-T {name}={value!r}: expected true or false")


def coerce_int(value: Any, name: str) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError) as error:
        raise TaskArgumentError(f"-T {name}={value!r}: expected a whole number") from error


def coerce_float(value: Any, name: str) -> float:
    """YAML reads ``1e-3`` as a string; accept it."""
    try:
        return float(str(value).strip())
    except (TypeError, ValueError) as error:
        raise TaskArgumentError(f"-T {name}={value!r}: expected a number") from error


# The official baseline decodes greedily; 1024 tokens leaves room for the reasoning trace.
DEFAULT_GENERATE_CONFIG = GenerateConfig(temperature=0.0, max_tokens=1024)


def refuse_unknown_parameters(task: Callable[..., Any], given: Mapping[str, Any]) -> None:
    """Refuse the ``-T`` names ``task`` does not take, each with the parameter it most likely
    misspells. Inspect passes a task only the names its signature lists and merely warns
    about the rest, so a misspelt ``-T judge_temprature=0`` would run with the default:
    every task collects the rest in ``**unknown_parameters`` just to hand them here."""
    if not given:
        return
    name = getattr(task, "__name__", str(task))
    known = [
        parameter.name
        for parameter in inspect.signature(task).parameters.values()
        if parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
    ]
    problems = []
    for unknown in sorted(given):
        likely = difflib.get_close_matches(unknown, known, n=1, cutoff=0.6)
        hint = f" (did you mean -T {likely[0]}?)" if likely else ""
        problems.append(f"-T {unknown}{hint}")
    parameters = ", ".join(known) if known else "none"
    raise TaskArgumentError(
        f"{name} takes no {'; '.join(problems)}. Its parameters are: {parameters}."
    )
