"""The VQA subset metrics through Inspect's real epoch reducers."""

from __future__ import annotations

import pytest
from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing, run_metrics

from inspect_medreason.vqa.scorer import accuracy_closed, accuracy_open

ANSWER_TYPES = [{"answer_type": t} for t in ("closed", "closed", "open", "open", "open")]


def test_subset_accuracies_are_unchanged_by_agreeing_epochs() -> None:
    assert_agreeing_epochs_change_nothing(
        [accuracy_closed(), accuracy_open()], [1.0, 0.0, 1.0, 1.0, 0.0], metadata=ANSWER_TYPES
    )


def test_subset_accuracies_average_disagreeing_epochs() -> None:
    values = run_metrics(
        [accuracy_closed(), accuracy_open()],
        [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]],
        metadata=ANSWER_TYPES,
    )
    # closed: (0.5 + 0) / 2; open: (1 + 0.5 + 0) / 3
    assert values["accuracy_closed"] == pytest.approx(0.25)
    assert values["accuracy_open"] == pytest.approx(0.5)
