"""core.strict_json: what the commands write is JSON every strict reader accepts."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from inspect_medreason.core import strict_json


def strict_loads(text: str) -> Any:
    """json.loads refusing the NaN, Infinity and -Infinity Python writes by default."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_every_non_finite_number_is_written_as_null_at_any_depth() -> None:
    value = {
        "nan": math.nan,
        "inf": [math.inf, {"minus": -math.inf}],
        "numpy": (np.float64("nan"), np.float32("inf"), np.float32(0.5)),
        "kept": [1, 2.5, "NaN", None, True],
    }
    text = strict_json.dumps(value, indent=2)
    assert strict_loads(text) == {
        "nan": None,
        "inf": [None, {"minus": None}],
        "numpy": [None, None, 0.5],
        "kept": [1, 2.5, "NaN", None, True],
    }
    with pytest.raises(ValueError, match="not strict JSON"):
        strict_loads(json.dumps(value["nan"]))


def test_the_replacements_are_named_by_path() -> None:
    replaced: list[str] = []
    strict_json.finite_or_null({"a": [1.0, math.nan], "b": {"c": math.inf}}, "", replaced)
    assert replaced == ["a[1] is nan", "b.c is inf"]


def test_a_non_finite_number_produced_by_default_is_refused_not_written() -> None:
    class Opaque:
        pass

    with pytest.raises(ValueError):
        strict_json.dumps({"x": Opaque()}, default=lambda _: math.nan)
