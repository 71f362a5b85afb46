"""One rule for the score values the command line reads from logs and files.

A value is *usable* (a finite number in its scale), *unscored* (absent, None or NaN: a judge
failed or the case had no reference; counted as unscored, never a zero) or *impossible*
(not a number, a boolean, an infinity, outside its scale, or, where whole scores are
needed, a fraction): an edited or foreign file. An impossible value is named with where it
was found and left out, by every reader alike (compare, leaderboard with and without
``--bootstrap``, agreement, export, judge-scores); a reader whose output would be wrong
without it refuses instead. A case given twice in one file is named and every copy left
out, since which one is right cannot be told.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "JUDGE_SCALE",
    "ScoreValue",
    "duplicated",
    "left_out",
    "read_score",
]

# The scale of each value a log or file holds, by the name it is read under.
JUDGE_SCALE = (0.0, 4.0)
SCALES: dict[str, tuple[float, float]] = {
    "gt_final": JUDGE_SCALE,
    "va_answer": JUDGE_SCALE,
    "rvf_trace": JUDGE_SCALE,
    "va_final": JUDGE_SCALE,
    "Open-ended GT": JUDGE_SCALE,
    "Open-ended VA": JUDGE_SCALE,
    "VA_answer": JUDGE_SCALE,
    "RVF_trace": JUDGE_SCALE,
    "correct": (0.0, 1.0),
    "MCQ Accuracy": (0.0, 1.0),
}


@dataclass(frozen=True)
class ScoreValue:
    """A value read: ``number`` when usable; ``problem`` when impossible; neither when
    unscored."""

    number: float | None
    problem: str | None = None

    @property
    def unscored(self) -> bool:
        return self.number is None and self.problem is None


def read_score(name: str, value: Any, whole: bool = False) -> ScoreValue:
    """``value`` read as the score ``name`` (a key of SCALES); ``whole`` when only whole
    scores are meaningful (agreement's categories)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ScoreValue(None)
    low, high = SCALES[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ScoreValue(None, f"{name}={_shown(value)} is not a number")
    if not math.isfinite(value):
        return ScoreValue(None, f"{name}={value!r} is not a finite number")
    if not low <= value <= high:
        return ScoreValue(None, f"{name}={value!r} is outside its scale {low:g}-{high:g}")
    if whole and not float(value).is_integer():
        return ScoreValue(None, f"{name}={value!r} is not a whole score {low:g}-{high:g}")
    return ScoreValue(float(value))


def left_out(where: str, problem: str) -> str:
    """The one wording of an impossible value, wherever it was read."""
    return f"{where}: {problem}: left out (an edited or foreign file?)"


def duplicated(where: str, case: str, count: int) -> str:
    """The one wording of a case given more than once in one file."""
    return f"{where}: case {case!r} is given {count} times: every copy left out"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
