"""Intervals and paired tests against values worked out independently: Newcombe's (1998)
Wilson intervals, exact binomial sums by hand, the exact Wilcoxon null distribution."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score

from inspect_medreason.core import intervals
from inspect_medreason.core.intervals import (
    RESAMPLES,
    SEED,
    bootstrap_ci,
    bootstrap_interval,
    bootstrap_means,
    case_cluster,
    cluster_indices,
    clustered_paired_change,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("successes", "trials", "lower", "upper"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611)],
)
def test_wilson_interval_matches_newcombe_1998(
    successes: int, trials: int, lower: float, upper: float
) -> None:
    interval = wilson_interval(successes, trials)
    assert interval.lower == pytest.approx(lower, abs=5e-5)
    assert interval.upper == pytest.approx(upper, abs=5e-5)


def test_no_trials_has_no_interval() -> None:
    interval = wilson_interval(0, 0)
    assert math.isnan(interval.lower) and math.isnan(interval.upper)


def test_bootstrap_interval_is_seeded_and_respects_clusters() -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(0, 5, size=60).astype(float)
    plain = bootstrap_interval(values)
    assert plain == bootstrap_interval(values)  # same seed, same interval
    # close to the t interval for independent cases
    half_width = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
    assert plain.upper - plain.lower == pytest.approx(2 * half_width, rel=0.15)
    # the same 20 values on three cases each (three questions per image): the image is the
    # unit, so the interval is the 20-image one, wider than treating 60 cases as independent
    repeated = np.repeat(values[:20], 3)
    clusters = [f"image{i // 3}" for i in range(60)]
    clustered = bootstrap_interval(repeated, clusters)
    naive = bootstrap_interval(repeated)
    assert clustered.upper - clustered.lower > 1.4 * (naive.upper - naive.lower)
    single = bootstrap_interval([3.0, 4.0], ["same", "same"])
    assert math.isnan(single.lower)  # one cluster: no interval, not a zero-width one


def test_cluster_indices_keep_first_appearance_and_row_order() -> None:
    grouped = cluster_indices(["b", "a", "b", "c", "a"], 5)
    assert [list(group) for group in grouped] == [[0, 2], [1, 4], [3]]
    assert [list(group) for group in cluster_indices(None, 3)] == [[0], [1], [2]]
    assert cluster_indices([], 0) == []


@pytest.mark.parametrize("layout", ["one case per image", "images with 1-4 cases", "none"])
def test_bootstrap_means_are_the_textbook_cluster_resamples(layout: str) -> None:
    """Each resample draws whole clusters (in order of first appearance) with replacement and
    averages every case they hold: the vectorised computation must give exactly that."""
    rng = np.random.default_rng(7)
    values = rng.random(50) * 4
    clusters: list[str] | None = {
        "one case per image": [f"image{i}" for i in range(50)],
        "images with 1-4 cases": [f"image{int(rng.integers(0, 20))}" for _ in range(50)],
        "none": None,
    }[layout]
    means = bootstrap_means(values, clusters, resamples=200, seed=11)
    members: dict[str, list[int]] = {}
    for index, cluster in enumerate(clusters or [str(i) for i in range(50)]):
        members.setdefault(cluster, []).append(index)
    groups = list(members.values())
    picks = np.random.default_rng(11).integers(0, len(groups), size=(200, len(groups)))
    expected = [
        sum(values[i] for g in row for i in groups[g]) / sum(len(groups[g]) for g in row)
        for row in picks
    ]
    assert means == pytest.approx(expected, rel=1e-12)


def test_bootstrap_ci_metric_leaves_unscored_cases_out() -> None:
    scores = [
        SampleScore(
            score=Score(value=v), sample_id=str(i), sample_metadata={"image_cluster": str(i)}
        )
        for i, v in enumerate([1.0, 2.0, 3.0, 4.0, math.nan])
    ]
    metric: Any = bootstrap_ci()
    result = metric(scores)
    assert isinstance(result, dict)
    expected = bootstrap_interval([1.0, 2.0, 3.0, 4.0], ["0", "1", "2", "3"])
    assert result == {"lower": expected.lower, "upper": expected.upper}


def test_cases_on_the_same_images_share_a_cluster() -> None:
    """Samples carry their image paths (logs before 2026-11-23 also an ``image_cluster``):
    the cluster is the sorted paths, whatever their order; a case without images, or with
    unreadable paths, is its own cluster."""
    assert case_cluster({"image_paths": ["b.png", "a.png"]}, "c1") == "a.png|b.png"
    assert case_cluster({"image_paths": ["a.png", "b.png"]}, "c2") == "a.png|b.png"
    assert case_cluster({"image_cluster": "x", "image_paths": ["a.png"]}, "c3") == "x"
    assert case_cluster({"image_paths": []}, "c4") == "c4"
    assert case_cluster({"image_paths": "a.png"}, "c5") == "c5"
    assert case_cluster(None, 7) == "7"
    assert case_cluster({"image_paths": ["a.png"]}, "c6", key="site") == "c6"
    scores = [
        SampleScore(
            score=Score(value=v),
            sample_id=str(i),
            sample_metadata={"image_paths": [f"{i // 2}.png"]},
        )
        for i, v in enumerate([1.0, 2.0, 3.0, 4.0])
    ]
    metric: Any = bootstrap_ci()
    expected = bootstrap_interval([1.0, 2.0, 3.0, 4.0], ["0.png", "0.png", "1.png", "1.png"])
    assert metric(scores) == {"lower": expected.lower, "upper": expected.upper}


def test_the_paired_change_is_significant_and_not_and_counts_images() -> None:
    better = clustered_paired_change([0.0] * 30 + [1.0] * 10, [1.0] * 40, None, binary=True)
    assert better.difference == pytest.approx(0.75) and better.p_value is not None
    assert better.p_value < 0.001 and better.interval.lower > 0
    close = clustered_paired_change([1.0, 0.0] * 20, [0.0, 1.0] * 20, None, binary=True)
    assert close.difference == 0.0 and close.p_value == pytest.approx(1.0)
    assert close.interval.lower < 0 < close.interval.upper
    assert close.detectable is not None and close.detectable > 0.4  # 40 cases see only big gaps
    same = clustered_paired_change([2.0, 3.0, 4.0], [2.0, 3.0, 4.0], None, binary=False)
    assert same.detectable is None and "no case changed" in same.note
    assert math.isnan(same.interval.lower)  # no interval, never [0, 0]
    # issue 61: three images of eight cases each, all lost. Counted as 24 cases, McNemar gave
    # p = 1.2e-07; three images are three units of evidence, and two-sided sign flips of
    # three clusters cannot go below 2/8.
    images = [f"i{n // 8}" for n in range(24)] + [f"j{n}" for n in range(36)]
    lost = clustered_paired_change([1.0] * 60, [0.0] * 24 + [1.0] * 36, images, binary=True)
    assert lost.p_value == pytest.approx(0.25)
    assert lost.interval.lower < lost.difference < lost.interval.upper
    # a 0-4 change on few images: Student's t on the images less one, wider than the normal
    scores = clustered_paired_change(
        [3.0] * 12, [2.0, 3.0, 4.0, 1.0, 3.0, 2.0] * 2, [f"k{n // 3}" for n in range(12)], False
    )
    normal_half = 1.96 * (scores.detectable or 0) / intervals.DETECTABLE_Z
    assert scores.interval.upper - scores.difference > normal_half


def test_bootstrap_draws_in_blocks_are_the_draws_of_one_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bootstrap over many clusters draws its resamples in blocks (memory stays bounded):
    whatever the block size, the interval is the one a single draw of every resample gives,
    and the shared draw of a size does not leak into another."""
    rng = np.random.default_rng(3)
    for _ in range(60):
        count = int(rng.integers(2, 200))
        values = rng.integers(0, 5, size=count).astype(float)
        clusters = [str(c) for c in rng.integers(0, max(2, count // 3), size=count)]
        codes, groups = intervals.cluster_codes(clusters, count)
        sums = np.bincount(codes, weights=values, minlength=groups)
        sizes = np.bincount(codes, minlength=groups).astype(float)
        picks = np.random.default_rng(SEED).integers(0, groups, size=(RESAMPLES, groups))
        means = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
        expected = (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))
        monkeypatch.setattr(
            intervals, "PICKS_PER_BLOCK", int(rng.integers(1, 2 * groups * RESAMPLES))
        )
        found = bootstrap_interval(values, clusters)
        assert (found.lower, found.upper) == pytest.approx(expected, rel=1e-12)
