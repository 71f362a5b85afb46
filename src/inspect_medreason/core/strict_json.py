"""JSON text that every strict reader accepts: a value that is not a finite number (NaN,
Infinity) is written as ``null``, never as the bare ``NaN`` Python's ``json`` writes by
default, which JavaScript's ``JSON.parse``, jq and most other readers refuse.

A figure that cannot be estimated carries its reason beside it (the reports say why); the
``null`` only keeps the document readable."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any


def finite_or_null(value: Any, path: str = "", replaced: list[str] | None = None) -> Any:
    """``value`` with every non-finite float (numpy's too) replaced by None, recursively
    through dicts, lists and tuples; each replacement's path is appended to ``replaced``."""
    if isinstance(value, float) or (
        hasattr(value, "dtype") and getattr(value, "shape", None) == () and _is_float(value)
    ):
        number = float(value)
        if not math.isfinite(number):
            if replaced is not None:
                replaced.append(f"{path} is {number!r}")
            return None
        return number
    if isinstance(value, dict):
        return {
            k: finite_or_null(v, f"{path}.{k}" if path else str(k), replaced)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [finite_or_null(v, f"{path}[{i}]", replaced) for i, v in enumerate(value)]
    return value


def _is_float(value: Any) -> bool:
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    return kind == "f"


def dumps(
    value: Any,
    *,
    indent: int | None = None,
    ensure_ascii: bool = True,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps`` that writes non-finite numbers as null and refuses to write anything
    else that is not strict JSON."""
    return json.dumps(
        finite_or_null(value),
        indent=indent,
        ensure_ascii=ensure_ascii,
        sort_keys=sort_keys,
        default=default,
        allow_nan=False,
    )
