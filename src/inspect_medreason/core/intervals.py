"""Uncertainty: intervals for the headline numbers and paired comparisons of two runs.

Cases that share an image are not independent (one unreadable image sinks all of its
questions), so every interval and test here counts images, not cases: each takes the
case's image cluster (``case_cluster``, the sample metadata's ``image_cluster``).

- One run's mean, MCQ accuracy (0-1) and a judge component (0-4) alike (``image_ci`` and
  ``stderr`` in the log; ``clustered_mean_interval``): the delete-one-image jackknife
  standard error, and the interval Student's t on Bell and McCaffrey's degrees of freedom
  around the mean's log-odds on its scale, so that it stays inside the scale and follows
  its skew near an end. At an end of the scale (every case right, every score 4) the
  Wilson score interval with one case per image stands in.
- Two runs over the same cases (``clustered_paired_change``, used by ``compare`` and
  ``shift``), where a small change leaves few discordant pairs: the test is the exact
  sign-flip randomization test of Durkalski's clustered McNemar statistic; the interval,
  for correctness, the Bonett-Price adjusted Wald interval widened by the clusters' design
  effect, and for a 0-4 scale the jackknife standard error with Student's t on Bell and
  McCaffrey's degrees of freedom; a change that cannot be estimated says why.

Each was chosen by simulation with known truth (``tests/core/test_interval_coverage.py``
and ``tests/core/test_shift_statistics.py``; figures in docs/intervals.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Value,
    ValueToFloat,
    metric,
    value_to_float,
)

LEVEL = 0.95
RESAMPLES = 2000  # the bootstraps of the calibration and agreement analyses
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


def cluster_codes(clusters: Sequence[str] | None, count: int) -> tuple[np.ndarray, int]:
    """Each row's cluster as a number, in order of first appearance (each row its own cluster
    when none are given), and the number of clusters."""
    if clusters is None:
        return np.arange(count), count
    numbers: dict[str, int] = {}
    codes = [numbers.setdefault(cluster, len(numbers)) for cluster in clusters]
    return np.asarray(codes, dtype=np.intp), len(numbers)


def cluster_totals(
    values: np.ndarray, clusters: Sequence[str] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's sum of ``values`` and its number of rows (as floats), clusters in order
    of first appearance: what the jackknife and the sign-flip test work on."""
    codes, groups = cluster_codes(clusters, len(values))
    sums = np.bincount(codes, weights=values, minlength=groups)
    return sums, np.bincount(codes, minlength=groups).astype(float)


def cluster_indices(clusters: Sequence[str] | None, count: int) -> list[np.ndarray]:
    """Row indices grouped by cluster, clusters in order of first appearance (the numbering of
    ``cluster_codes``), rows in order within each."""
    codes, groups = cluster_codes(clusters, count)
    rows = np.argsort(codes, kind="stable")
    return np.split(rows, np.cumsum(np.bincount(codes, minlength=groups))[:-1]) if groups else []


def case_cluster(
    metadata: Mapping[str, Any] | None, sample_id: object, key: str = IMAGE_CLUSTER
) -> str:
    """The image cluster of a case, what the intervals and tests count: the metadata's
    ``key`` when it has one (logs written before 2026-11-23 carry ``image_cluster``), else,
    for the image cluster, the case's image paths (a MedReason-layout case), else the
    digests of the images it was sent (``image_sha256``: every family's case; two questions
    on one picture go together whatever its file is called), else the case alone."""
    metadata = metadata or {}
    if metadata.get(key):
        return str(metadata[key])
    if key == IMAGE_CLUSTER:
        for identity in ("image_paths", "image_sha256"):
            found = metadata.get(identity)
            if isinstance(found, list) and found:
                return "|".join(sorted(map(str, found)))
    return str(sample_id)


def clustered_mean_interval(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | None,
    top: float = 1.0,
    level: float = LEVEL,
    *,
    bottom: float = 0.0,
) -> Interval:
    """The interval of a mean of scores on ``[bottom, top]`` (``[0, top]`` unless said)
    over cases that share images.

    The mean's share of the scale, ``m``, is moved to log-odds, ``log(m / (1 - m))``, its
    standard error (the delete-one-image jackknife's, ``jackknife_standard_error``) with it
    (``se / (m (1 - m))``), and Student's t on Bell and McCaffrey's degrees of freedom
    (``bell_mccaffrey_df``: the images less one when they carry as many cases each, fewer
    when one carries many) gives the bounds, moved back. In simulation (clusters of 1-8
    cases correlated within their image, now and then one of 30, 25 and 60 images;
    ``tests/core/test_interval_coverage.py``) it covered 0.945-0.975, where Student's t on
    the images less one covered 0.93 with 25 images and the t interval on the scale itself
    0.70-0.92 near an end of it. Where the log-odds are undefined (the mean at an end of the
    scale) or the images do not differ (no spread to estimate), the Wilson score interval
    counting each image as one case, with Student's t on the images less one, stands in: the
    honest bound when how alike an image's cases are cannot be measured, and never of zero
    width. Scores outside the scale get the t interval on the scale. Undefined (NaN) below
    two images."""
    from scipy import stats

    if bottom < 0.0 < top:  # a difference of two scores (-4 to 4)
        differences = np.asarray(values, dtype=float)
        groups = cluster_codes(clusters, len(differences))[1]
        if groups >= 2 and np.all(differences == differences[0]):
            # every difference the same (two judges agreeing on every case): the bound its
            # absolute value has (the Wilson bound at no spread, as for an MAE of 0), not the
            # widest interval of a mean at mid-scale
            critical = float(stats.t.ppf(0.5 + level / 2, groups - 1))
            half = max(-bottom, top) * _wilson_bounds(0.0, float(groups), critical)[1]
            centre = float(differences[0])
            return Interval(max(bottom, centre - half), min(top, centre + half))
    if bottom != 0.0:  # the same on the scale moved
        moved = clustered_mean_interval(
            np.asarray(values, dtype=float) - bottom, clusters, top - bottom, level
        )
        return Interval(moved.lower + bottom, moved.upper + bottom)
    data = np.asarray(values, dtype=float)
    count = len(data)
    sums, sizes = cluster_totals(data, clusters)
    groups = len(sums)
    if groups < 2:
        return NO_INTERVAL
    error = jackknife_standard_error(sums, sizes, count)
    mean = float(data.mean())
    quantile = float(stats.t.ppf(0.5 + level / 2, bell_mccaffrey_df(sizes)))
    if not (np.all(data >= 0.0) and np.all(data <= top)):
        return Interval(mean - quantile * error, mean + quantile * error)
    share = mean / top
    if 0.0 < share < 1.0 and error > 0.0:
        centre = math.log(share / (1.0 - share))
        half = quantile * (error / top) / (share * (1.0 - share))
        return Interval(top * _expit(centre - half), top * _expit(centre + half))
    critical = float(stats.t.ppf(0.5 + level / 2, groups - 1))
    lower, upper = _wilson_bounds(share, float(groups), critical)
    return Interval(top * lower, top * upper)


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _wilson_bounds(share: float, trials: float, critical: float) -> tuple[float, float]:
    spread = critical * critical / trials
    centre = (share + spread / 2) / (1 + spread)
    half = critical * math.sqrt(share * (1 - share) / trials + spread / (4 * trials))
    return max(0.0, centre - half / (1 + spread)), min(1.0, centre + half / (1 + spread))


def _scored(
    scores: list[SampleScore], to_float: ValueToFloat, cluster: str
) -> tuple[list[float], list[str]]:
    """The scored cases' values and image clusters (a NaN value, an unscored case, is left
    out, never counted as zero)."""
    values: list[float] = []
    clusters: list[str] = []
    for score in scores:
        value = to_float(score.score.value)
        if not _is_nan(value):
            values.append(value)
            clusters.append(case_cluster(score.sample_metadata, score.sample_id, cluster))
    return values, clusters


@metric(name="image_ci")
def image_ci(
    top: float = 1.0,
    to_float: ValueToFloat | None = None,
    cluster: str = IMAGE_CLUSTER,
    level: float = LEVEL,
) -> Metric:
    """The 95% interval of the mean counting images, not cases (``clustered_mean_interval``
    on the scale ``[0, top]``): ``{"lower", "upper"}``, NaN below two scored images."""
    read = to_float or value_to_float()

    def compute(scores: list[SampleScore]) -> Value:
        values, clusters = _scored(scores, read, cluster)
        return clustered_mean_interval(values, clusters, top, level).as_dict()

    return compute


@metric(name="stderr")
def image_stderr(to_float: ValueToFloat | None = None, cluster: str = IMAGE_CLUSTER) -> Metric:
    """The standard error of the mean counting images, not cases: the delete-one-image
    jackknife (``jackknife_standard_error``; with every case on its own image, the textbook
    standard error). Logged as ``stderr``, where Inspect's unclustered one would be:
    Inspect's ``stderr(cluster=...)`` stops a run one of whose samples lacks the key, and
    its sandwich estimate undercounts a large cluster's leverage. 0 below two scored
    images, as Inspect's is."""
    read = to_float or value_to_float()

    def compute(scores: list[SampleScore]) -> Value:
        return clustered_standard_error(*_scored(scores, read, cluster))

    return compute


def clustered_standard_error(
    values: Sequence[float] | np.ndarray, clusters: Sequence[str] | None
) -> float:
    """The standard error of the mean of ``values`` counting images (``clusters``, each row
    its own when None): ``jackknife_standard_error``. 0 below two images."""
    data = np.asarray(values, dtype=float)
    return jackknife_standard_error(*cluster_totals(data, clusters), len(data))


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
    0-4 scale, ``clustered_t_interval`` on the jackknife standard error and
    ``bell_mccaffrey_df``. ``detectable`` is
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
    sums, sizes = cluster_totals(differences, clusters)
    groups = len(sums)
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
        interval = clustered_t_interval(means[2], error, bell_mccaffrey_df(sizes), level)
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


def clustered_t_interval(
    mean: float, error: float, degrees: float, level: float = LEVEL
) -> Interval:
    """``mean`` +/- Student's t on ``degrees`` of freedom times ``error``."""
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, degrees)) * error
    return Interval(mean - half, mean + half)


def bell_mccaffrey_df(cluster_sizes: np.ndarray) -> float:
    """The degrees of freedom of a mean's clustered standard error, Bell and McCaffrey's
    ("Bias reduction in standard errors for linear regression with multi-stage samples",
    Survey Methodology 28(2):169-181, 2002; as Imbens and Kolesar recommend, Rev Econ Stat
    98(4):701-712, 2016): images of equal size give the images less one, one large image
    among small ones far fewer, since its cases carry most of the spread. Student's t on the
    images less one covered a 0-4 change 0.90-0.93 at 25 images with one image of 30 cases
    now and then; on these degrees of freedom, 0.94-0.95
    (``tests/core/test_interval_coverage.py``). For the mean the formula is closed: the Gram matrix of the
    clusters' bias-reduced contributions is ``c_g c_h (d_gh n_g - n_g n_h / n)`` with
    ``c_g = (1 - n_g / n) ** -0.5``, and the degrees of freedom are its trace squared over
    its squared Frobenius norm."""
    sizes = np.asarray(cluster_sizes, dtype=float)
    count = float(sizes.sum())
    if len(sizes) < 2:
        return math.nan
    scale = sizes / np.sqrt(1.0 - sizes / count)
    gram = -np.outer(scale, scale) / count
    gram[np.diag_indices_from(gram)] += scale * scale / sizes
    return float(np.trace(gram) ** 2 / np.sum(gram * gram))


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
