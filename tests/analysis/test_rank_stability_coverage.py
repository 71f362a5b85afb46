"""leaderboard --bootstrap's 95% range of each model's position, checked by simulation with
known truth: three models answering MCQ cases that share images (1-8 cases an image, an
image's difficulty shared by its cases and by every model), true accuracies apart or tied,
at 25 and 60 images (docs/intervals.md)."""

from __future__ import annotations

import numpy as np
import pytest

from inspect_medreason.analysis.leaderboard import METRIC_NAMES, resampled_positions
from inspect_medreason.core.intervals import cluster_indices

DATA_SETS = 200
RESAMPLES = 200


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize("images", [25, 60])
@pytest.mark.parametrize("accuracies", [(0.55, 0.6, 0.65), (0.6, 0.6, 0.7)], ids=["apart", "tied"])
def test_the_position_range_holds_the_true_position(
    images: int, accuracies: tuple[float, float, float]
) -> None:
    rng = np.random.default_rng(images)
    logits = np.log(np.array(accuracies) / (1 - np.array(accuracies)))
    shared = rng.normal(0.0, 1.0, 200_000)
    truth = np.array([_expit(logit + shared).mean() for logit in logits])
    # the challenge's positions: ties share the better one
    true_position = np.array([1 + np.sum(truth > value + 1e-3) for value in truth])
    held = np.zeros(len(accuracies))
    for _ in range(DATA_SETS):
        answers, image = [], []
        for number, size in enumerate(rng.integers(1, 9, images)):
            difficulty = rng.normal(0.0, 1.0)
            for _ in range(size):
                answers.append(rng.random(len(logits)) < _expit(logits + difficulty))
                image.append(f"image{number}")
        correct = np.array(answers, dtype=float).T
        table = {
            name: correct if name == METRIC_NAMES[0] else np.full_like(correct, np.nan)
            for name in METRIC_NAMES
        }
        positions = resampled_positions(
            table, cluster_indices(image, len(image)), RESAMPLES, int(rng.integers(1 << 30))
        )
        lower = np.quantile(positions, 0.025, axis=0, method="lower")
        upper = np.quantile(positions, 0.975, axis=0, method="higher")
        held += (lower <= true_position) & (true_position <= upper)
    coverage = held / DATA_SETS
    # positions are whole numbers: the range errs wide (up to 1.0), never below 0.93
    assert np.all(coverage >= 0.93), (accuracies, images, coverage)
