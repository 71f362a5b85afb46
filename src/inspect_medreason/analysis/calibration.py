"""Judge scores calibrated to people's ratings: :func:`calibrate_judges` (what ``medreason
calibrate`` runs) and the calibration file it writes, read back by :func:`read_calibration`.

Per component (GT_final, VA_answer, RVF_trace, VA_final), on the cases of a rating round
(``medreason rate``) that the people rated and the judges judged, a monotone map from the
judge's score (the component's value in the log: a panel's reduced score) to the people's
mean rating is fitted by isotonic regression (scikit-learn's ``IsotonicRegression``,
non-decreasing, bounded to 0-4, clipped outside the judge scores seen). A judge that is
systematically off (too lenient, too harsh, compressed to the middle) but orders the cases
as the people do is corrected; a judge that orders them differently is not (see
``docs/rating.md``).

VA_final is calibrated directly (the judge's gated score against the people's gated score,
each person's VA gated by their own RVF), not by gating calibrated VA_answer and RVF_trace:
the official gate's thresholds (RVF <= 1, RVF == 2) are defined on whole scores, and a
calibrated RVF is not one.

How good the fit is, is measured out of sample: k-fold cross-validation (5 folds, seeded)
predicts each case from a map fitted without it, and the mean absolute error, Spearman's rho
and the quadratic-weighted kappa (scores rounded half up to whole ones) against the people
are reported before (the raw judge) and after (the cross-validated calibration), with the
bias and the change in error, each with a 95% interval counting images (cases on one image
together): the means the clustered mean interval, rho and kappa the BCa bootstrap of whole
images (docs/intervals.md).

Too few ratings are refused: each component needs at least ``MIN_CASES`` (30) rated and
judged cases. Below that the five held-out folds hold five cases or fewer each and a step
of the fitted map rests on one or two ratings; the refusal says how many more to rate.

The calibration file records the judges it is valid for (their models by role, the digests
of their prompt templates, the panel reduction), the raters, the counts, the fit's own
figures and the map (its thresholds). Applying it (leaderboard and compare
``--calibration``) refuses a log judged by other judges or prompts, naming both; a score a
rule gave (an empty answer is 0) is not a judge's opinion and is kept as it is.

The command's arguments and what it prints are in ``cli/calibrate.py``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from inspect_ai.log import EvalLog

from inspect_medreason.analysis.agreement import (
    Estimate,
    clustered_mean_estimate,
    image_tables,
    kappas_of_tables,
    quadratic_kappa,
    spearman,
    spearmans_of_tables,
    table_estimate,
)
from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import log_files
from inspect_medreason.analysis.logs import (
    UnreadableSample,
    log_header,
    logged_samples,
    task_record,
)
from inspect_medreason.core import strict_json
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.gate import gate_visual_accuracy
from inspect_medreason.core.intervals import (
    LEVEL,
    NO_INTERVAL,
    RESAMPLES,
    SEED,
    Interval,
    case_cluster,
    cluster_codes,
)
from inspect_medreason.core.user_files import (
    MAX_CALIBRATION_BYTES,
    UserFileError,
    read_user_bytes,
)
from inspect_medreason.rating.cases import RATED_COMPONENTS, SCORER, Candidate
from inspect_medreason.rating.ratings_file import RatingRound, map_round_to_logs, read_rating_round

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CalibratedMean",
    "Calibration",
    "CalibrationFit",
    "FitFigures",
    "calibrate_judges",
    "calibrated_means",
    "read_calibration",
]

CALIBRATION_FORMAT = "medreason-calibration"
CALIBRATION_VERSION = 1
COMPONENTS = ("gt_final", "va_answer", "rvf_trace", "va_final")
MIN_CASES = 30
FOLDS = 5
_OPEN_JUDGES = {"gt_final", "va_answer", "rvf_trace"}  # the judges' record names


def judge_identity(header: EvalLog) -> dict[str, Any]:
    """What a calibration is valid for: the judges' models by role, their prompt templates'
    digests and the panel reduction (a log written before these were recorded has none)."""
    record = task_record(header)
    judges = record.judges
    return {
        "models": {
            role: str(getattr(config, "model", config))
            for role, config in sorted((header.eval.model_roles or {}).items())
        },
        "prompt_digests": {
            name: template.sha256 or ""
            for name, template in sorted((judges.templates if judges else {}).items())
        },
        "panel_reduce": judges.panel_reduce if judges else None,
    }


def describe_judges(identity: dict[str, Any]) -> str:
    """A judge identity in one line: the models by role, the prompts' short digests, the
    panel reduction."""
    models = ", ".join(f"{role}={model}" for role, model in identity.get("models", {}).items())
    digests = ", ".join(
        f"{name}:{str(sha)[:12]}" for name, sha in identity.get("prompt_digests", {}).items()
    )
    return f"judges {models or '(none)'}; prompts {digests or '(none)'}; panel " + str(
        identity.get("panel_reduce")
    )


def identity_mismatch(expected: dict[str, Any], found: dict[str, Any]) -> list[str]:
    """What differs between two judge identities, one line per key that differs (a role,
    a template, the panel reduction), never the keys that agree."""
    lines: list[str] = []
    for name in ("models", "prompt_digests", "panel_reduce"):
        want, have = expected.get(name), found.get(name)
        if want == have:
            continue
        if isinstance(want, dict) and isinstance(have, dict):
            for key in sorted(set(want) | set(have), key=str):
                if want.get(key) != have.get(key):
                    lines.append(
                        f"{name}.{key}: calibrated for {_short(want.get(key))}, the log has "
                        f"{_short(have.get(key))}"
                    )
        else:
            lines.append(f"{name}: calibrated for {_short(want)}, the log has {_short(have)}")
    return lines


def _short(value: Any) -> str:
    """A digest shortened to 12 characters (enough to tell two apart), anything else as
    it is; a missing entry as "(none)"."""
    if value is None:
        return "(none)"
    text = str(value)
    return text[:12] if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


@dataclass(frozen=True)
class FitFigures:
    """One component's fit: the map (``judge`` thresholds to ``calibrated`` scores), the
    cross-validated figures before (the raw judge) and after (the calibrated judge) against
    the people's mean rating (``mae``, ``spearman``, ``weighted_kappa``, ``bias``), the
    change in error, each fold's errors, and the rated cases it was fitted on."""

    component: str
    cases: int
    judge: list[float]  # the map's thresholds: judge score ...
    calibrated: list[float]  # ... -> calibrated score
    before: dict[str, Estimate]
    after: dict[str, Estimate]
    mae_change: Estimate
    folds: list[dict[str, float | int]]
    people_mean: float
    judge_mean: float
    fit: FitData


@dataclass(frozen=True)
class FitData:
    """The rated cases a map was fitted on: each case's judge score, the people's mean
    rating and its image cluster (as a number). Kept in the calibration file because the
    map is an estimate from a few dozen cases: a calibrated mean's interval refits it on
    resamples of them (``calibrated_mean``)."""

    judge: np.ndarray
    people: np.ndarray
    clusters: np.ndarray

    def as_dict(self) -> dict[str, list[float] | list[int]]:
        return {
            "judge": [float(v) for v in self.judge],
            "people": [float(v) for v in self.people],
            "cluster": [int(v) for v in self.clusters],
        }


def _half_up(values: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(values + 0.5), 0, 4).astype(np.int64)


def _figures(
    predicted: np.ndarray, target: np.ndarray, images: Sequence[str]
) -> dict[str, Estimate]:
    """A prediction's figures against the people's mean rating, each interval counting
    images, as agreement's do: the means (MAE, bias) ``clustered_mean_interval``, the rank
    and kappa statistics the BCa bootstrap of whole images."""
    halves = (_half_up(predicted), _half_up(target))
    return {
        "mae": clustered_mean_estimate(np.abs(predicted - target), images, 0.0, 4.0),
        "spearman": table_estimate(
            spearman(predicted, target),
            spearmans_of_tables,
            image_tables(predicted, target, images),
        ),
        "weighted_kappa": table_estimate(
            quadratic_kappa(*halves), kappas_of_tables, image_tables(*halves, images)
        ),
        "bias": clustered_mean_estimate(predicted - target, images, -4.0, 4.0),
    }


def fit_map(judge: np.ndarray, people: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The isotonic map from judge scores to people's ratings: at each distinct judge score
    (ascending) the calibrated score. What scikit-learn's ``IsotonicRegression(y_min=0,
    y_max=4)`` fits (the cases of one judge score pooled to their mean, weighted by their
    count; pool-adjacent-violators; clipped to 0-4), by scipy's ``isotonic_regression``: the
    interval of a calibrated mean refits the map on every bootstrap resample, and scipy's
    solver is eight times faster than scikit-learn's checked entry point (a test holds the
    two equal)."""
    from scipy.optimize import isotonic_regression

    levels, index = np.unique(judge, return_inverse=True)
    weights = np.bincount(index).astype(float)
    pooled = np.bincount(index, weights=people) / weights
    fitted = isotonic_regression(pooled, weights=weights, increasing=True).x
    return levels, np.clip(fitted, 0.0, 4.0)


def apply_map(judge: np.ndarray, calibrated: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A map applied: linear between its judge scores, clipped at the ends (what
    ``IsotonicRegression.predict`` does with ``out_of_bounds="clip"``)."""
    return np.interp(values, judge, calibrated)


def kfold_splits(cases: int, folds: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) indices of each fold: scikit-learn's ``KFold(n_splits=folds,
    shuffle=True, random_state=seed)`` draw for draw (the cases shuffled by a
    ``RandomState(seed)``, cut into folds the first ``cases % folds`` of them one larger,
    each side in case order), without scikit-learn's weight in the install; a test holds
    the two equal where scikit-learn is installed."""
    if not 2 <= folds <= cases:
        raise ValueError(f"{folds} folds need 2 to {cases} cases")
    order = np.arange(cases)
    np.random.RandomState(seed).shuffle(order)
    sizes = np.full(folds, cases // folds, dtype=int)
    sizes[: cases % folds] += 1
    start = 0
    for size in sizes:
        held_out = np.zeros(cases, dtype=bool)
        held_out[order[start : start + size]] = True
        start += size
        yield np.flatnonzero(~held_out), np.flatnonzero(held_out)


def fit_component(component: str, fit: FitData, folds: int, seed: int) -> FitFigures:
    """The map and its cross-validated figures (the module docstring)."""
    judge, people = fit.judge, fit.people
    images = [str(code) for code in fit.clusters]
    predicted = np.empty(len(judge))
    per_fold: list[dict[str, float | int]] = []
    for number, (train, test) in enumerate(kfold_splits(len(judge), folds, seed), 1):
        predicted[test] = apply_map(*fit_map(judge[train], people[train]), judge[test])
        per_fold.append(
            {
                "fold": number,
                "train_cases": len(train),
                "test_cases": len(test),
                "mae_before": float(np.mean(np.abs(judge[test] - people[test]))),
                "mae_after": float(np.mean(np.abs(predicted[test] - people[test]))),
            }
        )
    levels, fitted = fit_map(judge, people)
    raw_error, fitted_error = np.abs(judge - people), np.abs(predicted - people)
    return FitFigures(
        component=component,
        cases=len(judge),
        judge=[float(x) for x in levels],
        calibrated=[float(y) for y in fitted],
        before=_figures(judge, people, images),
        after=_figures(predicted, people, images),
        mae_change=clustered_mean_estimate(fitted_error - raw_error, images, -4.0, 4.0),
        folds=per_fold,
        people_mean=float(np.mean(people)),
        judge_mean=float(np.mean(judge)),
        fit=fit,
    )


def _people_scores(people: RatingRound, case: str) -> dict[str, list[float]]:
    scores: dict[str, list[float]] = defaultdict(list)
    for by_case in people.scores.values():
        given = by_case.get(case)
        if given is None:
            continue
        # a partly rated case counts in the components it has; VA_final needs VA and RVF
        for key, component in RATED_COMPONENTS.items():
            if key in given:
                scores[component].append(float(given[key]))
        if "va" in given and "rvf" in given:
            scores["va_final"].append(float(gate_visual_accuracy(given["va"], given["rvf"])))
    return scores


def pairs_for_fit(people: RatingRound, mapping: dict[str, Candidate]) -> dict[str, FitData]:
    """Per component, the judge's score, the people's mean rating and the image cluster of
    every case both scored (a component a rule scored is left out: no judge's opinion to
    map). Cases on one image are resampled together, as the logged cases are."""
    judge: dict[str, list[float]] = defaultdict(list)
    target: dict[str, list[float]] = defaultdict(list)
    clusters: dict[str, list[str]] = defaultdict(list)
    for case in sorted(mapping):
        candidate = mapping[case]
        rated = _people_scores(people, case)
        for component in COMPONENTS:
            value = candidate.values.get(component, math.nan)
            rule = candidate.by_rule & (
                {"va_answer", "rvf_trace"} if component == "va_final" else {component}
            )
            if not rated.get(component) or math.isnan(value) or rule:
                continue
            judge[component].append(value)
            target[component].append(float(np.mean(rated[component])))
            clusters[component].append(case_cluster(candidate.metadata, candidate.sample_id))
    return {
        c: FitData(
            np.array(judge[c], dtype=float),
            np.array(target[c], dtype=float),
            cluster_codes(clusters[c], len(clusters[c]))[0],
        )
        for c in COMPONENTS
    }


def calibrate(
    logs: Sequence[Path], people: RatingRound, folds: int = FOLDS, seed: int = 0
) -> tuple[dict[str, Any], list[FitFigures], list[str]]:
    """The calibration document, its figures per component, and notes. Raises
    AnalysisError for too few ratings or logs judged by different judges."""
    if not 2 <= folds <= MIN_CASES:
        raise AnalysisError([f"--folds {folds}: give 2 to {MIN_CASES} folds"])
    mapping, notes = map_round_to_logs(people, logs)
    identity = _one_judge_identity(mapping)
    data = pairs_for_fit(people, mapping)
    partial = {rater: len(people.partial(rater)) for rater in sorted(people.files)}
    if any(partial.values()):
        notes.append(
            "partly rated cases (counted in the components they have): "
            + ", ".join(f"{rater} {count}" for rater, count in partial.items() if count)
        )
    short = [
        _too_few(component, len(data[component].judge), people)
        for component in COMPONENTS
        if len(data[component].judge) < MIN_CASES
    ]
    if short:
        raise AnalysisError(short)
    results = [fit_component(c, data[c], folds, seed) for c in COMPONENTS]
    document = _calibration_file(people, identity, partial, results, folds, seed)
    return document, results, notes


def _one_judge_identity(mapping: dict[str, Candidate]) -> dict[str, Any]:
    """The judges of the rated cases' logs; AnalysisError naming each set when they differ."""
    identities: dict[str, tuple[dict[str, Any], list[Path]]] = {}
    for path in sorted({c.path for c in mapping.values()}):
        identity = judge_identity(log_header(path))
        key = json.dumps(identity, sort_keys=True)
        identities.setdefault(key, (identity, []))[1].append(path)
    if len(identities) > 1:
        raise AnalysisError(
            [
                "the rated cases were judged by different judges or prompts; calibrate one "
                "set of judges at a time:",
                *(
                    f"{', '.join(map(str, paths))}: {describe_judges(identity)}"
                    for identity, paths in identities.values()
                ),
            ]
        )
    [(identity, _)] = identities.values()
    return identity


def _calibration_file(
    people: RatingRound,
    identity: dict[str, Any],
    partial: dict[str, int],
    results: list[FitFigures],
    folds: int,
    seed: int,
) -> dict[str, Any]:
    """The calibration file's document, its digests included (``integrity``)."""
    document = {
        "format": CALIBRATION_FORMAT,
        "version": CALIBRATION_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "page_id": people.page_id,
        "judges": identity,
        "raters": sorted(people.scores),
        "rater_count": len(people.scores),
        # cases a rater scored in part: each counts in the components it has
        "partial_cases": partial,
        "method": {
            "fit": "isotonic regression, judge score -> the people's mean rating, bounded to "
            "0-4 (scipy.optimize.isotonic_regression on the cases pooled per judge score: "
            "what sklearn.isotonic.IsotonicRegression(y_min=0, y_max=4) fits)",
            "apply": "linear interpolation between the thresholds, clipped at the ends "
            "(what IsotonicRegression.predict does); scores given by rule kept",
            "cross_validation": f"KFold(n_splits={folds}, shuffle=True, random_state={seed})",
            "intervals": "95% percentile bootstrap over cases, 1,000 resamples, fixed seed",
            "calibrated_means": "95% percentile bootstrap, each resample refitting the map on "
            "a resample of the rated cases (by image cluster) and applying it to a resample "
            f"of the scored log's cases (by image cluster), {RESAMPLES:,} resamples",
            "min_cases": MIN_CASES,
        },
        "components": {r.component: _component_document(r) for r in results},
    }
    document[INTEGRITY_KEY] = integrity(document)
    return document


@dataclass(frozen=True, repr=False)
class CalibrationFit(NotebookDisplay):
    """What :func:`calibrate_judges` fitted: the calibration file's ``document`` (written
    by :meth:`file_text`), each component's :class:`FitFigures` (GT_final, VA_answer,
    RVF_trace, VA_final), the rating round's page and number of raters, and notes on what
    was read (logs skipped, cases rated in part)."""

    document: dict[str, Any]
    components: tuple[FitFigures, ...]
    page_id: str
    rater_count: int
    notes: tuple[str, ...]

    def display_summary(self) -> str:
        names = ", ".join(c.component for c in self.components) or "no component"
        return (
            f"{names} calibrated to {self.rater_count} rater(s) of page {self.page_id}; "
            f"{len(self.notes)} note(s)"
        )

    def display_notes(self) -> list[str]:
        return list(self.notes)

    def file_text(self) -> str:
        """The calibration file as ``medreason calibrate --output`` writes it (strict JSON;
        ``leaderboard`` and ``compare --calibration`` read it back)."""
        return strict_json.dumps(self.document, indent=2) + "\n"

    def to_pandas(self) -> pd.DataFrame:
        """One row per component: its cases, the people's and the judge's means, and each
        cross-validated figure before and after calibration with its interval's bounds
        (``mae_before``, ``mae_before_lower``, ...), then the change in error."""
        import pandas as pd

        rows = []
        for fit in self.components:
            row: dict[str, Any] = {
                "component": fit.component,
                "cases": fit.cases,
                "people_mean": fit.people_mean,
                "judge_mean": fit.judge_mean,
            }
            for name in FIT_STATISTICS:
                for when, figures in (("before", fit.before), ("after", fit.after)):
                    _add_estimate(row, f"{name}_{when}", figures[name])
            _add_estimate(row, "mae_change", fit.mae_change)
            rows.append(row)
        return pd.DataFrame(rows)


# The cross-validated figures of a fit, in the order the report gives them.
FIT_STATISTICS = ("mae", "spearman", "weighted_kappa", "bias")


def _add_estimate(row: dict[str, Any], name: str, estimate: Estimate) -> None:
    row[name] = estimate.value
    row[f"{name}_lower"] = estimate.interval.lower
    row[f"{name}_upper"] = estimate.interval.upper


def calibrate_judges(
    logs: Sequence[str | os.PathLike[str]],
    ratings: Sequence[str | os.PathLike[str]],
    *,
    folds: int = FOLDS,
    seed: int = 0,
) -> CalibrationFit:
    """Fit, per component, a monotone map from the judges' scores in ``logs`` (files or
    folders of them) to the people's mean rating in ``ratings`` (a rating round's files,
    one per person, or a served round's store), by isotonic regression, with its
    ``folds``-fold cross-validated figures (the module docstring). Raises AnalysisError
    for fewer than ``MIN_CASES`` rated cases per component, logs judged by different
    judges, or anything unreadable, naming every problem."""
    skipped: list[str] = []
    files = log_files([os.fspath(path) for path in logs], skipped)
    people = read_rating_round([Path(p) for p in ratings], files)
    document, results, notes = calibrate(files, people, folds, seed)
    return CalibrationFit(
        document, tuple(results), people.page_id, len(people.scores), (*skipped, *notes)
    )


# The calibration file's digests: one over the whole document (all but this entry, as
# canonical JSON: key order and white space do not count, every value does) and one per
# part, so that an edited file is refused naming what changed.
INTEGRITY_KEY = "sha256"


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _parts(document: dict[str, Any]) -> dict[str, Any]:
    """The document's parts by name: each component's entries apart (``components.gt_final
    .map``), every other top-level entry whole."""
    parts: dict[str, Any] = {}
    for key, value in document.items():
        if key == INTEGRITY_KEY:
            continue
        if key == "components" and isinstance(value, dict):
            for component, entry in value.items():
                for name, part in entry.items() if isinstance(entry, dict) else [("", entry)]:
                    parts[f"components.{component}.{name}".rstrip(".")] = part
        else:
            parts[key] = value
    return parts


def integrity(document: dict[str, Any]) -> dict[str, Any]:
    """The digests ``calibrate`` writes into the file: of the whole and of each part."""
    whole = {k: v for k, v in document.items() if k != INTEGRITY_KEY}
    return {
        "file": hashlib.sha256(_canonical(whole)).hexdigest(),
        "parts": {
            name: hashlib.sha256(_canonical(part)).hexdigest()
            for name, part in _parts(document).items()
        },
    }


def integrity_problems(path: Path, document: dict[str, Any]) -> list[str]:
    """Why the file is not the one ``calibrate`` wrote: its digest missing, or what changed
    (the parts whose digest differs, or that were added or removed). Empty when intact."""
    recorded = document.get(INTEGRITY_KEY)
    if not (
        isinstance(recorded, dict)
        and isinstance(recorded.get("file"), str)
        and isinstance(recorded.get("parts"), dict)
    ):
        return [
            f"{path}: {INTEGRITY_KEY}: no digest of the file (written by an older medreason, "
            "or edited): run medreason calibrate again"
        ]
    found = integrity(document)
    if found["file"] == recorded["file"]:
        return []
    before, after = recorded["parts"], found["parts"]
    changed = sorted(
        [f"{name} changed" for name in after if name in before and before[name] != after[name]]
        + [f"{name} added" for name in after if name not in before]
        + [f"{name} removed" for name in before if name not in after]
    )
    what = ", ".join(changed) if changed else f"{INTEGRITY_KEY} itself changed"
    return [
        f"{path}: edited since medreason calibrate wrote it ({what}; its digest over the whole "
        "file differs): a calibration is used as written or not at all; run medreason "
        "calibrate again"
    ]


def _too_few(component: str, have: int, people: RatingRound) -> str:
    """The refusal of a component with too few rated cases, and what to do: ratings of
    different pages are never merged (their cases are drawn apart), so more cases come from
    this page while it has unrated ones, else from a new page rated whole."""
    need = MIN_CASES - have
    answered = len(
        people.cases
        | {c for by_case in people.skipped.values() for c in by_case}
        | {c for by_case in people.cannot_assess.values() for c in by_case}
    )
    unrated = max(0, people.page_cases - answered)
    if unrated >= need:
        advice = (
            f"rate {need} more of this page's {unrated} unrated case(s) (the same page: "
            "ratings of different pages are not merged)"
        )
    else:
        advice = (
            f"this page has {unrated} unrated case(s) left, too few: write a new page with "
            f"more cases (medreason rate --cases {2 * MIN_CASES} or more) and rate it; "
            "ratings of different pages are not merged. A page holds at most the judged "
            "open cases of its logs: with fewer, judge more cases or more epochs (--epochs "
            "3 makes the demo's 10 open cases 30)"
        )
    return (
        f"{component}: {have} case(s) rated by people and scored by the judges; a stable fit "
        f"needs at least {MIN_CASES}: {advice}"
    )


def _component_document(result: FitFigures) -> dict[str, Any]:
    return {
        "cases": result.cases,
        "map": {"judge": result.judge, "calibrated": result.calibrated},
        "fit_cases": result.fit.as_dict(),
        "people_mean": result.people_mean,
        "judge_mean": result.judge_mean,
        "cross_validated": {
            "before": {name: e.as_dict() for name, e in result.before.items()},
            "after": {name: e.as_dict() for name, e in result.after.items()},
            "mae_change": result.mae_change.as_dict(),
            "folds": result.folds,
        },
    }


@dataclass(repr=False)
class Calibration(NotebookDisplay):
    """A calibration file, read and checked."""

    path: Path
    judges: dict[str, Any]
    maps: dict[str, tuple[np.ndarray, np.ndarray]]
    rater_count: int
    fits: dict[str, FitData]

    def display_summary(self) -> str:
        return (
            f"{self.path}: maps for {', '.join(sorted(self.maps)) or 'no component'}, "
            f"fitted on {self.rater_count} rater(s)"
        )

    def display_table(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "component": name,
                    "judge thresholds": ", ".join(f"{float(v):g}" for v in judge),
                    "calibrated": ", ".join(f"{float(v):.3f}" for v in mapped),
                }
                for name, (judge, mapped) in sorted(self.maps.items())
            ],
            columns=["component", "judge thresholds", "calibrated"],
        )

    def apply(self, component: str, values: np.ndarray) -> np.ndarray:
        return apply_map(*self.maps[component], values)


def read_calibration(path: str | os.PathLike[str]) -> Calibration:
    """A calibration file written by ``medreason calibrate`` (:func:`calibrate_judges`),
    read and checked: its version, its digests (an edited file is refused, naming what
    changed), each component's map and the rated cases it was fitted on. Raises
    AnalysisError naming every problem (never a traceback)."""
    path = Path(path)
    document = _calibration_document(path)
    problems: list[str] = []
    if document.get("version") != CALIBRATION_VERSION:
        problems.append(
            f"{path}: version {document.get('version')!r}; this medreason reads version "
            f"{CALIBRATION_VERSION}"
        )
    problems += integrity_problems(path, document)
    judges = document.get("judges")
    if not isinstance(judges, dict) or not isinstance(judges.get("models"), dict):
        problems.append(f"{path}: judges: not the record of the judges it is valid for")
    components = document.get("components")
    maps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    fits: dict[str, FitData] = {}
    for component in COMPONENTS:
        entry = components.get(component) if isinstance(components, dict) else None
        read = _component_map(path, component, entry, problems)
        if read is not None:
            maps[component], fit = read
            if fit is not None:
                fits[component] = fit
    count = document.get("rater_count")
    if type(count) is not int or count < 1:
        problems.append(f"{path}: rater_count is {count!r}, not a number of raters")
    if problems:
        raise AnalysisError(problems)
    assert isinstance(judges, dict) and isinstance(count, int)
    return Calibration(path, judges, maps, count, fits)


def _calibration_document(path: Path) -> dict[str, Any]:
    """The file's JSON object, refused unless it is a calibration file."""
    try:
        # a regular file within the limit, never a FIFO or a link to a device
        data = read_user_bytes(path, MAX_CALIBRATION_BYTES, "calibration file")
        document = json.loads(data.decode("utf-8"))
    except UserFileError as error:
        raise AnalysisError([str(error)]) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise AnalysisError(
            [f"{path}: not a readable JSON file ({describe_error(error, 200)})"]
        ) from error
    except RecursionError as error:
        raise AnalysisError([f"{path}: JSON nested too deeply to read"]) from error
    if not isinstance(document, dict) or document.get("format") != CALIBRATION_FORMAT:
        raise AnalysisError([f"{path}: not a calibration file written by medreason calibrate"])
    return document


def _component_map(
    path: Path, component: str, entry: Any, problems: list[str]
) -> tuple[tuple[np.ndarray, np.ndarray], FitData | None] | None:
    """A component's map and the rated cases it was fitted on, each checked (the map
    must be the one its cases give); None for no usable map. Problems are added to
    ``problems``."""
    mapped = entry.get("map") if isinstance(entry, dict) else None
    judge = mapped.get("judge") if isinstance(mapped, dict) else None
    calibrated = mapped.get("calibrated") if isinstance(mapped, dict) else None
    if not (
        isinstance(judge, list)
        and isinstance(calibrated, list)
        and _numbers(judge)
        and _numbers(calibrated)
        and len(judge) == len(calibrated)
    ):
        problems.append(
            f"{path}: components.{component}.map: judge and calibrated must be equally "
            "long lists of numbers 0-4"
        )
        return None
    x, y = np.array(judge, dtype=float), np.array(calibrated, dtype=float)
    if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
        problems.append(
            f"{path}: components.{component}.map: not a monotone map (judge scores must "
            "increase, calibrated ones never decrease)"
        )
        return None
    fit = _fit_data(entry.get("fit_cases") if isinstance(entry, dict) else None)
    if fit is None:
        problems.append(
            f"{path}: components.{component}.fit_cases: judge, people (numbers 0-4) and "
            "cluster (whole numbers) must be equally long lists, at least "
            f"{MIN_CASES} long (a file written before they were recorded: run "
            "medreason calibrate again)"
        )
        return (x, y), None
    # The map used (refitted from the rated cases, with the interval) is the map
    # checked: the stored one must be what the stored cases give.
    refitted = fit_map(fit.judge, fit.people)
    if not (
        len(refitted[0]) == len(x)
        and np.allclose(refitted[0], x, atol=1e-9)
        and np.allclose(refitted[1], y, atol=1e-9)
    ):
        problems.append(
            f"{path}: components.{component}.map is not the map its fit_cases give "
            "(one of them was edited): run medreason calibrate again"
        )
    return (x, y), fit


def _fit_data(value: Any) -> FitData | None:
    """The rated cases a map was fitted on, from a calibration file; None when damaged."""
    if not isinstance(value, dict):
        return None
    judge, people, clusters = value.get("judge"), value.get("people"), value.get("cluster")
    if not (
        isinstance(judge, list)
        and isinstance(people, list)
        and _numbers(judge)
        and _numbers(people)
        and isinstance(clusters, list)
        and all(type(c) is int and c >= 0 for c in clusters)
        and len(judge) == len(people) == len(clusters) >= MIN_CASES
    ):
        return None
    return FitData(
        np.array(judge, dtype=float),
        np.array(people, dtype=float),
        np.array(clusters, dtype=np.intp),
    )


def _numbers(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 4 for v in value
        )
    )


@dataclass(frozen=True)
class CalibratedMean:
    """A component's calibrated mean over a log's ``cases``, with a 95% interval holding
    both the cases' sampling error and the fitted map's (:func:`calibrated_mean`)."""

    mean: float
    interval: Interval
    cases: int


@dataclass
class LoggedScores:
    """One component's scores in a log: per observation (a case's epoch) its case (an
    index into ``cases``), the judge's value and whether a rule gave it (a rule's score is
    not a judge's opinion and is kept as it is); per case its id and image cluster."""

    cases: list[str]
    clusters: list[str]
    case_of: np.ndarray
    raw: np.ndarray
    by_rule: np.ndarray

    def case_values(self, judge: np.ndarray, calibrated: np.ndarray) -> np.ndarray:
        """Each case's calibrated score under a map (its epochs averaged, as the
        leaderboard's per-case values)."""
        mapped = np.where(self.by_rule, self.raw, apply_map(judge, calibrated, self.raw))
        sums = np.bincount(self.case_of, weights=mapped, minlength=len(self.cases))
        return sums / np.bincount(self.case_of, minlength=len(self.cases))


def calibrated_mean(
    scores: LoggedScores,
    fit: FitData,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> CalibratedMean:
    """A log's calibrated mean, with an interval that holds both errors it carries: the
    log's cases are a sample (as for a raw mean), and so are the few dozen rated cases the
    map was fitted on. Each bootstrap resample draws the rated cases' image clusters with
    replacement and refits the map on them, draws the log's image clusters with replacement,
    and takes the mean of the refitted map over those; the interval is the resampled means'
    percentiles. Treating the fitted map as exact (resampling the log alone) gave a 95%
    interval that held the people's mean one time in three in a simulation with 30 rated
    cases (docs/rating.md)."""
    mean = float(np.mean(scores.case_values(*fit_map(fit.judge, fit.people))))
    count = len(scores.cases)
    codes, groups = cluster_codes(scores.clusters, count)
    rated_codes, rated_groups = cluster_codes([str(c) for c in fit.clusters], len(fit.clusters))
    if groups < 2 or rated_groups < 2:
        return CalibratedMean(mean, NO_INTERVAL, count)
    # Judge scores take a handful of values, so both sides are summed per (cluster, judge
    # score) once, and a resample is a weighted sum of those: the rated side's pooled sums
    # and counts per judge score (what the isotonic fit needs), the log's share of each
    # judge score (what the refitted map is applied to) and its rule-given sum.
    rated_levels, rated_level = np.unique(fit.judge, return_inverse=True)
    rated_sum = np.zeros((rated_groups, len(rated_levels)))
    rated_count = np.zeros((rated_groups, len(rated_levels)))
    np.add.at(rated_sum, (rated_codes, rated_level), fit.people)
    np.add.at(rated_count, (rated_codes, rated_level), 1.0)
    judged = ~scores.by_rule
    levels, level_of = np.unique(scores.raw[judged], return_inverse=True)
    epochs = np.bincount(scores.case_of, minlength=count).astype(float)
    case_share = np.zeros((count, len(levels)))
    np.add.at(case_share, (scores.case_of[judged], level_of), 1.0)
    case_share /= epochs[:, None]
    case_fixed = (
        np.bincount(scores.case_of[~judged], weights=scores.raw[~judged], minlength=count) / epochs
    )
    share = np.zeros((groups, len(levels)))
    np.add.at(share, codes, case_share)
    fixed = np.bincount(codes, weights=case_fixed, minlength=groups)
    sizes = np.bincount(codes, minlength=groups).astype(float)
    from scipy.optimize import isotonic_regression

    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for number in range(resamples):
        drawn_rated = np.bincount(
            rng.integers(0, rated_groups, rated_groups), minlength=rated_groups
        ).astype(float)
        pooled_sum, pooled_count = drawn_rated @ rated_sum, drawn_rated @ rated_count
        seen = pooled_count > 0
        refitted = isotonic_regression(
            pooled_sum[seen] / pooled_count[seen], weights=pooled_count[seen]
        ).x
        mapped = apply_map(rated_levels[seen], np.clip(refitted, 0.0, 4.0), levels)
        drawn = rng.integers(0, groups, groups)
        means[number] = (share[drawn].sum(axis=0) @ mapped + fixed[drawn].sum()) / sizes[
            drawn
        ].sum()
    tail = (1.0 - level) / 2.0
    interval = Interval(float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail)))
    return CalibratedMean(mean, interval, count)


def logged_scores(path: Path, header: EvalLog, calibration: Calibration) -> dict[str, LoggedScores]:
    """Per component, a log's judge scores (``LoggedScores``). Raises AnalysisError when
    the log's judges are not the ones calibrated."""
    found = judge_identity(header)
    differences = identity_mismatch(calibration.judges, found)
    if differences:
        raise AnalysisError(
            [
                f"{path}: judged by other judges or prompts than {calibration.path} was "
                f"calibrated for",
                *differences,
            ]
        )
    observations: dict[str, list[tuple[str, float, bool]]] = defaultdict(list)
    clusters: dict[str, str] = {}
    for sample in logged_samples(path, header):
        if isinstance(sample, UnreadableSample):
            continue  # the leaderboard notes it; a calibrated mean just does not count it
        score = sample.scores.get(SCORER)
        if score is None or not isinstance(score.value, dict):
            continue
        judges = (score.metadata or {}).get("judges") or {}
        case = str(sample.id)
        clusters[case] = case_cluster(sample.metadata, sample.id)
        for component in COMPONENTS:
            value = score.value.get(component)
            if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
                continue
            sources = {"va_answer", "rvf_trace"} if component == "va_final" else {component}
            by_rule = any(
                isinstance(judges.get(s), dict) and judges[s].get("by_rule") for s in sources
            )
            observations[component].append((case, float(value), by_rule))
    result: dict[str, LoggedScores] = {}
    for component, rows in observations.items():
        cases = sorted({case for case, _, _ in rows})
        index = {case: number for number, case in enumerate(cases)}
        result[component] = LoggedScores(
            cases,
            [clusters[c] for c in cases],
            np.array([index[case] for case, _, _ in rows], dtype=np.intp),
            np.array([value for _, value, _ in rows], dtype=float),
            np.array([rule for _, _, rule in rows], dtype=bool),
        )
    return result


def calibrated_case_scores(
    path: Path, header: EvalLog, calibration: Calibration
) -> dict[str, dict[str, float]]:
    """Per component, each case's calibrated score by the file's map (epochs averaged, as
    the leaderboard's per-case values)."""
    return {
        component: dict(
            zip(
                scores.cases,
                (float(v) for v in scores.case_values(*calibration.maps[component])),
                strict=True,
            )
        )
        for component, scores in logged_scores(path, header, calibration).items()
    }


def calibrated_means(
    path: str | os.PathLike[str], calibration: Calibration, resamples: int = RESAMPLES
) -> dict[str, CalibratedMean]:
    """Each component's calibrated mean over a log's cases, with an interval that holds the
    map's own error as well as the cases' (``calibrated_mean``). Raises AnalysisError when
    the log was judged by other judges or prompts than ``calibration`` is valid for."""
    path = Path(path)
    return {
        component: calibrated_mean(scores, calibration.fits[component], resamples)
        for component, scores in logged_scores(path, log_header(path), calibration).items()
    }


# The leaderboard's judge metrics and the component each one averages.
CALIBRATED_METRICS = {"Open-ended GT": "gt_final", "Open-ended VA": "va_final"}


def calibrated_label(name: str) -> str:
    return f"{name} (calibrated)"


def add_calibrated_means(
    rows: Sequence[Any], calibration: Calibration
) -> dict[str, dict[str, CalibratedMean]]:
    """Per row (by model label), each judge metric's calibrated mean from the log the raw
    metric came from (``row.sources``); stored on the row as ``row.calibrated`` and never in
    place of the raw metric. Raises AnalysisError when a log's judges are not the ones
    calibrated."""
    cache: dict[str, dict[str, CalibratedMean]] = {}
    problems: list[str] = []
    for row in rows:
        for name, component in CALIBRATED_METRICS.items():
            source = row.sources.get(name)
            if not source:
                continue
            if source not in cache:
                try:
                    cache[source] = calibrated_means(Path(source), calibration)
                except AnalysisError as error:
                    problems += error.problems
                    cache[source] = {}
            found = cache[source].get(component)
            if found is not None:
                row.calibrated[calibrated_label(name)] = found
    if problems:
        raise AnalysisError(list(dict.fromkeys(problems)))
    return {row.model: dict(row.calibrated) for row in rows}


def calibrated_cell(found: CalibratedMean | None) -> str:
    if found is None:
        return "—"
    interval = (
        ""
        if math.isnan(found.interval.lower)
        else (f" [{found.interval.lower:.3f}, {found.interval.upper:.3f}]")
    )
    return f"{found.mean:.3f}{interval} (n={found.cases})"


def add_calibrated_cases(run: Any, calibration: Calibration) -> None:
    """A compared run's per-case calibrated judge metrics, added to its values beside the
    raw ones (``compare`` then tests them as it tests the raw metrics)."""
    scores = calibrated_case_scores(run.path, log_header(run.path), calibration)
    for name, component in CALIBRATED_METRICS.items():
        if scores.get(component):
            run.values[calibrated_label(name)] = scores[component]
