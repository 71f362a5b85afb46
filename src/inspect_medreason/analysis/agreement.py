"""How far do the judges agree: with each other, and with reference scores?

Reads judged open-ended logs (a panel in one log, or the same cases judged in several logs)
and, optionally, reference scores in the official ``judge_scores.json`` format (a human's
or the organizers' scores). Every judge (a role in a log) and the reference is a *rater*.
Per component (GT_final, VA_answer, RVF_trace, VA_final) it reports, for each pair of
raters on the cases both scored: quadratic-weighted Cohen's kappa (as scikit-learn computes it), exact and
within-one agreement, Spearman's rho (scipy), the mean bias (second minus first) and the
confusion matrix; for all raters together: Krippendorff's alpha, ordinal (the
``krippendorff`` package), and the ICC(2,1) (two-way random, absolute agreement, single
rater; as pingouin computes it, with its F-based 95% interval) on the cases every rater scored; and
each rater's score distribution. Every other statistic has a 95% percentile bootstrap
interval over cases (seeded).

People's ratings from a rating round (``medreason rate``; ``--ratings``, one file per rater)
make each person a rater named ``rater:<name>``. Every judge is then compared with each
rater on the cases both scored (never with the raters' mean: kappa needs whole scores, and
the raters' spread is itself reported), the raters with each other, and per pair the mean
absolute error and the ICC(2,1) of the two are added; the ICC of the people alone is
reported beside the ICC of all. A pair's bias is second minus first, and a person comes
first: a positive bias is a judge scoring higher than the person. A person's VA_final is
their own VA gated by their own RVF, as a judge's.

``medreason agreement``, its arguments and what it prints, is at the end of the module.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import html
import itertools
import json
import math
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from inspect_ai.log import EvalLog

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
from inspect_medreason.cli.command_line import (
    DATA_FILE,
    EXIT_OK,
    RATINGS_FILE,
    Subcommands,
    add_report_arguments,
    check_outputs,
    emit,
)
from inspect_medreason.cli.markdown import markdown_row, markdown_text
from inspect_medreason.core import strict_json
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.gate import gate_visual_accuracy
from inspect_medreason.core.intervals import LEVEL, SEED, Interval
from inspect_medreason.core.judges import bound_role_models, panel_members
from inspect_medreason.core.user_files import MAX_DATA_BYTES, UserFileError, read_user_bytes
from inspect_medreason.rating.cases import RATED_COMPONENTS, SampleRef
from inspect_medreason.rating.ratings_file import RatingRound, map_round_to_logs, read_rating_round

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


@dataclass
class Estimate:
    value: float
    interval: Interval

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "lower": self.interval.lower, "upper": self.interval.upper}


@dataclass
class PairAgreement:
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


@dataclass
class ComponentAgreement:
    component: str
    raters: list[str]
    pairs: list[PairAgreement]
    alpha: Estimate | None
    icc: Estimate | None
    icc_cases: int
    distributions: dict[str, list[int]]
    notes: list[str] = field(default_factory=list)
    people_icc: Estimate | None = None  # the ICC(2,1) of the people alone
    people_icc_cases: int = 0


def bootstrap_estimate(
    statistic: Callable[[np.ndarray], float],
    count: int,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """``statistic`` of the index array 0..count-1, with a percentile interval from
    resampling those indices; resamples where the statistic is undefined are left out."""
    value = statistic(np.arange(count))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        result = statistic(rng.integers(0, count, count))
        if not math.isnan(result):
            draws.append(result)
    if len(draws) < resamples / 2:
        return Estimate(value, Interval(math.nan, math.nan))
    tail = (1.0 - LEVEL) / 2.0
    return Estimate(
        value, Interval(float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail)))
    )


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


def read_ratings(
    logs: list[Path],
    reference: Path | None = None,
    people: RatingRound | None = None,
    scorer: str | None = None,
) -> tuple[Ratings, list[str]]:
    """Every judge's own score per case and component, from judged logs and a reference;
    with ``people`` (a rating round), only the cases on that page, keyed by the page's case
    id (a case is a model's reply: two models' replies to one question are two cases), with
    the people's ratings beside the judges'. Each judging counts once, however many logs
    hold it (:func:`judging_digest`); with ``scorer``, only that score of each log is read
    (a log without it is left out and named)."""
    if scorer is not None and not is_score_of(scorer, OPEN_SCORER):
        raise AnalysisError(
            [
                f"--scorer {scorer!r}: agreement reads the judges' {OPEN_SCORER!r} scores "
                f"(and their re-judgings, {OPEN_SCORER}1, ...)"
            ]
        )
    ratings: Ratings = {component: {} for component in COMPONENTS}
    notes: list[str] = []
    judgings_read: dict[str, str] = {}  # a judging's digest -> the log and score read for it
    on_page: dict[SampleRef, str] | None = None
    if people is not None:
        mapping, mapping_notes = map_round_to_logs(people, logs)
        on_page = {candidate.ref: case for case, candidate in mapping.items()}
        notes += mapping_notes
    headers: list[tuple[Path, EvalLog]] = []
    for path in logs:
        try:
            headers.append((path, log_header(path)))
        except Exception as error:  # like the leaderboard: a corrupt log is left out, noted
            notes.append(f"skipped, {path}: not a readable eval log ({describe_error(error)})")
    # Each run once, as every command reads a folder: a resumed run's attempts are not two
    # raters, nor a run copied twice a run agreeing with itself. Two judgings of one run's
    # replies (a re-judged copy keeps the run's task_id) are each their own raters.
    attempts = one_attempt_per_run(headers, judgings="each")
    if attempts.conflicts:
        raise AnalysisError(attempts.conflicts)
    notes += attempts.notes
    logs = [path for path, _ in attempts.used]
    runs = Counter(header.eval.task_id for _, header in attempts.used)
    for number, (path, header) in enumerate(attempts.used, 1):
        names = score_names(header, OPEN_SCORER) or [OPEN_SCORER]
        if scorer is not None:
            if scorer not in names:
                notes.append(
                    f"{path}: left out, no score {scorer!r}; its scores are "
                    + ", ".join(repr(name) for name in names)
                )
                continue
            names = [scorer]
        try:
            samples = list(_judged_samples(path, header, names))
        except Exception as error:  # like the leaderboard: a corrupt log is left out, noted
            notes.append(f"skipped, {path}: not a readable eval log ({describe_error(error)})")
            continue
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
        if not kept_names:
            continue
        # a judging is named by its score wherever its log holds several (a copy's own
        # judging keeps its name when the one it shares with its original is left out)
        several_scores = len(names) > 1
        names = kept_names
        # A judge judged one log's cases; with a page, cases are keyed apart already, and
        # one judge model over several logs is one rater (but not over two judgings of one
        # run: the same cases, judged twice).
        separate = on_page is None or runs[header.eval.task_id] > 1
        suffix = f" [{path.name}]" if len(logs) > 1 and separate else ""
        # the header's roles only for a log that records no judge models in its cases
        bound = bound_role_models(header.eval.model_roles or {})
        judged = 0
        unreadable: list[str] = []  # records an edited log holds that are not judges' records
        for sample, name in ((s, n) for s in samples for n in names):
            if isinstance(sample, UnreadableSample):
                if name == names[0]:
                    notes.append(f"{path}: {sample.describe()}")
                continue
            score = sample.scores.get(name)
            metadata = (score.metadata or {}) if score is not None else {}
            judges = metadata.get("judges")
            if not judges:
                continue
            case = str(sample.id)
            if on_page is not None:
                ref = SampleRef(header.eval.eval_id, json.dumps(sample.id), sample.epoch)
                if ref not in on_page:
                    continue  # not on the page: no person rated it
                case = on_page[ref]
            if not isinstance(judges, dict):
                unreadable.append(f"{case}: judges")
                continue
            judged += 1
            scorer_suffix = f" [{name}]" if several_scores else ""
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
                    rating = int(read.number)
                    judge = model or bound.get(role, "?")
                    rater = f"{role}={judge}{scorer_suffix}{suffix}"
                    ratings[component].setdefault(rater, {})[case] = rating
                    per_rater.setdefault(rater, {})[component] = rating
            for rater, scores in per_rater.items():
                if "va_answer" in scores and "rvf_trace" in scores:
                    final = gate_visual_accuracy(scores["va_answer"], scores["rvf_trace"])
                    ratings["va_final"].setdefault(rater, {})[case] = int(final)
        if unreadable:
            notes.append(
                f"{path}: {len(unreadable)} judge record(s) left out, not a judge's 0-4 score "
                f"with its role (an edited log?): {', '.join(unreadable[:5])}"
                + (" ..." if len(unreadable) > 5 else "")
            )
        if not judged:
            where = " on the rating page" if on_page is not None else ""
            notes.append(f"{path}: no judged open-ended case{where}")
        # Refused as soon as the bound is passed: reading the other logs would be wasted.
        _check_rater_count(ratings, f"after {number} of {len(logs)} log(s)")
    if reference is not None:
        notes += _read_reference(reference, ratings)
    if people is not None:
        _add_people(people, ratings, notes)
    return ratings, notes


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


def agreement(ratings: Ratings) -> list[ComponentAgreement]:
    """The statistics of the module docstring, per component with at least two raters."""
    _check_rater_count(ratings, "(judges, reference and people)")
    results: list[ComponentAgreement] = []
    for component in COMPONENTS:
        # people first, so that a pair's bias is the judge's over the person's
        raters = sorted(
            (r for r, cases in ratings[component].items() if cases),
            key=lambda r: (not r.startswith(PERSON), r),
        )
        by_rater = ratings[component]
        distributions = {
            rater: [sum(1 for v in by_rater[rater].values() if v == s) for s in SCALE]
            for rater in raters
        }
        result = ComponentAgreement(component, raters, [], None, None, 0, distributions)
        if len(raters) < 2:
            result.notes.append("fewer than two raters scored this component")
            results.append(result)
            continue
        for first, second in itertools.combinations(raters, 2):
            shared = sorted(set(by_rater[first]) & set(by_rater[second]))
            if len(shared) < 2:
                result.notes.append(
                    f"{first} and {second} share {len(shared)} case(s): no pair statistics"
                )
                continue
            result.pairs.append(_pair(first, second, shared, by_rater))
        # Only the cases two raters or more scored: alpha pairs values within a case, so a
        # case one rater scored adds nothing but rows to resample (a reference's 100,000 rows
        # for cases no log holds made a bootstrap over 100,000 cases for the 12 that count).
        rated = Counter(case for rater in raters for case in by_rater[rater])
        cases = sorted(case for case, count in rated.items() if count >= 2)
        if len(cases) < len(rated):
            result.notes.append(
                f"{len(rated) - len(cases)} case(s) scored by one rater only: in the "
                "distributions, not in α or the ICC"
            )
        matrix = np.array(
            [[by_rater[r].get(c, np.nan) for c in cases] for r in raters], dtype=float
        ).reshape(len(raters), len(cases))
        if cases:
            result.alpha = bootstrap_estimate(
                functools.partial(_ordinal_alpha_of_rows, score_counts(matrix)), len(cases)
            )
        complete = [i for i, c in enumerate(cases) if all(c in by_rater[r] for r in raters)]
        result.icc_cases = len(complete)
        if len(complete) >= 2:
            full = matrix[:, complete].T
            result.icc = icc_two_way(full)
        people = [i for i, r in enumerate(raters) if r.startswith(PERSON)]
        if len(people) >= 2:
            by_all = [
                i for i, c in enumerate(cases) if all(c in by_rater[raters[p]] for p in people)
            ]
            result.people_icc_cases = len(by_all)
            if len(by_all) >= 2:
                result.people_icc = icc_two_way(matrix[np.ix_(people, by_all)].T)
        results.append(result)
    return results


def _ordinal_alpha_of_rows(counts: np.ndarray, rows: np.ndarray) -> float:
    return _alpha("ordinal", value_counts=counts[rows], value_domain=SCALE)


@functools.lru_cache(maxsize=8)
def _resample_rows(count: int) -> np.ndarray:
    """The ``RESAMPLES`` x ``count`` case indices :func:`bootstrap_estimate` draws for
    ``count`` cases (the same generator, seed and calls, so the same draws), once per
    count: every statistic of every pair of raters sharing ``count`` cases resamples them."""
    rng = np.random.default_rng(SEED)
    return np.stack([rng.integers(0, count, count) for _ in range(RESAMPLES)])


def _estimate_of_draws(value: float, draws: np.ndarray) -> Estimate:
    """:func:`bootstrap_estimate`'s interval from the statistic of each resample at once."""
    kept = draws[~np.isnan(draws)]
    if len(kept) < RESAMPLES / 2:
        return Estimate(value, Interval(math.nan, math.nan))
    tail = (1.0 - LEVEL) / 2.0
    return Estimate(
        value, Interval(float(np.quantile(kept, tail)), float(np.quantile(kept, 1 - tail)))
    )


def kappas(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`quadratic_kappa` of each row pair of two resample x case matrices."""
    rows, size = x.shape
    codes = (x * len(SCALE) + y) + (np.arange(rows) * len(SCALE) ** 2)[:, None]
    observed = np.bincount(codes.ravel(), minlength=rows * len(SCALE) ** 2).reshape(
        rows, len(SCALE), len(SCALE)
    )
    expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :] / max(size, 1)
    disagreement = np.sum(_QUADRATIC_WEIGHTS * expected, axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - np.sum(_QUADRATIC_WEIGHTS * observed, axis=(1, 2)) / disagreement
    return np.where(disagreement == 0.0, math.nan, kappa)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Each row's average ranks (scipy's ``rankdata``, ties averaged), from the row's
    counts of each level: no sort of a thousand rows of thousands of cases. Scores 0-4 are
    their own levels; any other values (a calibrated score, a mean rating) are first coded
    by their order among all the matrix's values, which keeps every row's order and ties."""
    if np.issubdtype(x.dtype, np.integer) and x.min() >= 0 and x.max() < len(SCALE):
        codes, levels = x, len(SCALE)
    else:
        distinct, inverse = np.unique(x, return_inverse=True)
        codes, levels = inverse.reshape(x.shape), len(distinct)
    rows = codes.shape[0]
    counts = np.bincount(
        (codes + (np.arange(rows) * levels)[:, None]).ravel(), minlength=rows * levels
    ).reshape(rows, levels)
    below = np.cumsum(counts, axis=1) - counts
    return np.take_along_axis(below + (counts + 1) / 2.0, codes, axis=1)


def resampled_estimate(
    value: float, statistic_of_rows: Callable[[np.ndarray], np.ndarray], count: int
) -> Estimate:
    """What :func:`bootstrap_estimate` gives (the same draws), from a statistic computed on
    all resamples at once: ``statistic_of_rows`` takes the resamples x ``count`` matrix of
    case indices and returns one value per resample."""
    return _estimate_of_draws(value, statistic_of_rows(_resample_rows(count)))


def spearmans(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`spearman` of each row pair: Pearson's r of the average ranks, NaN where a
    row holds one value only."""
    rx, ry = _average_ranks(x), _average_ranks(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sum(rx * ry, axis=1) / np.sqrt(np.sum(rx * rx, axis=1) * np.sum(ry * ry, axis=1))
    constant = (x.min(axis=1) == x.max(axis=1)) | (y.min(axis=1) == y.max(axis=1))
    return np.where(constant, math.nan, np.clip(r, -1.0, 1.0))


def _pair(
    first: str, second: str, shared: list[str], by_rater: dict[str, dict[str, int]]
) -> PairAgreement:
    a = np.array([by_rater[first][c] for c in shared])
    b = np.array([by_rater[second][c] for c in shared])
    # Every statistic on all resamples at once (the draws of bootstrap_estimate): a loop of
    # a thousand calls per statistic cost 1.3 s a pair, quadratic in the raters.
    rows = _resample_rows(len(shared))
    x, y = a[rows], b[rows]

    def on(statistic: Callable[[Any, Any], float], draws: np.ndarray) -> Estimate:
        return _estimate_of_draws(statistic(a, b), draws)

    return PairAgreement(
        first,
        second,
        len(shared),
        kappa=on(quadratic_kappa, kappas(x, y)),
        exact=on(lambda p, q: float(np.mean(p == q)), np.mean(x == y, axis=1)),
        within_one=on(
            lambda p, q: float(np.mean(np.abs(p - q) <= 1)), np.mean(np.abs(x - y) <= 1, axis=1)
        ),
        spearman=on(spearman, spearmans(x, y)),
        bias=on(lambda p, q: float(np.mean(q - p)), np.mean(y - x, axis=1)),
        confusion=score_confusion(a, b).tolist(),
        mae=on(lambda p, q: float(np.mean(np.abs(q - p))), np.mean(np.abs(y - x), axis=1)),
        icc=icc_two_way(np.stack([a, b], axis=1).astype(float)),
    )


def _cell(estimate: Estimate | None) -> str:
    if estimate is None or math.isnan(estimate.value):
        return "—"
    low, high = estimate.interval.lower, estimate.interval.upper
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return f"{estimate.value:.2f}{interval}"


PAIR_HEADER = [
    "first",
    "second",
    "cases",
    "weighted κ",
    "exact",
    "within one",
    "Spearman ρ",
    "MAE",
    "ICC(2,1)",
    "bias (second − first)",
]


PAIR_KINDS = {
    "person-judge": "Judges against people",
    "person-person": "Between people",
    "judge-judge": "Between judges",
}


def _pair_rows(result: ComponentAgreement, kind: str | None = None) -> list[list[str]]:
    pairs = [p for p in result.pairs if kind is None or p.kind == kind]
    return [
        [
            p.first,
            p.second,
            str(p.cases),
            _cell(p.kappa),
            _cell(p.exact),
            _cell(p.within_one),
            _cell(p.spearman),
            _cell(p.mae),
            _cell(p.icc),
            _cell(p.bias),
        ]
        for p in pairs
    ]


def render(results: list[ComponentAgreement], notes: list[str], fmt: str) -> str:
    if fmt == "json":
        return strict_json.dumps(
            {"components": [_document(r) for r in results], "notes": notes, "method": __doc__},
            indent=2,
        )
    if fmt == "html":
        return _html(results, notes)
    lines = ["# Judge agreement", ""]
    for result in results:
        lines += [f"## {result.component}", ""]
        lines += [
            f"Krippendorff's α (ordinal, all raters): {_cell(result.alpha)}; "
            f"ICC(2,1): {_cell(result.icc)} on {result.icc_cases} cases every rater scored.",
            "",
        ]
        if result.people_icc is not None:
            lines += [
                f"ICC(2,1) of the people alone: {_cell(result.people_icc)} on "
                f"{result.people_icc_cases} cases each of them rated.",
                "",
            ]
        kinds = [k for k in PAIR_KINDS if any(p.kind == k for p in result.pairs)]
        for kind in kinds:
            if len(kinds) > 1 or kind != "judge-judge":
                lines += [f"### {PAIR_KINDS[kind]}", ""]
            lines += [markdown_row(PAIR_HEADER), "|" + "---|" * len(PAIR_HEADER)]
            lines += [markdown_row(row) for row in _pair_rows(result, kind)] + [""]
        lines += [
            "| rater | " + " | ".join(str(s) for s in SCALE) + " |",
            "|" + "---|" * (len(SCALE) + 1),
        ]
        lines += [
            markdown_row([rater, *(str(n) for n in counts)])
            for rater, counts in result.distributions.items()
        ] + [""]
        for pair in result.pairs:
            lines += [
                markdown_text(f"Confusion ({pair.first} rows, {pair.second} columns):"),
                "",
                "| | " + " | ".join(str(s) for s in SCALE) + " |",
                "|" + "---|" * (len(SCALE) + 1),
            ]
            lines += [
                f"| {s} | " + " | ".join(str(n) for n in row) + " |"
                for s, row in zip(SCALE, pair.confusion, strict=True)
            ]
            lines.append("")
        lines += [f"note: {markdown_text(n)}" for n in result.notes]
    lines += [f"note: {markdown_text(n)}" for n in notes]
    lines += ["", "[a, b] = 95% bootstrap interval over cases (1,000 resamples, fixed seed)."]
    return "\n".join(lines) + "\n"


def _document(result: ComponentAgreement) -> dict[str, Any]:
    return {
        "component": result.component,
        "raters": result.raters,
        "krippendorff_alpha_ordinal": result.alpha.as_dict() if result.alpha else None,
        "icc_2_1": result.icc.as_dict() if result.icc else None,
        "icc_cases": result.icc_cases,
        "people_icc_2_1": result.people_icc.as_dict() if result.people_icc else None,
        "people_icc_cases": result.people_icc_cases,
        "pairs": [
            {
                "first": p.first,
                "second": p.second,
                "kind": p.kind,
                "cases": p.cases,
                "weighted_kappa": p.kappa.as_dict(),
                "exact": p.exact.as_dict(),
                "within_one": p.within_one.as_dict(),
                "spearman": p.spearman.as_dict(),
                "bias": p.bias.as_dict(),
                "mae": p.mae.as_dict(),
                "icc_2_1": p.icc.as_dict(),
                "confusion": p.confusion,
            }
            for p in result.pairs
        ],
        "distributions": result.distributions,
        "notes": result.notes,
    }


def _html(results: list[ComponentAgreement], notes: list[str]) -> str:
    parts = []
    for result in results:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in PAIR_HEADER)
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in _pair_rows(result)
        )
        parts.append(
            f"<h2>{result.component}</h2><p>Krippendorff's α (ordinal): {_cell(result.alpha)}; "
            f"ICC(2,1): {_cell(result.icc)} ({result.icc_cases} cases)</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        )
    image = base64.b64encode(plot_png(results)).decode("ascii")
    note_html = "".join(f"<p>{html.escape(n)}</p>" for n in notes)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>Judge agreement"
        "</title><style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:"
        "collapse}td,th{border-bottom:1px solid #ddd;padding:.3rem .6rem}img{max-width:100%}"
        f"</style></head><body><h1>Judge agreement</h1>{''.join(parts)}"
        f"<img alt='Confusion matrices and score distributions' src='data:image/png;base64,{image}'>"
        f"{note_html}</body></html>\n"
    )


def plot_png(results: list[ComponentAgreement]) -> bytes:
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


# --- the command line: medreason agreement ------------------------------------------------


def add_parsers(commands: Subcommands) -> None:
    """``agreement``: its arguments and the function that runs it."""
    agree = commands.add_parser(
        "agreement",
        help="how far the judges agree with each other, with reference scores and with "
        "people's ratings",
        description="Per component: weighted kappa, exact and within-one agreement, Spearman, "
        "mean absolute error, ICC(2,1), bias and confusion for each pair of raters (judges, a "
        "--reference, and with --ratings each person as rater:<name>: judges against each "
        "person, people with each other); Krippendorff's alpha and ICC for all and for the "
        "people alone; score distributions; 95% bootstrap intervals over cases.",
    )
    agree.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="judged open-ended logs")
    agree.add_argument(
        "--reference", help="reference scores in the judge_scores.json format" + DATA_FILE
    )
    agree.add_argument(
        "--ratings",
        nargs="+",
        default=[],
        metavar="FILE",
        help="people's ratings saved from a 'medreason rate' page (one file per rater), or "
        "the --store of a served round, of these logs: each person becomes a rater, "
        "rater:<name>" + RATINGS_FILE,
    )
    agree.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), only this score "
        "(open_ended_scorer, open_ended_scorer1, ...); by default each judging is a rater "
        "(counted once, however many copies of a log hold it)",
    )
    add_report_arguments(
        agree,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of confusion heat maps and distributions",
    )
    agree.set_defaults(handler=cmd_agreement)


def cmd_agreement(args: argparse.Namespace) -> int:
    outputs = check_outputs(args, [*args.logs, args.reference, *args.ratings])
    if args.reference and args.ratings:
        raise AnalysisError(
            [
                "--reference and --ratings key cases differently (case ids, a page's blinded "
                "ids): give one of them"
            ]
        )
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    # with the logs: a rated case that is not on the page is named with its file's problems
    people = read_rating_round([Path(p) for p in args.ratings], logs) if args.ratings else None
    ratings, notes = read_ratings(
        logs, Path(args.reference) if args.reference else None, people, args.scorer
    )
    notes[:0] = skipped
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not any(len(raters) >= 2 for raters in ratings.values()):
        raise AnalysisError(
            [
                "fewer than two raters: give a log judged by a panel (--model-role grader_2=...), "
                "several logs judging the same cases, or --reference scores"
            ]
        )
    results = agreement(ratings)
    output = render(results, notes, args.format)
    emit(args, outputs, output, lambda: plot_png(results))
    return EXIT_OK
