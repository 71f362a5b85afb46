"""Uncertainty: intervals for the headline numbers and paired comparisons of two runs.

- MCQ accuracy: the Wilson score interval (Inspect's ``ci_wilson`` in the log; scipy's
  ``binomtest(...).proportion_ci(method="wilson")`` where a number is recomputed from
  per-case values).
- Judge components (0-4): a percentile bootstrap of the mean that resamples whole clusters
  of cases sharing an image (cases on the same image are not independent), with a fixed
  seed so that the same log always shows the same interval.
- Two runs over the same cases (``clustered_paired_change``, used by ``compare`` and
  ``shift``), where cases share images and a small change leaves few discordant pairs: the
  test is the exact sign-flip randomization test of Durkalski's clustered McNemar
  statistic; the interval, for correctness, the Bonett-Price adjusted Wald interval widened
  by the clusters' design effect, and for a 0-4 scale Student's t on the images less one
  with the delete-one-image jackknife standard error; a change that cannot be estimated
  says why. The MCQ statistic was chosen by simulation (``tests/core/test_shift_statistics.py``,
  figures in docs/shift.md); the 0-4 interval is not yet held by one (issue 61).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Value, metric, value_to_float

LEVEL = 0.95
RESAMPLES = 2000
SEED = 20260
IMAGE_CLUSTER = "image_cluster"  # sample metadata key: cases with the same image(s) share it
# Two-sided alpha 0.05 and power 0.8: the usual design for "could this sample detect it".
# (scipy is imported where it is used: tasks import this module, and scipy.stats costs a second.)
DETECTABLE_Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)


@dataclass(frozen=True)
class Interval:
    lower: float
    upper: float

    def as_dict(self) -> dict[str, float]:
        return {"lower": self.lower, "upper": self.upper}


NO_INTERVAL = Interval(math.nan, math.nan)


def wilson_interval(successes: int, trials: int, level: float = LEVEL) -> Interval:
    """The Wilson score interval of a proportion (undefined without trials)."""
    from scipy import stats

    if trials == 0:
        return NO_INTERVAL
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=level, method="wilson")
    return Interval(float(ci.low), float(ci.high))


def cluster_codes(clusters: Sequence[str] | None, count: int) -> tuple[np.ndarray, int]:
    """Each row's cluster as a number, in order of first appearance (each row its own cluster
    when none are given), and the number of clusters."""
    if clusters is None:
        return np.arange(count), count
    numbers: dict[str, int] = {}
    codes = [numbers.setdefault(cluster, len(numbers)) for cluster in clusters]
    return np.asarray(codes, dtype=np.intp), len(numbers)


def cluster_indices(clusters: Sequence[str] | None, count: int) -> list[np.ndarray]:
    """Row indices grouped by cluster, clusters in order of first appearance (the numbering of
    ``cluster_codes``), rows in order within each."""
    codes, groups = cluster_codes(clusters, count)
    rows = np.argsort(codes, kind="stable")
    return np.split(rows, np.cumsum(np.bincount(codes, minlength=groups))[:-1]) if groups else []


def bootstrap_means(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> np.ndarray:
    """Means of ``resamples`` cluster-bootstrap resamples of ``values`` (whole clusters
    drawn with replacement; with no clusters, single values)."""
    data = np.asarray(values, dtype=float)
    return _resampled_means(data, *cluster_codes(clusters, len(data)), resamples, seed)


def _resampled_means(
    data: np.ndarray, codes: np.ndarray, count: int, resamples: int, seed: int
) -> np.ndarray:
    # Inspect recomputes the metrics for its progress display while a run goes on, so this is
    # vectorised (bincount, not a loop over clusters) and skips the resampled sizes when every
    # cluster has the same size: the same draws and a quarter of the work (a cluster's
    # scores are summed in another order, which can move a mean in its last bit).
    sums = np.bincount(codes, weights=data, minlength=count)
    sizes = np.bincount(codes, minlength=count).astype(float)
    equal_sizes = bool(count) and sizes.min() == sizes.max()
    means = []
    for picks in _picks(count, resamples, seed):
        if equal_sizes:
            means.append(sums[picks].sum(axis=1) / (sizes[0] * count))
        else:
            means.append(sums[picks].sum(axis=1) / sizes[picks].sum(axis=1))
    return np.concatenate(means) if means else np.zeros(0)


# Resampled cluster indices are drawn in blocks of at most this many (8 bytes each): a
# bootstrap over 100,000 clusters would otherwise hold 2,000 x 100,000 of them at once
# (1.6 GB). Blocks draw the same numbers as one call would, so the interval does not depend
# on the block size.
PICKS_PER_BLOCK = 1 << 22


def _picks(count: int, resamples: int, seed: int) -> Iterable[np.ndarray]:
    """The resampled cluster indices, ``resamples`` rows of ``count``, in blocks of rows.

    The indices depend only on the cluster count, the resample count and the seed, so the
    judge components of one metrics pass (which usually have the same number of scored
    clusters) share one draw: the last one that fits in a block is kept."""
    if count * resamples <= PICKS_PER_BLOCK:
        return [_cached_picks(count, resamples, seed)]
    return _picks_in_blocks(count, resamples, seed)


@functools.lru_cache(maxsize=1)
def _cached_picks(count: int, resamples: int, seed: int) -> np.ndarray:
    picks = np.random.default_rng(seed).integers(0, count, size=(resamples, count))
    picks.flags.writeable = False  # shared by every caller until the next size
    return picks


def _picks_in_blocks(count: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = max(1, PICKS_PER_BLOCK // max(count, 1))
    for start in range(0, resamples, rows):
        yield rng.integers(0, count, size=(min(rows, resamples - start), count))


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | None = None,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """Percentile bootstrap interval of the mean; undefined below two clusters."""
    data = np.asarray(values, dtype=float)
    codes, count = cluster_codes(clusters, len(data))
    if count < 2:
        return NO_INTERVAL
    means = _resampled_means(data, codes, count, resamples, seed)
    tail = (1.0 - level) / 2.0
    return Interval(float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail)))


def case_cluster(
    metadata: Mapping[str, Any] | None, sample_id: object, key: str = IMAGE_CLUSTER
) -> str:
    """The cluster a case is resampled with: the metadata's ``key`` when it has one (logs
    written before 2026-11-23 carry ``image_cluster``), else for the image cluster the case's
    image paths (cases on the same image(s) go together), else the case alone."""
    metadata = metadata or {}
    if metadata.get(key):
        return str(metadata[key])
    paths = metadata.get("image_paths") if key == IMAGE_CLUSTER else None
    if isinstance(paths, list) and paths:
        return "|".join(sorted(map(str, paths)))
    return str(sample_id)


@metric(name="bootstrap_ci")
def bootstrap_ci(
    cluster: str = IMAGE_CLUSTER, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED
) -> Metric:
    """Seeded percentile bootstrap interval of the mean, resampling clusters of cases that
    share an image; ``{"lower", "upper"}``, NaN when fewer than two clusters are scored."""
    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> Value:
        kept = [s for s in scores if not _is_nan(to_float(s.score.value))]
        values = [to_float(s.score.value) for s in kept]
        clusters = [case_cluster(s.sample_metadata, s.sample_id, cluster) for s in kept]
        return bootstrap_interval(values, clusters, level, resamples, seed).as_dict()

    return compute


def _is_nan(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)


@dataclass(frozen=True)
class PairedResult:
    """Run B minus run A on the cases both scored."""

    cases: int
    mean_a: float
    mean_b: float
    difference: float
    interval: Interval
    test: str
    p_value: float | None
    detectable: float | None  # smallest |difference| detectable at alpha 0.05, power 0.8
    note: str = ""


CLUSTER_TEST = "clustered sign-flip (Durkalski)"
# Sign flips drawn when the clusters with a non-zero change are too many to enumerate
# (scipy enumerates all 2^n when 2^n is at most this many).
SIGN_FLIPS = 9999
ONE_CLUSTER = (
    "all {count} cases share one image (one cluster): the change's uncertainty cannot be "
    "estimated and no test is possible; score cases on more images"
)
NO_DISCORDANCE = "no case changed between the runs (no discordant pairs)"


def clustered_paired_change(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | None,
    binary: bool,
    level: float = LEVEL,
    seed: int = SEED,
) -> PairedResult:
    """Run B minus run A over the same cases, cases sharing an image kept together.

    The test is ``cluster_sign_flip_p``. The interval, for correctness (``binary``), is
    ``clustered_adjusted_wald``: a plain or cluster bootstrap collapses to [0, 0] when no
    case changed, and covers a small change far less often than it says (issue 52); for a
    0-4 scale, ``clustered_t_interval`` on the jackknife standard error. ``detectable`` is
    the smallest change the images could detect (alpha 0.05, power 0.8) at that standard
    error. A change that cannot be estimated has no interval (NaN, written as null) and
    its reason in ``note``."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    count = len(first)
    if count == 0:
        return PairedResult(
            0, math.nan, math.nan, math.nan, NO_INTERVAL, "", None, None,
            "no case was scored in both runs",
        )  # fmt: skip
    differences = second - first
    codes, groups = cluster_codes(clusters, count)
    sums = np.bincount(codes, weights=differences, minlength=groups)
    sizes = np.bincount(codes, minlength=groups).astype(float)
    means = float(first.mean()), float(second.mean()), float(differences.mean())
    if groups < 2:
        note = ONE_CLUSTER.format(count=count)
        return PairedResult(count, *means, NO_INTERVAL, CLUSTER_TEST, None, None, note)
    p_value = cluster_sign_flip_p(sums, seed)
    notes: list[str] = []
    error = jackknife_standard_error(sums, sizes, count)
    detectable = DETECTABLE_Z * error if error > 0 else None
    if binary:
        interval = clustered_adjusted_wald(first, second, sums, sizes, level)
        if not np.any(differences):
            notes.append(
                f"{NO_DISCORDANCE}: the interval is the adjusted Wald bound with no design "
                "effect to estimate"
            )
    elif not np.any(differences):
        interval = NO_INTERVAL
        notes.append(f"{NO_DISCORDANCE}: no spread to draw an interval from")
    elif error == 0:
        interval = NO_INTERVAL
        notes.append(
            "every image changed by the same amount: no spread between images to draw an "
            "interval from"
        )
    else:
        interval = clustered_t_interval(means[2], error, groups, level)
    return PairedResult(
        count, *means, interval, CLUSTER_TEST, p_value, detectable, "; ".join(notes)
    )


def jackknife_standard_error(
    cluster_sums: np.ndarray, cluster_sizes: np.ndarray, count: int
) -> float:
    """The delete-one-cluster jackknife standard error of a mean over ``count`` rows whose
    per-cluster sums and sizes are given: it counts images, not cases, and a large cluster
    (many questions on one image) keeps the leverage a sandwich estimate underestimates."""
    groups = len(cluster_sums)
    if groups < 2:
        return 0.0
    left_out = (cluster_sums.sum() - cluster_sums) / (count - cluster_sizes)
    return math.sqrt((groups - 1) / groups * float(np.sum((left_out - left_out.mean()) ** 2)))


def clustered_t_interval(mean: float, error: float, groups: int, level: float = LEVEL) -> Interval:
    """``mean`` +/- Student's t on ``groups`` - 1 degrees of freedom times ``error``: the
    normal quantile and the percentile bootstrap both covered less than they said with a few
    dozen images (0.92-0.93 at 25 images, issue 61)."""
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, groups - 1)) * error
    return Interval(mean - half, mean + half)


def cluster_sign_flip_p(cluster_changes: np.ndarray, seed: int = SEED) -> float:
    """Two-sided p-value of the summed change under sign flips of whole clusters.

    Durkalski et al.'s clustered McNemar statistic, (sum of cluster changes)^2 over the sum
    of their squares ("Analysis of clustered matched-pair data", Stat Med 22(15):2417-2428,
    2003), compared with its exact randomization distribution instead of chi-square: under
    no effect of the shift the two runs of an image are exchangeable, so each cluster's
    change is as likely negated. The denominator does not change under flips, so the test is
    that of the absolute sum; clusters that did not change flip to themselves and are left
    out. Exact (scipy enumerates every flip) up to 13 changed clusters, else 9,999 seeded
    flips. With at most one changed cluster the p-value is 1."""
    from scipy import stats

    changed = cluster_changes[cluster_changes != 0]
    if changed.size < 2:  # one changed cluster: both of its signs give the same |sum|
        return 1.0

    def absolute_sum(sample: np.ndarray, axis: int) -> np.ndarray:
        return np.abs(np.sum(sample, axis=axis))

    result = stats.permutation_test(
        (changed,),
        absolute_sum,
        permutation_type="samples",
        alternative="greater",
        n_resamples=SIGN_FLIPS,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(min(1.0, result.pvalue))


def clustered_adjusted_wald(
    first: np.ndarray,
    second: np.ndarray,
    cluster_changes: np.ndarray,
    cluster_sizes: np.ndarray,
    level: float = LEVEL,
) -> Interval:
    """Interval for the change in a paired proportion (second - first) with shared images.

    Bonett and Price's adjusted Wald interval for paired proportions (one pseudo-count added
    to each discordant cell, two to the pairs: "Adjusted Wald confidence interval for a
    difference of binomial proportions based on paired data", J Educ Behav Stat 37(4):
    479-488, 2012) keeps its coverage with few discordant pairs and never has zero width;
    its variance is multiplied by the design effect of the shared images, the ratio of the
    delete-one-cluster jackknife variance of the mean change to its variance if every case
    were its own image, never below 1 (1 when no case changed), with Student's t on the
    number of clusters less one. Clipped to [-1, 1]."""
    count = len(first)
    lost = float(np.sum((first == 1) & (second == 0)))
    gained = float(np.sum((first == 0) & (second == 1)))
    p_lost, p_gained = (lost + 1) / (count + 2), (gained + 1) / (count + 2)
    centre = p_gained - p_lost
    variance = (p_lost + p_gained - centre**2) / (count + 2)
    change = (gained - lost) / count
    independent = ((lost + gained) / count - change**2) / count
    groups = len(cluster_changes)
    robust = jackknife_standard_error(cluster_changes, cluster_sizes, count) ** 2
    design_effect = max(1.0, robust / independent) if independent > 0 else 1.0
    # Student's t on the clusters' degrees of freedom, not the normal quantile: the design
    # effect is estimated from the clusters, and with a few dozen of them (one possibly
    # large) the normal quantile covered a drop of 0.19 in 92% of simulated datasets.
    from scipy import stats

    quantile = float(stats.t.ppf(0.5 + level / 2, groups - 1))
    half = quantile * math.sqrt(variance * design_effect)
    return Interval(max(-1.0, centre - half), min(1.0, centre + half))
