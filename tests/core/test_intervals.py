"""Intervals and paired tests against values worked out independently: Wilson's score
interval (Newcombe 1998), the textbook standard error, the delete-one-image jackknife written
out, exact binomial sums by hand."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score
from scipy import stats

from inspect_medreason.core import intervals
from inspect_medreason.core.intervals import (
    case_cluster,
    cluster_indices,
    clustered_mean_interval,
    clustered_paired_change,
    image_ci,
    image_stderr,
)


def _scores(values: list[float], metadata: list[dict[str, Any]]) -> list[SampleScore]:
    return [
        SampleScore(score=Score(value=v), sample_id=str(i), sample_metadata=m)
        for i, (v, m) in enumerate(zip(values, metadata, strict=True))
    ]


def _jackknife_by_hand(values: np.ndarray, clusters: list[str]) -> float:
    names = sorted(set(clusters))
    left_out = [
        np.mean([v for v, c in zip(values, clusters, strict=True) if c != name]) for name in names
    ]
    groups = len(names)
    return math.sqrt((groups - 1) / groups * np.sum((np.array(left_out) - np.mean(left_out)) ** 2))


def test_one_case_per_image_gives_the_textbook_standard_error() -> None:
    rng = np.random.default_rng(2)
    values = rng.integers(0, 5, size=40).astype(float)
    metric: Any = image_stderr()
    found = metric(_scores(list(values), [{"image_cluster": str(i)} for i in range(40)]))
    assert found == pytest.approx(values.std(ddof=1) / math.sqrt(40), rel=1e-12)


def test_cases_sharing_images_widen_the_standard_error_and_interval() -> None:
    """The same 20 values on three cases each: the image is the unit, so the standard error
    and the interval are the 20-image ones, wider than 60 independent cases would give."""
    rng = np.random.default_rng(1)
    values = rng.integers(0, 5, size=20).astype(float)
    repeated = np.repeat(values, 3)
    clusters = [f"image{i // 3}" for i in range(60)]
    error: Any = image_stderr()
    clustered = error(_scores(list(repeated), [{"image_cluster": c} for c in clusters]))
    naive = error(_scores(list(repeated), [{"image_cluster": str(i)} for i in range(60)]))
    assert clustered == pytest.approx(_jackknife_by_hand(repeated, clusters), rel=1e-12)
    assert clustered == pytest.approx(values.std(ddof=1) / math.sqrt(20), rel=1e-12)
    assert clustered > 1.6 * naive
    wide = clustered_mean_interval(repeated, clusters, top=4.0)
    narrow = clustered_mean_interval(repeated, None, top=4.0)
    assert wide.upper - wide.lower > 1.6 * (narrow.upper - narrow.lower)


def test_bell_mccaffrey_degrees_of_freedom() -> None:
    """Equal images give the images less one; one image of 30 cases among 24 single ones
    about 3 (its cases carry most of the spread), as the general formula
    (trace(A)^2 / trace(A^2), A the bias-reduced contributions' Gram matrix) computed with
    the hat matrix written out gives."""
    assert intervals.bell_mccaffrey_df(np.full(25, 3.0)) == pytest.approx(24.0)
    sizes = np.array([30.0] + [1.0] * 24)
    count = int(sizes.sum())
    rows = np.repeat(np.arange(len(sizes)), sizes.astype(int))
    residual_maker = np.eye(count) - np.full((count, count), 1.0 / count)
    columns = []
    for cluster in range(len(sizes)):
        inside = rows == cluster
        block = residual_maker[np.ix_(inside, inside)]
        values, vectors = np.linalg.eigh(block)  # (I - H_gg)^(-1/2), written out
        adjust = vectors @ np.diag(values**-0.5) @ vectors.T
        weights = np.zeros(count)
        weights[inside] = adjust @ np.ones(int(sizes[cluster])) / count
        columns.append(residual_maker @ weights)
    gram = np.array([[a @ b for b in columns] for a in columns])
    expected = np.trace(gram) ** 2 / np.sum(gram * gram)
    assert intervals.bell_mccaffrey_df(sizes) == pytest.approx(expected, rel=1e-9)
    assert 2.5 < expected < 3.5


def test_the_interval_is_student_t_on_the_log_odds_of_the_scale() -> None:
    values = np.array([4.0, 3.0, 3.0, 1.0, 0.0, 2.0, 4.0, 4.0, 2.0, 3.0])
    clusters = ["a", "a", "b", "c", "c", "d", "e", "f", "f", "g"]
    found = clustered_mean_interval(values, clusters, top=4.0)
    share = values.mean() / 4
    degrees = intervals.bell_mccaffrey_df(np.array([2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0]))
    assert 4 < degrees < 6  # fewer than the images less one: the images differ in size
    half = stats.t.ppf(0.975, degrees) * _jackknife_by_hand(values, clusters) / 4
    half /= share * (1 - share)
    logit = math.log(share / (1 - share))
    assert found.lower == pytest.approx(4 / (1 + math.exp(-(logit - half))), rel=1e-12)
    assert found.upper == pytest.approx(4 / (1 + math.exp(-(logit + half))), rel=1e-12)
    assert 0 < found.lower < values.mean() < found.upper < 4  # inside the scale, never past it


@pytest.mark.parametrize(
    ("successes", "trials", "lower", "upper"),
    [(20, 20, 0.8389, 1.0), (0, 20, 0.0, 0.1611)],
)
def test_at_an_end_of_the_scale_the_wilson_interval_counts_images(
    successes: int, trials: int, lower: float, upper: float
) -> None:
    """Every case right (or wrong): no spread to measure, so Wilson's score interval with one
    case per image, never [1, 1]. With the normal quantile it is Newcombe's (1998) 0/20 row;
    the interval uses Student's t on the images less one, a little wider."""
    values = [1.0] * successes + [0.0] * (trials - successes)
    found = clustered_mean_interval(values, [str(i) for i in range(trials)], top=1.0)
    normal = intervals._wilson_bounds(successes / trials, trials, 1.959964)
    assert normal == pytest.approx((lower, upper), abs=5e-5)
    assert found.lower <= normal[0] + 1e-12 and found.upper >= normal[1] - 1e-12
    assert found.upper - found.lower > 0.15
    # forty cases on the same ten images count as ten: wider still
    repeated = clustered_mean_interval(values * 2, [str(i % 10) for i in range(2 * trials)])
    assert repeated.upper - repeated.lower > found.upper - found.lower


def test_too_few_images_have_no_interval_and_off_scale_values_the_plain_t() -> None:
    assert math.isnan(clustered_mean_interval([3.0, 4.0], ["same", "same"], top=4.0).lower)
    assert math.isnan(clustered_mean_interval([], None).lower)
    odd = clustered_mean_interval([-1.0, 2.0, 5.0], None, top=4.0)
    half = stats.t.ppf(0.975, 2) * np.std([-1.0, 2.0, 5.0], ddof=1) / math.sqrt(3)
    assert (odd.lower, odd.upper) == pytest.approx((2.0 - half, 2.0 + half), rel=1e-12)


def test_image_ci_leaves_unscored_cases_out() -> None:
    values = [1.0, 2.0, 3.0, 4.0, math.nan]
    metric: Any = image_ci(top=4.0)
    result = metric(_scores(values, [{"image_cluster": str(i)} for i in range(5)]))
    expected = clustered_mean_interval([1.0, 2.0, 3.0, 4.0], ["0", "1", "2", "3"], top=4.0)
    assert result == {"lower": expected.lower, "upper": expected.upper}
    error: Any = image_stderr()
    assert error(_scores(values, [{} for _ in range(5)])) == pytest.approx(
        np.std([1.0, 2.0, 3.0, 4.0], ddof=1) / 2, rel=1e-12
    )


def test_cluster_indices_keep_first_appearance_and_row_order() -> None:
    grouped = cluster_indices(["b", "a", "b", "c", "a"], 5)
    assert [list(group) for group in grouped] == [[0, 2], [1, 4], [3]]
    assert [list(group) for group in cluster_indices(None, 3)] == [[0], [1], [2]]
    assert cluster_indices([], 0) == []


def test_cases_on_the_same_images_share_a_cluster() -> None:
    """Samples carry their image paths (logs before 2026-11-23 also an ``image_cluster``),
    every family's the digests of the images sent: the cluster is the sorted paths, else the
    sorted digests, whatever their order; a case without images, or with unreadable paths,
    is its own cluster."""
    assert case_cluster({"image_paths": ["b.png", "a.png"]}, "c1") == "a.png|b.png"
    assert case_cluster({"image_paths": ["a.png", "b.png"]}, "c2") == "a.png|b.png"
    assert case_cluster({"image_cluster": "x", "image_paths": ["a.png"]}, "c3") == "x"
    assert case_cluster({"image_paths": []}, "c4") == "c4"
    assert case_cluster({"image_paths": "a.png"}, "c5") == "c5"
    assert case_cluster(None, 7) == "7"
    assert case_cluster({"image_paths": ["a.png"]}, "c6", key="site") == "c6"
    assert case_cluster({"image_sha256": ["f0", "e1"]}, "c7") == "e1|f0"
    assert case_cluster({"image_paths": ["a.png"], "image_sha256": ["f0"]}, "c8") == "a.png"
    assert case_cluster({"image_sha256": []}, "c9") == "c9"
    values = [1.0, 2.0, 3.0, 4.0]
    expected = clustered_mean_interval(values, ["0", "0", "1", "1"], top=4.0)
    for layout in ("image_paths", "image_sha256"):
        metric: Any = image_ci(top=4.0)
        found = metric(_scores(values, [{layout: [f"{i // 2}"]} for i in range(4)]))
        assert found == {"lower": expected.lower, "upper": expected.upper}, layout


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
    # a 0-4 change on few images: Student's t on Bell-McCaffrey degrees of freedom, wider than the normal
    scores = clustered_paired_change(
        [3.0] * 12, [2.0, 3.0, 4.0, 1.0, 3.0, 2.0] * 2, [f"k{n // 3}" for n in range(12)], False
    )
    normal_half = 1.96 * (scores.detectable or 0) / intervals.DETECTABLE_Z
    assert scores.interval.upper - scores.difference > normal_half


def test_a_difference_that_never_varies_gets_the_bound_of_its_absolute_value() -> None:
    """Two judges agreeing on every case: the bias interval is the MAE-of-zero bound either
    side of 0 (was the widest mid-scale interval, +/-1.5 at 25 images)."""
    clusters = [f"i{n % 25}" for n in range(60)]
    zero_mae = clustered_mean_interval([0.0] * 60, clusters, top=4.0)
    bias = clustered_mean_interval([0.0] * 60, clusters, top=4.0, bottom=-4.0)
    assert bias.lower == pytest.approx(-zero_mae.upper) and bias.upper == pytest.approx(
        zero_mae.upper
    )
    assert 0.0 < bias.upper < 1.0
    shifted = clustered_mean_interval([1.0] * 60, clusters, top=4.0, bottom=-4.0)
    assert shifted.lower == pytest.approx(1.0 - zero_mae.upper)
