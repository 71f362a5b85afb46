"""Every interval and test the product prints, checked by simulation with known truth on
cases that share images (issue 61): clusters of 1-8 cases (half of the images carry one),
now and then one image of 30, the cases of an image correlated through the image's own
effect, 25 and 60 images, 2,000 data sets per scenario.

- One run's mean (``clustered_mean_interval``: the log's ``image_ci``, the leaderboard's
  interval), MCQ accuracy and a 0-4 judge component, in the middle and near the top of the
  scale, images weakly and strongly alike;
- two runs over the same cases (``clustered_paired_change``: ``compare`` and ``shift``), the
  change's interval and the sign-flip test, with no change, a small one and a large one.

The latent model: a case's latent score is ``mu`` + its image's effect + its own; correct is
latent > 0, a judge score the latent rounded and clipped to 0-4, so the true mean is known in
closed form. A second run adds a per-image and a per-case disturbance of its own (the two
runs' scores of a case agree mostly, as two real runs' do) and the shift ``delta``. The
figures printed here are those of docs/intervals.md, row by row."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from inspect_medreason.core.intervals import clustered_mean_interval, clustered_paired_change

DATASETS = 2000
PAGE = Path(__file__).parents[2] / "docs" / "intervals.md"


def on_the_page(row: str) -> None:
    """The figures docs/intervals.md shows are the ones this simulation gives."""
    assert row in PAGE.read_text(encoding="utf-8"), f"docs/intervals.md lacks: {row}"


def cluster_sizes(rng: np.random.Generator, images: int) -> np.ndarray:
    sizes = np.where(rng.random(images) < 0.5, 1, rng.integers(2, 9, images))
    if rng.random() < 0.2:  # now and then one image carries many questions
        sizes[0] = 30
    return sizes


def judge_scale(latent: np.ndarray) -> np.ndarray:
    return np.clip(np.round(latent), 0.0, 4.0)


def true_mean(kind: str, mu: float, spread: float) -> float:
    """The population mean of a case's score whose latent is normal (mu, spread)."""
    if kind == "mcq":
        return float(stats.norm.sf(-mu / spread))
    # E clip(round(X), 0, 4) = the sum over k = 1..4 of P(X >= k - 1/2)
    return float(sum(stats.norm.sf((k - 0.5 - mu) / spread) for k in range(1, 5)))


@dataclass(frozen=True)
class OneRun:
    kind: str  # "mcq" or "0-4"
    images: int
    image_spread: float  # sd of the image's effect; a case's own is 1
    mu: float
    near_end: bool

    @property
    def name(self) -> str:
        where = "near the top" if self.near_end else "mid-scale"
        alike = "strongly" if self.image_spread > 1 else "weakly"
        return f"{self.kind}, {self.images} images, {where}, images {alike} alike"


ONE_RUN = [
    OneRun(kind, images, spread, mu, near_end)
    for kind, levels in (("mcq", ((0.3, False), (1.8, True))), ("0-4", ((2.0, False), (3.4, True))))
    for images in (25, 60)
    for spread in (0.5, 1.5)
    for mu, near_end in levels
]


@pytest.mark.parametrize("scenario", ONE_RUN, ids=lambda s: s.name)
def test_one_runs_interval_covers_the_true_mean(scenario: OneRun) -> None:
    rng = np.random.default_rng(ONE_RUN.index(scenario))
    truth = true_mean(scenario.kind, scenario.mu, float(np.hypot(scenario.image_spread, 1.0)))
    top = 1.0 if scenario.kind == "mcq" else 4.0
    covered = 0
    for _ in range(DATASETS):
        clusters = np.repeat(np.arange(scenario.images), cluster_sizes(rng, scenario.images))
        effect = rng.normal(0.0, scenario.image_spread, scenario.images)[clusters]
        latent = scenario.mu + effect + rng.normal(0.0, 1.0, len(clusters))
        values = (latent > 0).astype(float) if scenario.kind == "mcq" else judge_scale(latent)
        interval = clustered_mean_interval(values, [str(c) for c in clusters], top)
        assert interval.lower < interval.upper  # never of zero width
        covered += interval.lower <= truth <= interval.upper
    coverage = covered / DATASETS
    print(f"{scenario.name}: mean {truth:.3f}, coverage {coverage:.3f}")
    on_the_page(f"| {scenario.name} | {truth:.3f} | {coverage:.3f} |")
    assert coverage >= 0.93, coverage
    # Accuracy near the top with weakly alike images at 25 images: a proportion of ~100
    # cases is discrete, and an interval that keeps 0.93 when images are strongly alike is
    # wider than it needs to be here (0.982, none of its misses below it): the 0.97 of
    # issue 61 is not met there, and docs/intervals.md says so. It errs on the safe side.
    conservative = scenario.kind == "mcq" and scenario.near_end and scenario.image_spread < 1
    assert coverage <= (0.985 if conservative else 0.97), coverage


@dataclass(frozen=True)
class TwoRuns:
    kind: str
    images: int
    delta: float  # the shift of the latent score in run B; 0 is no change

    @property
    def name(self) -> str:
        change = {0.0: "no change", -0.15: "a small drop", -0.6: "a large drop"}[self.delta]
        return f"{self.kind}, {self.images} images, {change}"


TWO_RUNS = [
    TwoRuns(kind, images, delta)
    for kind in ("mcq", "0-4")
    for images in (25, 60)
    for delta in (0.0, -0.15, -0.6)
]
# The spreads of the image's effect, the case's own, and each run's per-image and per-case
# disturbance: two runs agree on most cases, as two runs of one model mostly do.
IMAGE, CASE, RUN_IMAGE, RUN_CASE = 0.8, 1.0, 0.4, 0.5


@pytest.mark.parametrize("scenario", TWO_RUNS, ids=lambda s: s.name)
def test_the_paired_change_covers_and_its_test_holds_its_level(scenario: TwoRuns) -> None:
    rng = np.random.default_rng(100 + TWO_RUNS.index(scenario))
    mu = 1.2 if scenario.kind == "mcq" else 2.5
    spread = float(np.sqrt(IMAGE**2 + CASE**2 + RUN_IMAGE**2 + RUN_CASE**2))
    truth = true_mean(scenario.kind, mu + scenario.delta, spread) - true_mean(
        scenario.kind, mu, spread
    )
    covered = rejected = no_interval = 0
    for _ in range(DATASETS):
        clusters = np.repeat(np.arange(scenario.images), cluster_sizes(rng, scenario.images))
        count = len(clusters)
        shared = mu + rng.normal(0.0, IMAGE, scenario.images)[clusters]
        shared = shared + rng.normal(0.0, CASE, count)
        runs = [
            shared
            + shift
            + rng.normal(0.0, RUN_IMAGE, scenario.images)[clusters]
            + rng.normal(0.0, RUN_CASE, count)
            for shift in (0.0, scenario.delta)
        ]
        if scenario.kind == "mcq":
            a, b = ((run > 0).astype(float) for run in runs)
        else:
            a, b = (judge_scale(run) for run in runs)
        result = clustered_paired_change(
            a, b, [str(c) for c in clusters], binary=scenario.kind == "mcq"
        )
        if np.isnan(result.interval.lower):
            no_interval += 1  # said why in its note; counted as not covering
            assert result.note
        else:
            assert result.interval.lower < result.interval.upper  # never [0, 0]
        covered += result.interval.lower <= truth <= result.interval.upper
        rejected += result.p_value is not None and result.p_value < 0.05
    coverage, alarms = covered / DATASETS, rejected / DATASETS
    print(
        f"{scenario.name}: change {truth:+.3f}, coverage {coverage:.3f}, p < 0.05 in "
        f"{alarms:.3f}, no interval in {no_interval}"
    )
    on_the_page(
        f"| {scenario.name} | {truth:+.3f} | {coverage:.3f} | {alarms:.3f} | {no_interval} |"
    )
    # Few cases change when MCQ runs barely differ: the adjusted Wald interval's pseudo-counts
    # then make it wider than it needs to be (0.976 with no change at 25 images; the shift
    # report's own simulation shows the same, docs/shift.md). It errs on the safe side.
    rare = scenario.kind == "mcq" and scenario.delta > -0.6
    assert 0.93 <= coverage <= (0.985 if rare else 0.97), coverage
    if scenario.delta == 0.0:
        assert alarms <= 0.06, alarms  # the false-alarm rate at 5%
    elif scenario.delta == -0.6:
        assert alarms >= 0.4, alarms  # and the test sees a large drop (0.50 at 25 images)
