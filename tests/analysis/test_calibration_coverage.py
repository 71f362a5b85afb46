"""calibrate's fit table counts images: its figures of the raw judge against the people's
mean rating (MAE, bias, Spearman's rho, weighted kappa), checked by simulation with known
truth on cases that share images (1-8 cases an image, the judge erring more on some images),
at 25 and 60 images (docs/intervals.md)."""

from __future__ import annotations

import numpy as np
import pytest

from inspect_medreason.analysis.agreement import quadratic_kappa, spearman
from inspect_medreason.analysis.calibration import _figures, _half_up

DATA_SETS = 2000  # a coverage's standard error is about 0.005 (the figures in docs/intervals.md)
RATERS = 3


def data_set(rng: np.random.Generator, images: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each case's judge score and the mean of three people's ratings, and its image."""
    judge, people, image = [], [], []
    for number, size in enumerate(rng.integers(1, 9, images)):
        typical = rng.integers(0, 5)
        erring = 0.6 if rng.random() < 0.4 else 0.15  # a hard image, or an easy one
        for _ in range(size):
            true = int(np.clip(typical + rng.integers(-1, 2), 0, 4))
            ratings = np.clip(true + rng.choice([-1, 0, 0, 0, 1], RATERS), 0, 4)
            shift = rng.choice([-1, 1, 2]) if rng.random() < erring else 0
            judge.append(float(np.clip(true + shift, 0, 4)))
            people.append(float(ratings.mean()))
            image.append(f"image{number}")
    return np.array(judge), np.array(people), image


@pytest.fixture(scope="module")
def truth() -> dict[str, float]:
    judge, people, _ = data_set(np.random.default_rng(0), 200_000)
    return {
        "mae": float(np.mean(np.abs(judge - people))),
        "bias": float(np.mean(judge - people)),
        "spearman": spearman(judge, people),
        "weighted_kappa": quadratic_kappa(_half_up(judge), _half_up(people)),
    }


@pytest.mark.parametrize("images", [25, 60])
def test_the_fit_tables_intervals_cover_when_cases_share_images(
    images: int, truth: dict[str, float]
) -> None:
    rng = np.random.default_rng(images + 500)
    hits = dict.fromkeys(truth, 0)
    for _ in range(DATA_SETS):
        judge, people, image = data_set(rng, images)
        figures = _figures(judge, people, image)
        for name in truth:
            interval = figures[name].interval
            hits[name] += interval.lower <= truth[name] <= interval.upper
    coverage = {name: hits[name] / DATA_SETS for name in truth}
    for name, covered in coverage.items():
        assert 0.93 <= covered <= 0.97, (name, images, coverage)
    # each case on its own image (what the table did before) is too narrow on such data
    rng = np.random.default_rng(images)
    narrow = 0
    for _ in range(DATA_SETS // 5):
        judge, people, image = data_set(rng, images)
        interval = _figures(judge, people, [str(n) for n in range(len(judge))])["mae"].interval
        narrow += interval.lower <= truth["mae"] <= interval.upper
    assert narrow / (DATA_SETS // 5) < 0.90, narrow / (DATA_SETS // 5)
