"""Coercion of task and scorer arguments: `-T`/`-S` values arrive as YAML scalars or strings."""

from __future__ import annotations

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
