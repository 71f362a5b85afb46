"""The metrics shared by the families (the MCQ accuracy family, the judge components'
image interval and per-component summary), through Inspect's real epoch reducers."""

from __future__ import annotations

import math
from typing import Any, cast

from inspect_ai.scorer import Score
from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing, run_metrics

from inspect_medreason.core.intervals import clustered_mean_interval, image_ci
from inspect_medreason.core.metrics import (
    component_breakdowns,
    component_metrics,
    parsed_accuracy,
    strict_accuracy,
    unparsed,
)


def mcq_score(correct: float, strict_correct: float, parsed: float) -> Score:
    return Score(value={"correct": correct, "strict_correct": strict_correct, "parsed": parsed})


def test_mcq_metrics_are_unchanged_by_agreeing_epochs() -> None:
    assert_agreeing_epochs_change_nothing(
        [strict_accuracy(), parsed_accuracy(), unparsed()],
        [
            mcq_score(1.0, 1.0, 1.0),
            mcq_score(1.0, 0.0, 1.0),
            mcq_score(0.0, 0.0, 1.0),
            mcq_score(0.0, 0.0, 0.0),
            Score(value=math.nan),  # unscored: no reference
        ],
    )


def test_image_interval_is_unchanged_by_agreeing_epochs() -> None:
    assert_agreeing_epochs_change_nothing(
        [image_ci(top=4.0)],
        [4.0, 3.0, 3.0, 1.0, 0.0, 2.0, math.nan],
        metadata=[{"image_cluster": c} for c in ("a", "a", "b", "c", "c", "d", "e")],
    )


def test_image_interval_reads_the_reduced_score() -> None:
    values = run_metrics(
        [image_ci(top=4.0)], [[4.0, 2.0], [0.0, 0.0], [2.0, 2.0], [1.0, 3.0]], reducer="mean"
    )
    expected = clustered_mean_interval([3.0, 0.0, 2.0, 2.0], ["s0", "s1", "s2", "s3"], top=4.0)
    # a list metric's dict value is logged under its keys (a dict score's under name_key)
    assert values["lower"] == expected.lower and values["upper"] == expected.upper


COMPONENT_SCORES = [
    Score(value={"gt_final": 4.0, "va_final": 3.0}),
    Score(value={"gt_final": 2.0, "va_final": math.nan}),  # VA unscored: a judge failed
    Score(value={"gt_final": 3.0, "va_final": 1.0}),
    Score(value={"gt_final": 0.0, "va_final": 0.0}),
    Score(value={"va_final": 2.0}),  # no GT component at all: unscored too, never a zero
    Score(value=math.nan),  # a case the scorer did not score (an MCQ case)
]
COMPONENT_METADATA = [
    {"image_cluster": c, "modality": m}
    for c, m in (("a", "CT"), ("a", "CT"), ("b", "MR"), ("c", "CT"), ("d", "MR"), ("e", "CT"))
]


def open_ended_shape() -> list[Any]:
    return [
        {key: component_metrics() for key in ("gt_final", "va_final")},
        *component_breakdowns({"gt_final": ["modality"]}),
    ]


def test_component_metrics_are_unchanged_by_agreeing_epochs() -> None:
    assert_agreeing_epochs_change_nothing(
        open_ended_shape(),
        COMPONENT_SCORES[:4] + COMPONENT_SCORES[5:],
        metadata=COMPONENT_METADATA[:4] + COMPONENT_METADATA[5:],
    )


def test_component_metrics_read_the_reduced_score() -> None:
    """Disagreeing epochs: each component is the mean of its scored epochs (a NaN epoch is
    left out by the reducer), a component unscored in every epoch stays unscored, and the
    breakdown reads the reduced values too."""
    values = run_metrics(
        open_ended_shape(),
        [
            [{"gt_final": 4.0, "va_final": 1.0}, {"gt_final": 2.0, "va_final": 1.0}],
            [{"gt_final": math.nan, "va_final": 1.0}, {"gt_final": 1.0, "va_final": 1.0}],
            [{"gt_final": math.nan, "va_final": 1.0}, {"gt_final": math.nan, "va_final": 1.0}],
        ],
        reducer="mean",
        metadata=[{"modality": "CT"}, {"modality": "CT"}, {"modality": "MR"}],
    )
    # (4 + 2) / 2 and 1 (its NaN epoch left out); the third case is unscored
    # this project's stderr (counting images) is logged under its registered name in a
    # dictionary score, Inspect's naming for a metric from a package
    assert values["gt_final/mean"] == 2.0
    assert values["gt_final/inspect_medreason/stderr"] == 1.0
    assert values["va_final/mean"] == 1.0
    assert values["gt_final by modality:CT"] == 2.0
    assert math.isnan(cast(float, values["gt_final by modality:MR"]))  # none scored: no zero
