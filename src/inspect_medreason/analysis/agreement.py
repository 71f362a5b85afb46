"""How far do the judges agree: with each other, with reference scores and with people.

:func:`judge_agreement` reads judged open-ended logs (a panel in one log, or the same cases
judged in several logs) and, optionally, reference scores (``judge_scores.json``) or the
people's ratings of a rating round, and returns an :class:`Agreement`: per component, each
pair of raters' statistics (``Agreement.to_pandas()``), Krippendorff's alpha and the ICC of
all raters, and each rater's score distribution. ``METHOD`` says how each figure is
computed. ``medreason agreement`` (``cli/agreement.py``) is its shell: it prints and writes
what this module computes.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from inspect_ai.log import EvalLog

from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import log_files
from inspect_medreason.analysis.figures import png_bytes, pyplot
from inspect_medreason.analysis.judgings import OPEN_SCORER, is_score_of, member_models, score_names
from inspect_medreason.analysis.logs import (
    LoggedSample,
    UnreadableSample,
    log_header,
    logged_samples,
    one_attempt_per_run,
)
from inspect_medreason.analysis.score_values import duplicated, left_out, read_score
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.gate import gate_visual_accuracy
from inspect_medreason.core.intervals import (
    LEVEL,
    SEED,
    Interval,
    case_cluster,
    cluster_codes,
    clustered_mean_interval,
)
from inspect_medreason.core.judges import bound_role_models, panel_members
from inspect_medreason.core.user_files import MAX_DATA_BYTES, UserFileError, read_user_bytes
from inspect_medreason.rating.cases import RATED_COMPONENTS, SampleRef
from inspect_medreason.rating.ratings_file import RatingRound, map_round_to_logs, read_rating_round

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Agreement",
    "ComponentAgreement",
    "Estimate",
    "PairAgreement",
    "RaterScores",
    "agreement_of",
    "judge_agreement",
    "read_rater_scores",
]

# How every figure is computed: the JSON report's "method" (its last sentence predates the
# split into cli/agreement.py).
METHOD = """How far do the judges agree: with each other, and with reference scores?

Reads judged open-ended logs (a panel in one log, or the same cases judged in several logs)
and, optionally, reference scores in the official ``judge_scores.json`` format (a human's
or the organizers' scores). Every judge (a role in a log) and the reference is a *rater*.
Per component (GT_final, VA_answer, RVF_trace, VA_final) it reports, for each pair of
raters on the cases both scored: quadratic-weighted Cohen's kappa (as scikit-learn computes it), exact and
within-one agreement, Spearman's rho (scipy), the mean bias (second minus first) and the
confusion matrix; for all raters together: Krippendorff's alpha, ordinal (the
``krippendorff`` package), and the ICC(2,1) (two-way random, absolute agreement, single
rater; as pingouin computes it, with its F-based 95% interval) on the cases every rater scored; and
each rater's score distribution. Every interval counts images: the means (exact and
within-one agreement, bias, MAE) the delete-one-image jackknife with Student's t on Bell and
McCaffrey's degrees of freedom, on the log-odds of their scale; kappa, rho and alpha a 95%
BCa bootstrap that resamples whole images (the cases on one image together, seeded; its
jackknife leaves one image out at a time); on a single image there is no interval.

People's ratings from a rating round (``medreason rate``; ``--ratings``, one file per rater)
make each person a rater named ``rater:<name>``. Every judge is then compared with each
rater on the cases both scored (never with the raters' mean: kappa needs whole scores, and
the raters' spread is itself reported), the raters with each other, and per pair the mean
absolute error and the ICC(2,1) of the two are added; the ICC of the people alone is
reported beside the ICC of all. A pair's bias is second minus first, and a person comes
first, then the reference: a positive bias is a judge scoring higher than the person (or
the reference).

Judges are compared on a reply both judged: where logs hold different replies to a case
(two models, or two runs of one), each reply is its own case (``id (reply n)``), and the
reference, which names no reply, is compared with none of them. A person's VA_final is
their own VA gated by their own RVF, as a judge's.

``medreason agreement``, its arguments and what it prints, is at the end of the module.
"""

COMPONENTS = ("gt_final", "va_answer", "rvf_trace", "va_final")
SCALE = [0, 1, 2, 3, 4]
RESAMPLES = 1000
REFERENCE = "reference"
# Every pair of raters is bootstrapped (1,000 resamples of six statistics) and the pairs grow
# with the square of the raters: 30 raters are 435 pairs per component, 4 s on 12 shared
# cases and some minutes on thousands. Beyond, the report is a wall no one reads anyway.
MAX_RATERS = 30
PERSON = "rater:"  # the prefix of a person's name among the raters

Ratings = dict[str, dict[str, dict[str, int]]]  # component -> rater -> case -> score


@dataclass(frozen=True)
class Estimate:
    """A statistic and its 95% interval (NaN bounds where it cannot be estimated)."""

    value: float
    interval: Interval

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "lower": self.interval.lower, "upper": self.interval.upper}


@dataclass(frozen=True)
class PairAgreement:
    """Two raters on the cases both scored: ``bias`` and ``mae`` are second minus first,
    ``confusion`` counts the first's scores (rows) against the second's (columns)."""

    first: str
    second: str
    cases: int
    kappa: Estimate
    exact: Estimate
    within_one: Estimate
    spearman: Estimate
    bias: Estimate
    confusion: list[list[int]]
    mae: Estimate
    icc: Estimate

    @property
    def kind(self) -> str:
        """judge-judge, person-judge or person-person (a reference counts as a judge)."""
        people = sum(name.startswith(PERSON) for name in (self.first, self.second))
        return ("judge-judge", "person-judge", "person-person")[people]


@dataclass(frozen=True)
class ComponentAgreement:
    """One component's agreement: every pair of raters, alpha and the ICC(2,1) of all
    raters (on ``icc_cases`` cases every rater scored) and of the people alone, each
    rater's count of each score 0-4, and what could not be computed (``notes``)."""

    component: str
    raters: list[str]
    pairs: list[PairAgreement]
    alpha: Estimate | None
    icc: Estimate | None
    icc_cases: int
    distributions: dict[str, list[int]]
    notes: list[str]
    people_icc: Estimate | None = None  # the ICC(2,1) of the people alone
    people_icc_cases: int = 0


# (i - j)^2 for scores i, j: the quadratic disagreement weights
_QUADRATIC_WEIGHTS = np.subtract.outer(np.arange(len(SCALE)), np.arange(len(SCALE))) ** 2.0


def score_confusion(
    first: Sequence[int] | np.ndarray, second: Sequence[int] | np.ndarray
) -> np.ndarray:
    """5x5 counts: row = the first rater's score, column = the second's."""
    codes = np.asarray(first, dtype=np.int64) * len(SCALE) + np.asarray(second, dtype=np.int64)
    return np.bincount(codes, minlength=len(SCALE) ** 2).reshape(len(SCALE), len(SCALE))


def quadratic_kappa(first: Sequence[int] | np.ndarray, second: Sequence[int] | np.ndarray) -> float:
    """Cohen's kappa with quadratic weights of two raters' 0-4 scores (scikit-learn's
    ``cohen_kappa_score(..., weights="quadratic")``, which the tests hold it to on 2,000
    random pairs of raters). Written out because the bootstrap calls it a thousand times
    per pair of judges, and scikit-learn's checks of its inputs made a call 1.7 ms: 7 of
    the 9 s ``agreement`` took on 4,000 cases. NaN when undefined (both raters always give
    one same score)."""
    observed = score_confusion(first, second)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / max(observed.sum(), 1)
    disagreement = float(np.sum(_QUADRATIC_WEIGHTS * expected))
    if disagreement == 0.0:
        return math.nan
    return 1.0 - float(np.sum(_QUADRATIC_WEIGHTS * observed)) / disagreement


def spearman(first: np.ndarray, second: np.ndarray) -> float:
    from scipy.stats import spearmanr

    if len(set(first.tolist())) < 2 or len(set(second.tolist())) < 2:
        return math.nan
    return float(spearmanr(first, second).statistic)


Level = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(matrix: np.ndarray, level: Level = "ordinal") -> float:
    """Krippendorff's alpha of a raters x cases matrix (NaN = not rated)."""
    return _alpha(
        level, reliability_data=matrix, value_domain=SCALE if level == "ordinal" else None
    )


def score_counts(matrix: np.ndarray) -> np.ndarray:
    """Per case (row), how many raters gave each score 0-4: the form the bootstrap resamples
    (rows drawn), so that the library does not recount the matrix a thousand times."""
    return np.stack([np.sum(matrix == score, axis=0) for score in SCALE], axis=1)


def _alpha(level: Level, **data: Any) -> float:
    import krippendorff

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(level_of_measurement=level, **data)
    except (ValueError, ZeroDivisionError):
        return math.nan  # a single value in the whole matrix: no disagreement to measure
    return float(value)


def icc_two_way(matrix: np.ndarray) -> Estimate:
    """ICC(2,1) (two-way random, absolute agreement, single rater) of a cases x raters
    matrix with no gaps, with its 95% interval from the F distribution (McGraw & Wong
    1996): pingouin's ``intraclass_corr`` ICC(A,1), formula for formula and with its
    interval rounded to two decimals as pingouin gives it (a test holds the two equal).
    Written out because pingouin's pandas ANOVA took 50 ms a call, once per pair of raters
    and component: 40 s of ``agreement`` on 30 raters."""
    from scipy.stats import f

    cases, raters = matrix.shape
    if cases < 2 or raters < 2 or np.all(matrix == matrix.flat[0]):
        return Estimate(math.nan, Interval(math.nan, math.nan))
    n, k = float(cases), float(raters)
    grand = matrix.mean()
    ss_cases = k * float(np.sum((matrix.mean(axis=1) - grand) ** 2))
    ss_raters = n * float(np.sum((matrix.mean(axis=0) - grand) ** 2))
    ss_error = float(np.sum((matrix - grand) ** 2)) - ss_cases - ss_raters
    df_error = (n - 1) * (k - 1)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msb = np.float64(ss_cases / (n - 1))
        msj = np.float64(ss_raters / (k - 1))
        mse = np.float64(ss_error / df_error)
        icc = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
        fj = msj / mse
        vn = df_error * (k * icc * fj + n * (1 + (k - 1) * icc) - k * icc) ** 2
        vd = (n - 1) * k**2 * icc**2 * fj**2 + (n * (1 + (k - 1) * icc) - k * icc) ** 2
        v = vn / vd
        f_upper = f.ppf(1 - (1 - LEVEL) / 2, n - 1, v)
        f_lower = f.ppf(1 - (1 - LEVEL) / 2, v, n - 1)
        low = n * (msb - f_upper * mse) / (f_upper * (k * msj + (k * n - k - n) * mse) + n * msb)
        high = n * (f_lower * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f_lower * msb)
    return Estimate(float(icc), Interval(float(np.round(low, 2)), float(np.round(high, 2))))


def judging_digest(samples: Sequence[LoggedSample | UnreadableSample], name: str) -> str:
    """What one judging (score ``name`` of a log) scored, as a digest of its cases' scores:
    each case's id, epoch, value, answer, explanation and judge records. A log's copy (an
    ``inspect score --action append`` copy keeps the first score, Inspect's "create new
    file" writes one beside the log) holds the same judging under the same digest, whatever
    its file or score name; a re-judging's judges wrote other records."""
    digest = hashlib.sha256()
    for sample in samples:
        if isinstance(sample, UnreadableSample) or name not in sample.scores:
            continue
        score = sample.scores[name]
        case = [sample.id, sample.epoch, score.value, score.answer, score.explanation]
        digest.update(json.dumps([*case, score.metadata], sort_keys=True, default=str).encode())
    return digest.hexdigest()


# (rater, case) -> the SHA-256 of the reply that rater judged in that case
Replies = dict[tuple[str, str], str]


def read_ratings(
    logs: list[Path],
    reference: Path | None = None,
    people: RatingRound | None = None,
    scorer: str | None = None,
    clusters: dict[str, str] | None = None,
) -> tuple[Ratings, list[str]]:
    """Every judge's own score per case and component, from judged logs and a reference;
    with ``people`` (a rating round), only the cases on that page, keyed by the page's case
    id (a case is a model's reply: two models' replies to one question are two cases), with
    the people's ratings beside the judges'. Each judging counts once, however many logs
    hold it (:func:`judging_digest`); with ``scorer``, only that score of each log is read
    (a log without it is left out and named). ``clusters``, when given, receives each
    logged case's image cluster (the intervals resample whole images)."""
    if scorer is not None and not is_score_of(scorer, OPEN_SCORER):
        raise AnalysisError(
            [
                f"--scorer {scorer!r}: agreement reads the judges' {OPEN_SCORER!r} scores "
                f"(and their re-judgings, {OPEN_SCORER}1, ...)"
            ]
        )
    ratings: Ratings = {component: {} for component in COMPONENTS}
    notes: list[str] = []
    on_page: dict[SampleRef, str] | None = None
    if people is not None:
        mapping, mapping_notes = map_round_to_logs(people, logs)
        on_page = {candidate.ref: case for case, candidate in mapping.items()}
        notes += mapping_notes
    used = _one_attempt_of_each_run(logs, notes)
    runs = Counter(header.eval.task_id for _, header in used)
    replies: Replies = {}
    image_of = clusters if clusters is not None else {}
    judgings_read: dict[str, str] = {}  # a judging's digest -> the log and score read for it
    for number, (path, header) in enumerate(used, 1):
        judgings = _new_judgings(path, header, scorer, judgings_read, notes)
        if judgings is None:
            continue
        samples, names, several_scores = judgings
        # A judge judged one log's cases; with a page, cases are keyed apart already, and
        # one judge model over several logs is one rater (but not over two judgings of one
        # run: the same cases, judged twice).
        separate = on_page is None or runs[header.eval.task_id] > 1
        suffix = f" [{path.name}]" if len(used) > 1 and separate else ""
        judged_log = _JudgedLog(path, header, names, several_scores, suffix, on_page)
        _add_judged_cases(judged_log, samples, ratings, replies, image_of, notes)
        # Refused as soon as the bound is passed: reading the other logs would be wasted.
        _check_rater_count(ratings, f"after {number} of {len(used)} log(s)")
    if on_page is None:  # a page's cases are replies already
        notes += _each_reply_its_own_case(
            ratings, replies, image_of, with_reference=reference is not None
        )
    if reference is not None:
        notes += _read_reference(reference, ratings)
    if people is not None:
        _add_people(people, ratings, notes)
    return ratings, notes


def _one_attempt_of_each_run(logs: list[Path], notes: list[str]) -> list[tuple[Path, EvalLog]]:
    """The logs' headers, each run once, as every command reads a folder: a resumed run's
    attempts are not two raters, nor a run copied twice a run agreeing with itself. Two
    judgings of one run's replies (a re-judged copy keeps the run's task_id) are each their
    own raters. A log that cannot be read is left out, noted (like the leaderboard)."""
    headers: list[tuple[Path, EvalLog]] = []
    for path in logs:
        try:
            headers.append((path, log_header(path)))
        except Exception as error:
            notes.append(f"skipped, {path}: not a readable eval log ({describe_error(error)})")
    attempts = one_attempt_per_run(headers, judgings="each")
    if attempts.conflicts:
        raise AnalysisError(attempts.conflicts)
    notes += attempts.notes
    return list(attempts.used)


def _new_judgings(
    path: Path,
    header: EvalLog,
    scorer: str | None,
    judgings_read: dict[str, str],
    notes: list[str],
) -> tuple[list[LoggedSample | UnreadableSample], list[str], bool] | None:
    """A log's judged samples, the scores to read from them (each judging not read from
    another log already) and whether the log holds several; None when it adds none."""
    names = score_names(header, OPEN_SCORER) or [OPEN_SCORER]
    if scorer is not None:
        if scorer not in names:
            notes.append(
                f"{path}: left out, no score {scorer!r}; its scores are "
                + ", ".join(repr(name) for name in names)
            )
            return None
        names = [scorer]
    try:
        samples = list(_judged_samples(path, header, names))
    except Exception as error:  # like the leaderboard: a corrupt log is left out, noted
        notes.append(f"skipped, {path}: not a readable eval log ({describe_error(error)})")
        return None
    # A judging held by two logs (a log and its copy) is one set of raters, not two
    # raters in perfect agreement: the first log read counts it, the copy is named.
    kept_names: list[str] = []
    for name in names:
        digest = judging_digest(samples, name)
        if digest in judgings_read:
            notes.append(
                f"{path}: score {name!r} left out, the same judging as "
                f"{judgings_read[digest]} (a copy of it), counted once"
            )
        else:
            judgings_read[digest] = f"{path} (score {name!r})"
            kept_names.append(name)
    # a judging is named by its score wherever its log holds several (a copy's own
    # judging keeps its name when the one it shares with its original is left out)
    return (samples, kept_names, len(names) > 1) if kept_names else None


@dataclass(frozen=True)
class _JudgedLog:
    """One log's judgings as they are read: the scores read (``names``), whether a rater's
    name says its score (the log holds several), the suffix naming the log among several,
    and the rating page's cases (None without a page)."""

    path: Path
    header: EvalLog
    names: list[str]
    several_scores: bool
    suffix: str
    on_page: dict[SampleRef, str] | None


def _add_judged_cases(
    log: _JudgedLog,
    samples: list[LoggedSample | UnreadableSample],
    ratings: Ratings,
    replies: Replies,
    clusters: dict[str, str],
    notes: list[str],
) -> None:
    """Adds each judge's scores of the log's judged cases to ``ratings`` and the digest of
    the reply each judged to ``replies``; notes the records it cannot read and a log with no
    judged case."""
    # the header's roles only for a log that records no judge models in its cases
    bound = bound_role_models(log.header.eval.model_roles or {})
    judged = 0
    unreadable: list[str] = []  # records an edited log holds that are not judges' records
    for sample, name in ((s, n) for s in samples for n in log.names):
        if isinstance(sample, UnreadableSample):
            if name == log.names[0]:
                notes.append(f"{log.path}: {sample.describe()}")
            continue
        score = sample.scores.get(name)
        metadata = (score.metadata or {}) if score is not None else {}
        judges = metadata.get("judges")
        if not judges:
            continue
        case = str(sample.id)
        if log.on_page is not None:
            ref = SampleRef(log.header.eval.eval_id, json.dumps(sample.id), sample.epoch)
            if ref not in log.on_page:
                continue  # not on the page: no person rated it
            case = log.on_page[ref]
        if not isinstance(judges, dict):
            unreadable.append(f"{case}: judges")
            continue
        judged += 1
        suffix = (f" [{name}]" if log.several_scores else "") + log.suffix
        clusters[case] = case_cluster(sample.metadata, sample.id)
        raters = _add_judges(case, judges, metadata, suffix, bound, ratings, unreadable)
        if log.on_page is None:  # a page's cases are replies already: nothing to split
            reply = hashlib.sha256(sample.completion.encode()).hexdigest()
            for rater in raters:
                replies[rater, case] = reply
    if unreadable:
        notes.append(
            f"{log.path}: {len(unreadable)} judge record(s) left out, not a judge's 0-4 score "
            f"with its role (an edited log?): {', '.join(unreadable[:5])}"
            + (" ..." if len(unreadable) > 5 else "")
        )
    if not judged:
        where = " on the rating page" if log.on_page is not None else ""
        notes.append(f"{log.path}: no judged open-ended case{where}")


def _add_judges(
    case: str,
    judges: dict[str, Any],
    metadata: dict[str, Any],
    suffix: str,
    bound: dict[str, str],
    ratings: Ratings,
    unreadable: list[str],
) -> list[str]:
    """One case's judges' scores (each panel member a rater, ``role=model`` and the
    ``suffix``), with each rater's VA_final gated by its own RVF; what cannot be read is
    added to ``unreadable``. Returns the raters read."""
    per_rater: dict[str, dict[str, int]] = {}
    for component in COMPONENTS[:3]:
        record = judges.get(component) or {}
        if not isinstance(record, dict):
            unreadable.append(f"{case}: {component}")
            continue
        if record.get("by_rule"):
            continue  # a zero by rule, not a judge's opinion
        models = member_models(record, metadata.get("judge_models"), component)
        for member, model in zip(panel_members(record), models, strict=True):
            role, rating = member.get("role"), member.get("score")
            if rating is None:
                continue  # this judge failed: no opinion to compare
            read = read_score(component, rating, whole=True)
            if not isinstance(role, str) or read.number is None:
                unreadable.append(f"{case}: {component} ({role!r}={rating!r})")
                continue
            rater = f"{role}={model or bound.get(role, '?')}{suffix}"
            ratings[component].setdefault(rater, {})[case] = int(read.number)
            per_rater.setdefault(rater, {})[component] = int(read.number)
    for rater, scores in per_rater.items():
        if "va_answer" in scores and "rvf_trace" in scores:
            final = gate_visual_accuracy(scores["va_answer"], scores["rvf_trace"])
            ratings["va_final"].setdefault(rater, {})[case] = int(final)
    return list(per_rater)


def _each_reply_its_own_case(
    ratings: Ratings, replies: Replies, clusters: dict[str, str], *, with_reference: bool
) -> list[str]:
    """Judges agree or not about one reply: where logs hold different replies to a case
    (two models, or two runs of one), each reply becomes its own case (``id (reply n)``),
    so a judge is compared with another only on the reply both judged. Re-judgings of one
    run share its replies and are untouched. Returns the note saying what was split."""
    seen: dict[str, list[str]] = {}  # case -> its distinct replies, in the order read
    for (_, case), reply in replies.items():
        if reply not in seen.setdefault(case, []):
            seen[case].append(reply)
    split = {case: found for case, found in seen.items() if len(found) > 1}
    if not split:
        return []
    for by_rater in ratings.values():
        for rater, by_case in by_rater.items():
            for case in [c for c in by_case if c in split and (rater, c) in replies]:
                number = split[case].index(replies[rater, case]) + 1
                by_case[f"{case} (reply {number})"] = by_case.pop(case)
                clusters[f"{case} (reply {number})"] = clusters.get(case, case)
    examples = ", ".join(sorted(split)[:5]) + (" ..." if len(split) > 5 else "")
    note = (
        f"{len(split)} case(s) hold different replies in different logs (other models or "
        f"runs): each reply is its own case, and judges are compared only on a reply both "
        f"judged ({examples})"
    )
    if with_reference:
        note += "; the reference's scores of them are compared with none (it names no reply)"
    return [note]


def _add_people(people: RatingRound, ratings: Ratings, notes: list[str]) -> None:
    for person, by_case in sorted(people.scores.items()):
        name = f"{PERSON}{person}"
        # a partly rated case counts in the components it has; VA_final needs VA and RVF
        for case, scores in by_case.items():
            for key, component in RATED_COMPONENTS.items():
                if key in scores:
                    ratings[component].setdefault(name, {})[case] = scores[key]
            if "va" in scores and "rvf" in scores:
                final = gate_visual_accuracy(scores["va"], scores["rvf"])
                ratings["va_final"].setdefault(name, {})[case] = int(final)
        skipped = people.skipped.get(person) or {}
        partial = people.partial(person)
        blocked = sum(len(c) for c in (people.cannot_assess.get(person) or {}).values())
        notes.append(
            f"{name}: {len(by_case)} case(s) rated"
            + (f", {len(partial)} of them partly (not every component)" if partial else "")
            + (f", {blocked} component(s) marked cannot assess" if blocked else "")
            + (f", {len(skipped)} skipped" if skipped else "")
            + f" ({people.files[person]})"
        )


def _judged_samples(
    path: Path, header: EvalLog, names: list[str]
) -> Iterator[LoggedSample | UnreadableSample]:
    """A log's samples that hold judge records under one of the scores ``names`` (or cannot
    be read), one at a time: the others (MCQ cases) are not kept."""
    for sample in logged_samples(path, header):
        if isinstance(sample, UnreadableSample) or any(name in sample.scores for name in names):
            yield sample


def _read_reference(path: Path, ratings: Ratings) -> list[str]:
    """Adds the reference's scores to ``ratings``; returns what it left out, named by the
    one rule for score values (``score_values``): an impossible value, a case given twice."""
    try:
        # a regular file within the limit, never a FIFO or a link to a device
        data = read_user_bytes(path, MAX_DATA_BYTES, "reference scores")
        document = json.loads(data.decode("utf-8"))
    except UserFileError as error:
        raise AnalysisError([str(error)]) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise AnalysisError([f"{path}: not a readable JSON file ({error})"]) from error
    except RecursionError as error:
        raise AnalysisError([f"{path}: JSON nested too deeply to read"]) from error
    rows = document.get("scores") if isinstance(document, dict) else document
    if not isinstance(rows, list):
        raise AnalysisError(
            [
                f'{path}: expected {{"scores": [{{"case_id", "gt_final", '
                '"va_answer", "rvf_trace"}, ...]} (judge_scores.json)'
            ]
        )
    problems: list[str] = []
    left: list[str] = []
    cases = [str(row.get("case_id", "")).strip() if isinstance(row, dict) else "" for row in rows]
    copies = Counter(cases)
    left += [duplicated(str(path), case, n) for case, n in copies.items() if case and n > 1]
    for number, (row, case) in enumerate(zip(rows, cases, strict=True), 1):
        if not case:
            problems.append(f"{path}: row {number}: no case_id")
            continue
        if copies[case] > 1:
            continue
        scores: dict[str, int] = {}
        for component in COMPONENTS[:3]:
            read = read_score(component, row.get(component), whole=True)
            if read.problem is not None:
                left.append(left_out(f"{path}: case {case!r}", read.problem))
            if read.number is None:
                continue
            scores[component] = int(read.number)
            ratings[component].setdefault(REFERENCE, {})[case] = int(read.number)
        if "va_answer" in scores and "rvf_trace" in scores:
            final = gate_visual_accuracy(scores["va_answer"], scores["rvf_trace"])
            ratings["va_final"].setdefault(REFERENCE, {})[case] = int(final)
    if problems:
        raise AnalysisError([*problems, "every row of a reference names its case_id"])
    return left


def _check_rater_count(ratings: Ratings, where: str) -> None:
    """Refuse more than ``MAX_RATERS`` raters of a component, saying how to narrow the
    input."""
    count = max(len(by_rater) for by_rater in ratings.values())
    if count > MAX_RATERS:
        raise AnalysisError(
            [
                f"{count} raters {where}, and agreement compares at most {MAX_RATERS} (every "
                "pair of raters is bootstrapped: the work grows with the square of their "
                "number); each log's judges are raters of their own. Name fewer logs, or a "
                "folder holding only the runs whose judges to compare (a panel in one log, or "
                "a few logs judging the same cases)"
            ]
        )


def component_agreements(
    ratings: Ratings, clusters: Mapping[str, str] | None = None
) -> list[ComponentAgreement]:
    """The statistics of ``METHOD`` for each component (one with fewer than two raters
    says so in its notes), resampling whole images (``clusters``: each case's image; a case
    not in it is its own). Raises AnalysisError for more than ``MAX_RATERS`` raters."""
    _check_rater_count(ratings, "(judges, reference and people)")
    return [
        _component_agreement(component, ratings[component], clusters or {})
        for component in COMPONENTS
    ]


def _images(cases: Sequence[str], clusters: Mapping[str, str]) -> list[str]:
    """Each case's image (a case no log holds, a reference's, its own)."""
    return [clusters.get(case, f"case:{case}") for case in cases]


def _component_agreement(
    component: str, by_rater: dict[str, dict[str, int]], clusters: Mapping[str, str]
) -> ComponentAgreement:
    # people first, then the reference, so that a pair's bias is always the judge's over
    # the person's or the reference's, whatever the judge's role is called
    raters = sorted(
        (r for r, cases in by_rater.items() if cases),
        key=lambda r: (not r.startswith(PERSON), r != REFERENCE, r),
    )
    distributions = {
        rater: [sum(1 for v in by_rater[rater].values() if v == s) for s in SCALE]
        for rater in raters
    }
    if len(raters) < 2:
        notes = ["fewer than two raters scored this component"]
        return ComponentAgreement(component, raters, [], None, None, 0, distributions, notes)
    notes, pairs = [], []
    for first, second in itertools.combinations(raters, 2):
        shared = sorted(set(by_rater[first]) & set(by_rater[second]))
        if len(shared) < 2:
            notes.append(f"{first} and {second} share {len(shared)} case(s): no pair statistics")
            continue
        pairs.append(_pair(first, second, shared, by_rater, clusters))
    # Only the cases two raters or more scored: alpha pairs values within a case, so a
    # case one rater scored adds nothing but rows to resample (a reference's 100,000 rows
    # for cases no log holds made a bootstrap over 100,000 cases for the 12 that count).
    rated = Counter(case for rater in raters for case in by_rater[rater])
    cases = sorted(case for case, count in rated.items() if count >= 2)
    if len(cases) < len(rated):
        notes.append(
            f"{len(rated) - len(cases)} case(s) scored by one rater only: in the "
            "distributions, not in α or the ICC"
        )
    matrix = np.array(
        [[by_rater[r].get(c, np.nan) for c in cases] for r in raters], dtype=float
    ).reshape(len(raters), len(cases))
    alpha = (
        image_bootstrap_estimate(
            functools.partial(_ordinal_alpha_of_rows, score_counts(matrix)),
            cluster_codes(_images(cases, clusters), len(cases))[0].tolist(),
        )
        if cases
        else None
    )
    complete = [i for i, c in enumerate(cases) if all(c in by_rater[r] for r in raters)]
    icc = icc_two_way(matrix[:, complete].T) if len(complete) >= 2 else None
    people = [i for i, r in enumerate(raters) if r.startswith(PERSON)]
    people_icc, people_icc_cases = None, 0
    if len(people) >= 2:
        by_all = [i for i, c in enumerate(cases) if all(c in by_rater[raters[p]] for p in people)]
        people_icc_cases = len(by_all)
        if len(by_all) >= 2:
            people_icc = icc_two_way(matrix[np.ix_(people, by_all)].T)
    return ComponentAgreement(
        component,
        raters,
        pairs,
        alpha,
        icc,
        len(complete),
        distributions,
        notes,
        people_icc,
        people_icc_cases,
    )


# a few sizes kept: 1,000 x 20,000 draws are 80 MB
@functools.lru_cache(maxsize=4)
def image_draws(images: int) -> np.ndarray:
    """The ``RESAMPLES`` x ``images`` bootstrap draws when cases share images: how often
    each image is drawn when each resample draws as many images as there are, with
    replacement (seeded: the same number of images gives the same draws). Each case on its
    own image is the case bootstrap."""
    picks = np.random.default_rng(SEED).integers(0, max(images, 1), (RESAMPLES, images))
    offsets = (np.arange(RESAMPLES) * images)[:, None]
    counts = np.bincount((picks + offsets).ravel(), minlength=RESAMPLES * images)
    return counts.reshape(RESAMPLES, images).astype(np.int32)


def image_bootstrap_estimate(
    statistic: Callable[[np.ndarray], float], codes: Sequence[int]
) -> Estimate:
    """``statistic`` of the index array 0..n-1, with a BCa interval (:func:`bca_estimate`)
    from resampling whole images (:func:`image_draws`: each resample repeats a case as
    often as its image was drawn) and leaving one image out at a time; resamples where
    the statistic is undefined are left out. ``codes``: each case's image, 0, 1, ..."""
    cases = np.arange(len(codes))
    image = np.asarray(codes, dtype=np.intp)
    images = int(image.max()) + 1 if len(image) else 0
    draws = np.array(
        [statistic(np.repeat(cases, row[image])) for row in image_draws(images)], dtype=float
    )
    with np.errstate(divide="ignore", invalid="ignore"):  # one image: nothing left
        left_out = np.array(
            [statistic(cases[image != number]) for number in range(images)], dtype=float
        )
    return bca_estimate(statistic(cases), draws, left_out)


def _ordinal_alpha_of_rows(counts: np.ndarray, rows: np.ndarray) -> float:
    return _alpha("ordinal", value_counts=counts[rows], value_domain=SCALE)


def _pair(
    first: str,
    second: str,
    shared: list[str],
    by_rater: dict[str, dict[str, int]],
    clusters: Mapping[str, str] | None = None,
) -> PairAgreement:
    a = np.array([by_rater[first][c] for c in shared])
    b = np.array([by_rater[second][c] for c in shared])
    images = _images(shared, clusters or {})
    tables = image_tables(a, b, images)
    return PairAgreement(
        first,
        second,
        len(shared),
        kappa=table_estimate(quadratic_kappa(a, b), kappas_of_tables, tables),
        exact=clustered_mean_estimate(a == b, images, 0.0, 1.0),
        within_one=clustered_mean_estimate(np.abs(a - b) <= 1, images, 0.0, 1.0),
        spearman=table_estimate(spearman(a, b), spearmans_of_tables, tables),
        bias=clustered_mean_estimate(b - a, images, -4.0, 4.0),
        confusion=score_confusion(a, b).tolist(),
        mae=clustered_mean_estimate(np.abs(b - a), images, 0.0, 4.0),
        icc=icc_two_way(np.stack([a, b], axis=1).astype(float)),
    )


def clustered_mean_estimate(
    values: np.ndarray, images: Sequence[str], bottom: float, top: float
) -> Estimate:
    """A mean of per-case values on ``[bottom, top]`` (exact agreement, MAE, bias) with the
    interval every mean in this product has (``clustered_mean_interval``: the delete-one-image
    jackknife, Student's t on Bell and McCaffrey's degrees of freedom, on the log-odds of the
    scale). The BCa bootstrap over images covered a mean difference 0.91 on 25 images of 1-8
    cases; this interval 0.93 (0.94 at 60 images; docs/intervals.md)."""
    data = np.asarray(values, dtype=float)
    if not len(data):
        return Estimate(math.nan, Interval(math.nan, math.nan))
    return Estimate(float(data.mean()), clustered_mean_interval(data, images, top, bottom=bottom))


@dataclass(frozen=True)
class ImageTables:
    """Paired values on cases that share images, as tables of counts: each distinct pair
    (first value, second value) is a cell; ``per_image`` counts each image's cases in each
    cell (images x cells). A statistic of the pairs that depends only on their counts
    (weighted kappa, Spearman's rho) is then a function of one row of counts, and a bootstrap
    resample of images is one such row: the images drawn times ``per_image`` (no resample x
    case matrix, whatever the cases)."""

    per_image: np.ndarray
    first: np.ndarray  # each cell's first value
    second: np.ndarray  # each cell's second value


def image_tables(first: np.ndarray, second: np.ndarray, images: Sequence[str]) -> ImageTables:
    """``first`` and ``second`` paired case by case, ``images`` each case's image (numbered
    in order of first appearance, as ``image_bootstrap_estimate``'s codes are)."""
    pairs = np.stack([np.asarray(first, dtype=float), np.asarray(second, dtype=float)], axis=1)
    cells, cell = np.unique(pairs, axis=0, return_inverse=True)
    image, count = cluster_codes(images, len(images))
    per_image = np.bincount(
        image * len(cells) + cell.reshape(-1), minlength=count * len(cells)
    ).reshape(count, len(cells))
    return ImageTables(per_image, cells[:, 0], cells[:, 1])


def table_estimate(
    value: float,
    statistic_of_tables: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    tables: ImageTables,
) -> Estimate:
    """``value`` with its BCa interval (:func:`bca_estimate`) over images: the statistic of
    each resample's table (:func:`image_draws` times the images' tables) and, for the
    jackknife, of the whole table less one image's. ``statistic_of_tables(rows, first,
    second)`` gives one value per row of counts."""
    per_image = tables.per_image
    resampled = (image_draws(len(per_image)) @ per_image).astype(float)
    left_out = (per_image.sum(axis=0) - per_image).astype(float)
    # an image left out may be all the cases: its jackknife value is undefined
    with np.errstate(divide="ignore", invalid="ignore"):
        return bca_estimate(
            value,
            statistic_of_tables(resampled, tables.first, tables.second),
            statistic_of_tables(left_out, tables.first, tables.second),
        )


def kappas_of_tables(tables: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """:func:`quadratic_kappa` of each row of counts of cells whose values are 0-4 scores."""
    to_scores = np.zeros((len(first), len(SCALE) ** 2))
    to_scores[np.arange(len(first)), (first * len(SCALE) + second).astype(np.intp)] = 1.0
    observed = (tables @ to_scores).reshape(-1, len(SCALE), len(SCALE))
    size = np.maximum(tables.sum(axis=1), 1.0)[:, None, None]
    expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :] / size
    disagreement = np.sum(_QUADRATIC_WEIGHTS * expected, axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - np.sum(_QUADRATIC_WEIGHTS * observed, axis=(1, 2)) / disagreement
    return np.where(disagreement == 0.0, math.nan, kappa)


def spearmans_of_tables(tables: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """:func:`spearman` of each row of counts of cells: each value's average rank (ties
    averaged) from the row's counts of each distinct value, and Pearson's r of the ranks
    over the cells, weighted by the counts. Values need not be whole scores (a calibrated
    score, a mean rating)."""

    def centred_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        levels, level = np.unique(values, return_inverse=True)
        level = level.reshape(-1)
        of_level = np.zeros((len(values), len(levels)))
        of_level[np.arange(len(values)), level] = 1.0
        counts = tables @ of_level
        ranks = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            ranks -= (np.sum(counts * ranks, axis=1) / counts.sum(axis=1))[:, None]
        variance = np.sum(counts * ranks * ranks, axis=1)
        return ranks[:, level], variance, np.sum(counts > 0, axis=1) <= 1

    rx, x_variance, x_constant = centred_ranks(first)
    ry, y_variance, y_constant = centred_ranks(second)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sum(tables * rx * ry, axis=1) / np.sqrt(x_variance * y_variance)
    return np.where(x_constant | y_constant, math.nan, np.clip(r, -1.0, 1.0))


def bca_estimate(value: float, draws: np.ndarray, jackknife: np.ndarray) -> Estimate:
    """The bias-corrected and accelerated (BCa) percentile interval of ``value`` from its
    bootstrap ``draws`` and its ``jackknife`` values (one image left out at a time): the
    plain percentile interval covered 0.90-0.92 for a skewed statistic on 25 images of
    1-8 cases. Resamples where the statistic is undefined are left out; with fewer than
    half defined, an undefined value or a single image, no interval."""
    from scipy.stats import norm

    kept = draws[~np.isnan(draws)]
    if math.isnan(value) or len(kept) < RESAMPLES / 2 or len(jackknife) < 2:
        return Estimate(value, Interval(math.nan, math.nan))  # (one image: no spread to see)
    below = (np.sum(kept < value) + 0.5 * np.sum(kept == value)) / len(kept)
    bias = float(norm.ppf(np.clip(below, 1.0 / len(kept), 1.0 - 1.0 / len(kept))))
    left_out = jackknife[~np.isnan(jackknife)]
    spread = left_out.mean() - left_out if len(left_out) else np.zeros(1)
    squares = float(np.sum(spread**2))
    acceleration = float(np.sum(spread**3)) / (6.0 * squares**1.5) if squares > 0 else 0.0
    tail = (1.0 - LEVEL) / 2.0
    z = norm.ppf(np.array([tail, 1.0 - tail]))
    levels = norm.cdf(bias + (bias + z) / (1.0 - acceleration * (bias + z)))
    lower, upper = np.quantile(kept, levels)
    return Estimate(value, Interval(float(lower), float(upper)))


def plot_png(results: Sequence[ComponentAgreement]) -> bytes:
    """Per component: the first pair's confusion heat map and every rater's distribution."""
    plt = pyplot()

    figure, axes = plt.subplots(len(results), 2, figsize=(10, 3.2 * len(results)), squeeze=False)
    for row, result in enumerate(results):
        heat, bars = axes[row]
        if result.pairs:
            pair = result.pairs[0]
            heat.imshow(np.array(pair.confusion), cmap="Blues")
            for (i, j), n in np.ndenumerate(np.array(pair.confusion)):
                heat.text(j, i, str(n), ha="center", va="center", fontsize=8)
            heat.set_xlabel(pair.second[:40], fontsize=8)
            heat.set_ylabel(pair.first[:40], fontsize=8)
            heat.set_xticks(SCALE)
            heat.set_yticks(SCALE)
        else:
            heat.axis("off")
        heat.set_title(f"{result.component}: confusion", fontsize=10)
        width = 0.8 / max(len(result.distributions), 1)
        for k, (rater, counts) in enumerate(result.distributions.items()):
            bars.bar(np.array(SCALE) + k * width, counts, width=width, label=rater[:40])
        bars.set_title(f"{result.component}: score distribution", fontsize=10)
        bars.set_xticks(np.array(SCALE) + 0.4 - width / 2, [str(s) for s in SCALE])
        if result.distributions:
            bars.legend(fontsize=7)
    figure.tight_layout()
    return png_bytes(figure, dpi=100)


# --- the public face: from logs (and a reference or a rating round) to an Agreement ------


@dataclass(frozen=True)
class RaterScores:
    """Every rater's whole 0-4 score per component and case (``scores[component][rater]
    [case]``), as read from the logs, a reference and people's ratings, and what was left
    out while reading (``notes``: a log skipped, a judging counted once, a person's counts)."""

    scores: Ratings
    notes: tuple[str, ...]
    clusters: Mapping[str, str] = field(default_factory=dict)  # case -> its image


@dataclass(frozen=True, repr=False)
class Agreement(NotebookDisplay):
    """What ``medreason agreement`` reports: per component (GT_final, VA_answer, RVF_trace,
    VA_final) a :class:`ComponentAgreement`, and the notes on what was read (``METHOD``
    says how each figure is computed)."""

    components: tuple[ComponentAgreement, ...]
    notes: tuple[str, ...]

    def display_summary(self) -> str:
        names = ", ".join(c.component for c in self.components) or "no component"
        return f"judge agreement on {names}; {len(self.notes)} note(s)"

    def display_notes(self) -> list[str]:
        return list(self.notes)

    def to_pandas(self) -> pd.DataFrame:
        """One row per component and pair of raters: each statistic with its interval's
        bounds (``kappa``, ``kappa_lower``, ``kappa_upper``, ...), NaN where undefined."""
        import pandas as pd

        rows = []
        for component in self.components:
            for pair in component.pairs:
                row: dict[str, Any] = {
                    "component": component.component,
                    "first": pair.first,
                    "second": pair.second,
                    "kind": pair.kind,
                    "cases": pair.cases,
                }
                for name in PAIR_STATISTICS:
                    estimate: Estimate = getattr(pair, name)
                    row[name] = estimate.value
                    row[f"{name}_lower"] = estimate.interval.lower
                    row[f"{name}_upper"] = estimate.interval.upper
                rows.append(row)
        columns = ["component", "first", "second", "kind", "cases"] + [
            f"{name}{end}" for name in PAIR_STATISTICS for end in ("", "_lower", "_upper")
        ]
        return pd.DataFrame(rows, columns=columns)

    def components_to_pandas(self) -> pd.DataFrame:
        """One row per component: its raters, Krippendorff's alpha (ordinal) and the
        ICC(2,1) of all raters (on ``icc_cases`` cases every rater scored) and of the
        people alone, each with its interval's bounds; NaN where not computed."""
        import pandas as pd

        rows = []
        for component in self.components:
            row: dict[str, Any] = {
                "component": component.component,
                "raters": len(component.raters),
                "icc_cases": component.icc_cases,
                "people_icc_cases": component.people_icc_cases,
            }
            for name in ("alpha", "icc", "people_icc"):
                estimate: Estimate | None = getattr(component, name)
                row[name] = math.nan if estimate is None else estimate.value
                row[f"{name}_lower"] = math.nan if estimate is None else estimate.interval.lower
                row[f"{name}_upper"] = math.nan if estimate is None else estimate.interval.upper
            rows.append(row)
        return pd.DataFrame(rows)

    def plot_png(self) -> bytes:
        """Per component, the first pair's confusion heat map and every rater's score
        distribution, as PNG bytes."""
        return plot_png(self.components)


# A pair's statistics, in the order the report's columns give them.
PAIR_STATISTICS = ("kappa", "exact", "within_one", "spearman", "mae", "icc", "bias")


def read_rater_scores(
    logs: Sequence[str | os.PathLike[str]],
    *,
    reference: str | os.PathLike[str] | None = None,
    ratings: Sequence[str | os.PathLike[str]] = (),
    scorer: str | None = None,
) -> RaterScores:
    """Every rater's scores from judged logs (files or folders of them): each judge of each
    judging is a rater; with ``reference`` (a ``judge_scores.json`` file) the reference is
    one; with ``ratings`` (a rating round's files, one per person, or a served round's
    store) each person is ``rater:<name>``, on the page's cases only. ``scorer`` keeps one
    score of a log judged several times. Raises AnalysisError naming every problem."""
    if reference is not None and ratings:
        raise AnalysisError(
            [
                "--reference and --ratings key cases differently (case ids, a page's blinded "
                "ids): give one of them"
            ]
        )
    skipped: list[str] = []
    files = log_files([os.fspath(path) for path in logs], skipped)
    # with the logs: a rated case that is not on the page is named with its file's problems
    people = read_rating_round([Path(p) for p in ratings], files) if ratings else None
    clusters: dict[str, str] = {}
    scores, notes = read_ratings(
        files, Path(reference) if reference is not None else None, people, scorer, clusters
    )
    return RaterScores(scores, (*skipped, *notes), clusters)


def agreement_of(scores: RaterScores) -> Agreement:
    """The agreement of the raters read (:func:`read_rater_scores`). Raises AnalysisError
    when no component has two raters, or when there are more than ``MAX_RATERS``."""
    if not any(len(raters) >= 2 for raters in scores.scores.values()):
        raise AnalysisError(
            [
                "fewer than two raters: give a log judged by a panel (--model-role grader_2=...), "
                "several logs judging the same cases, or --reference scores"
            ]
        )
    return Agreement(tuple(component_agreements(scores.scores, scores.clusters)), scores.notes)


def judge_agreement(
    logs: Sequence[str | os.PathLike[str]],
    *,
    reference: str | os.PathLike[str] | None = None,
    ratings: Sequence[str | os.PathLike[str]] = (),
    scorer: str | None = None,
) -> Agreement:
    """How far the judges of judged open-ended logs agree with each other, with
    ``reference`` scores or with people's ``ratings`` (:func:`read_rater_scores` then
    :func:`agreement_of`): per component and pair of raters, weighted kappa, exact and
    within-one agreement, Spearman, MAE, ICC(2,1) and bias with 95% bootstrap intervals;
    alpha and ICC of all raters. Raises AnalysisError naming every problem."""
    return agreement_of(
        read_rater_scores(logs, reference=reference, ratings=ratings, scorer=scorer)
    )
