"""The MCQ metrics shared by the MedReason MCQ track and MedXpertQA-MM, through Inspect's
real epoch reducers."""

from __future__ import annotations

import math

from inspect_ai.scorer import Score
from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing

from inspect_medreason.metrics import parsed_accuracy, strict_accuracy, unparsed


def mcq_score(correct: float, strict_correct: float, parsed: bool) -> Score:
    return Score(
        value=correct,
        metadata={"correct": correct, "strict_correct": strict_correct, "parsed": parsed},
    )


def test_mcq_metrics_are_unchanged_by_agreeing_epochs() -> None:
    assert_agreeing_epochs_change_nothing(
        [strict_accuracy(), parsed_accuracy(), unparsed()],
        [
            mcq_score(1.0, 1.0, True),
            mcq_score(1.0, 0.0, True),
            mcq_score(0.0, 0.0, True),
            mcq_score(0.0, 0.0, False),
            Score(value=math.nan),  # unscored: no reference
        ],
    )
