"""Runs of several variants in alternating order, and their medians.

On a shared machine, a variant that always ran first would always meet a colder (or warmer)
machine than the others: each repeat runs every variant once, and every other repeat runs
them in reverse order. The benchmarks report the median of each measure over the repeats.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence


def alternating_runs(
    variants: Sequence[str],
    run: Callable[[str], dict[str, float]],
    repeats: int,
    label: object = None,
) -> dict[str, list[dict[str, float]]]:
    """``run(variant)`` for every variant, ``repeats`` times, the order reversed on every
    other repeat; each result is printed as it comes (after ``label``, when given)."""
    runs: dict[str, list[dict[str, float]]] = {variant: [] for variant in variants}
    for repeat in range(repeats):
        for variant in variants if repeat % 2 == 0 else variants[::-1]:
            runs[variant].append(run(variant))
            shown = (variant,) if label is None else (label, variant)
            print(*shown, runs[variant][-1], flush=True)
    return runs


def medians(
    runs: dict[str, list[dict[str, float]]], keys: Iterable[str] | None = None, digits: int = 3
) -> dict[str, dict[str, float]]:
    """Per variant, the median of each measure (``keys``, default every one the runs report;
    a key a variant's runs do not report is left out), rounded to ``digits``."""
    return {
        variant: {
            key: round(float(statistics.median(run[key] for run in done)), digits)
            for key in (done[0] if keys is None else keys)
            if key in done[0]
        }
        for variant, done in runs.items()
    }
