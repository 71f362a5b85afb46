"""The CMB-Exam metrics through Inspect's real epoch reducers."""

from __future__ import annotations

import pytest
from inspect_ai.scorer import Score
from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing, run_metrics

from inspect_medreason.cmb.scorer import accuracy_other_mode, cmb_macro, mode_disagreement

GROUPS = [
    {"exam_type": "医师考试", "exam_class": "口腔"},
    {"exam_type": "医师考试", "exam_class": "口腔"},
    {"exam_type": "医师考试", "exam_class": "临床"},
    {"exam_type": "护理考试", "exam_class": "护士"},
]


def exam_score(correct: float, other_mode_correct: float, modes_disagree: float) -> Score:
    return Score(
        value=correct,
        metadata={"other_mode_correct": other_mode_correct, "modes_disagree": modes_disagree},
    )


SCORES = [
    exam_score(1.0, 1.0, 0.0),
    exam_score(0.0, 1.0, 1.0),
    exam_score(1.0, 1.0, 0.0),
    exam_score(0.0, 0.0, 0.0),
]


def test_cmb_metrics_are_unchanged_by_agreeing_epochs() -> None:
    assert_agreeing_epochs_change_nothing(
        [cmb_macro(), accuracy_other_mode(), mode_disagreement()], SCORES, metadata=GROUPS
    )


def test_cmb_macro_averages_disagreeing_epochs_per_subcategory() -> None:
    values = run_metrics(
        [cmb_macro()], [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0]], metadata=GROUPS
    )
    # 口腔: (0.5 + 0) / 2 = 0.25; 临床: 1.0; 护士: 0.5
    assert values["exam_class:口腔"] == pytest.approx(0.25)
    assert values["exam_type:医师考试"] == pytest.approx((0.25 + 1.0) / 2)
    assert values["exam_type:护理考试"] == pytest.approx(0.5)
    assert values["macro_all"] == pytest.approx((0.25 + 1.0 + 0.5) / 3)
