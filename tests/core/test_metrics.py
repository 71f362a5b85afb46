"""Each custom metric on hand-built scores, against values worked out by hand; and what
Inspect's epoch reducers hand them."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from inspect_ai.scorer import (
    SampleScore,
    Score,
    grouped,
    max_score,
    mean,
    mean_score,
)

from inspect_medreason.cmb.scorer import accuracy_other_mode, cmb_macro, mode_disagreement
from inspect_medreason.core.metrics import (
    component_breakdowns,
    parsed_accuracy,
    scored_mean,
    strict_accuracy,
    unparsed,
)
from inspect_medreason.vqa.scorer import accuracy_closed, accuracy_open


def sample(
    value: float | dict[str, float],
    metadata: dict[str, Any] | None = None,
    **sample_metadata: Any,
) -> SampleScore:
    return SampleScore(
        score=Score(value=value, metadata=metadata or {}), sample_metadata=sample_metadata
    )


def compute(metric: Any, scores: list[SampleScore]) -> Any:
    return metric()(scores)


def mcq(correct: float, strict_correct: float, parsed: float) -> SampleScore:
    value = {"correct": correct, "strict_correct": strict_correct, "parsed": parsed}
    return SampleScore(score=Score(value=value))


MCQ_SCORES = [
    mcq(1.0, 1.0, 1.0),
    mcq(1.0, 0.0, 1.0),  # "B." read as B
    mcq(0.0, 0.0, 1.0),
    mcq(0.0, 0.0, 0.0),  # no answer
]


def test_mcq_metrics_by_hand() -> None:
    assert compute(strict_accuracy, MCQ_SCORES) == pytest.approx(1 / 4)
    assert compute(parsed_accuracy, MCQ_SCORES) == pytest.approx(2 / 3)
    assert compute(unparsed, MCQ_SCORES) == pytest.approx(1 / 4)
    assert math.isnan(compute(strict_accuracy, []))
    assert math.isnan(compute(parsed_accuracy, [mcq(0.0, 0.0, 0.0)]))  # nothing read


def test_vqa_subset_accuracies_by_hand() -> None:
    scores = [
        sample(1.0, answer_type="closed"),
        sample(0.0, answer_type="closed"),
        sample(1.0, answer_type="closed"),
        sample(0.0, answer_type="open"),
        sample(math.nan, answer_type="open"),
    ]
    assert compute(accuracy_closed, scores) == pytest.approx(2 / 3)
    assert compute(accuracy_open, scores) == 0.0
    assert math.isnan(compute(accuracy_open, scores[:3]))


def test_cmb_metrics_by_hand() -> None:
    scores = [
        sample(
            {"correct": 1.0, "other_mode_correct": 0.0, "modes_disagree": 1.0},
            None,
            exam_type="医师",
            exam_class="甲",
        ),
        sample(
            {"correct": 0.0, "other_mode_correct": 0.0, "modes_disagree": 0.0},
            None,
            exam_type="医师",
            exam_class="甲",
        ),
        sample(
            {"correct": 1.0, "other_mode_correct": 1.0, "modes_disagree": 0.0},
            None,
            exam_type="医师",
            exam_class="乙",
        ),
        sample(
            {"correct": 1.0, "other_mode_correct": 1.0, "modes_disagree": 0.0},
            None,
            exam_type="护理",
            exam_class="丙",
        ),
    ]
    assert compute(accuracy_other_mode, scores) == pytest.approx(2 / 4)
    assert compute(mode_disagreement, scores) == pytest.approx(1 / 4)
    macro = compute(cmb_macro, scores)
    # Subcategories: 甲 0.5, 乙 1.0, 丙 1.0; categories: 医师 (0.5 + 1.0) / 2, 护理 1.0.
    assert macro["exam_class:甲"] == 0.5 and macro["exam_type:医师"] == pytest.approx(0.75)
    assert macro["exam_type:护理"] == 1.0 and macro["macro_all"] == pytest.approx(2.5 / 3)


@pytest.mark.parametrize(
    ("reducer", "unread", "strict"), [(mean_score(), 0.5, 0.5), (max_score(), 0.0, 1.0)]
)
def test_epoch_reducers_reduce_every_mcq_number(reducer: Any, unread: float, strict: float) -> None:
    """Every number the MCQ metrics report is a key of the score's value, so Inspect's
    reducers reduce it (they keep only the first epoch's metadata)."""
    first = Score(value={"correct": 0.0, "strict_correct": 0.0, "parsed": 0.0})
    second = Score(value={"correct": 1.0, "strict_correct": 1.0, "parsed": 1.0})
    scores = [SampleScore(score=reducer([first, second]))]
    assert compute(unparsed, scores) == unread and compute(strict_accuracy, scores) == strict


def test_component_breakdowns_match_inspects_grouped_mean_on_each_component() -> None:
    """``component_breakdowns`` reads one key of a dictionary score in place; on random
    scores it gives what Inspect's ``grouped(mean())`` gives on that key alone over the
    cases that scored it (a NaN or absent component is left out, never a zero)."""
    rng = random.Random(7)
    for _ in range(40):
        scores, values = [], []
        for case in range(rng.randint(1, 30)):
            value: dict[str, float] = {"va_answer": float(rng.randint(0, 4))}
            roll = rng.random()
            if roll > 0.2:
                value["gt_final"] = float(rng.randint(0, 4))
            elif roll > 0.1:
                value["gt_final"] = math.nan
            metadata = {"modality": rng.choice(["CT", "MR", "X-ray"]), "organ_system": "chest"}
            values.append(value)
            scores.append(
                SampleScore(
                    score=Score(value=value), sample_id=f"c{case}", sample_metadata=metadata
                )
            )
        breakdowns: list[Any] = component_breakdowns({"gt_final": ["modality", "organ_system"]})
        result = {key: v for metric in breakdowns for key, v in metric(scores).items()}
        alone = [
            SampleScore(score=Score(value=v["gt_final"]), sample_metadata=s.sample_metadata)
            for s, v in zip(scores, values, strict=True)
            if not math.isnan(v.get("gt_final", math.nan))
        ]
        for field in ("modality", "organ_system"):
            by_field: Any = grouped(mean(), field, all=False)
            expected = by_field(alone) if alone else {}
            assert {
                key.removeprefix(f"gt_final by {field}:"): v
                for key, v in result.items()
                if key.startswith(f"gt_final by {field}:") and not math.isnan(v)
            } == pytest.approx(expected)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf
def test_scored_mean_survives_values_an_edited_log_can_hold() -> None:
    """``inspect score`` recomputes metrics from a log's values, which an edit can make
    infinite or strings: a value comes out, never an exception."""
    values: list[Any] = [1.0, math.inf, "C", 3, None, math.nan]
    scores = [
        SampleScore(score=Score(value={"gt_final": v}), sample_id=i) for i, v in enumerate(values)
    ]
    metric: Any = scored_mean("gt_final")
    assert metric(scores) == math.inf  # None and NaN left out; "C" is Inspect's 1.0
    assert math.isnan(metric(scores[4:]))  # nothing scored: NaN, never 0
