"""Judge scores calibrated to people's ratings: ``medreason calibrate`` and the calibration file.

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
are reported before (the raw judge) and after (the cross-validated calibration), each with a
95% bootstrap interval over cases, and the change in error with its paired interval.

Too few ratings are refused: each component needs at least ``MIN_CASES`` (30) rated and
judged cases. Below that the five held-out folds hold five cases or fewer each and a step
of the fitted map rests on one or two ratings; the refusal says how many more to rate.

The calibration file records the judges it is valid for (their models by role, the digests
of their prompt templates, the panel reduction), the raters, the counts, the fit's own
figures and the map (its thresholds). Applying it (leaderboard and compare
``--calibration``) refuses a log judged by other judges or prompts, naming both; a score a
rule gave (an empty answer is 0) is not a judge's opinion and is kept as it is.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.log import EvalLog

from inspect_medreason.cli.agreement import (
    Estimate,
    bootstrap_estimate,
    quadratic_kappa,
    spearman,
)
from inspect_medreason.cli.challenge import ChallengeError
from inspect_medreason.cli.log_reading import (
    UnreadableSample,
    log_header,
    logged_samples,
    task_record,
)
from inspect_medreason.cli.rating import (
    RATED_COMPONENTS,
    SCORER,
    Candidate,
    RatingRound,
    map_round_to_logs,
)
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.intervals import Interval, bootstrap_interval, case_cluster
from inspect_medreason.core.judges import gate_visual_accuracy
from inspect_medreason.core.user_files import (
    MAX_CALIBRATION_BYTES,
    UserFileError,
    read_user_bytes,
)

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


def _identity_text(identity: dict[str, Any]) -> str:
    models = ", ".join(f"{role}={model}" for role, model in identity.get("models", {}).items())
    digests = ", ".join(
        f"{name}:{str(sha)[:12]}" for name, sha in identity.get("prompt_digests", {}).items()
    )
    return f"judges {models or '(none)'}; prompts {digests or '(none)'}; panel " + str(
        identity.get("panel_reduce")
    )


def identity_mismatch(expected: dict[str, Any], found: dict[str, Any]) -> list[str]:
    """What differs between two judge identities, one line per field."""
    return [
        f"{name}: calibrated for {expected.get(name)!r}, the log has {found.get(name)!r}"
        for name in ("models", "prompt_digests", "panel_reduce")
        if expected.get(name) != found.get(name)
    ]


@dataclass
class FitFigures:
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


def _half_up(values: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(values + 0.5), 0, 4).astype(np.int64)


def _figures(predicted: np.ndarray, target: np.ndarray) -> dict[str, Estimate]:
    def on(statistic: Any) -> Estimate:
        return bootstrap_estimate(lambda i: statistic(predicted[i], target[i]), len(target))

    return {
        "mae": on(lambda p, t: float(np.mean(np.abs(p - t)))),
        "spearman": on(spearman),
        "weighted_kappa": on(lambda p, t: quadratic_kappa(_half_up(p), _half_up(t))),
        "bias": on(lambda p, t: float(np.mean(p - t))),
    }


def _isotonic() -> Any:
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(y_min=0.0, y_max=4.0, increasing=True, out_of_bounds="clip")


def fit_component(
    component: str, judge: np.ndarray, people: np.ndarray, folds: int, seed: int
) -> FitFigures:
    """The map and its cross-validated figures (the module docstring)."""
    from sklearn.model_selection import KFold

    predicted = np.empty(len(judge))
    per_fold: list[dict[str, float | int]] = []
    splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    for number, (train, test) in enumerate(splitter.split(judge), 1):
        model = _isotonic().fit(judge[train], people[train])
        predicted[test] = model.predict(judge[test])
        per_fold.append(
            {
                "fold": number,
                "train_cases": len(train),
                "test_cases": len(test),
                "mae_before": float(np.mean(np.abs(judge[test] - people[test]))),
                "mae_after": float(np.mean(np.abs(predicted[test] - people[test]))),
            }
        )
    full = _isotonic().fit(judge, people)
    raw_error, fitted_error = np.abs(judge - people), np.abs(predicted - people)
    return FitFigures(
        component=component,
        cases=len(judge),
        judge=[float(x) for x in full.X_thresholds_],
        calibrated=[float(y) for y in full.y_thresholds_],
        before=_figures(judge, people),
        after=_figures(predicted, people),
        mae_change=bootstrap_estimate(
            lambda i: float(np.mean(fitted_error[i] - raw_error[i])), len(judge)
        ),
        folds=per_fold,
        people_mean=float(np.mean(people)),
        judge_mean=float(np.mean(judge)),
    )


def _people_scores(people: RatingRound, case: str) -> dict[str, list[float]]:
    scores: dict[str, list[float]] = defaultdict(list)
    for by_case in people.scores.values():
        given = by_case.get(case)
        if given is None:
            continue
        for key, component in RATED_COMPONENTS.items():
            scores[component].append(float(given[key]))
        scores["va_final"].append(float(gate_visual_accuracy(given["va"], given["rvf"])))
    return scores


def pairs_for_fit(
    people: RatingRound, mapping: dict[str, Candidate]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per component, the judge's score and the people's mean rating on every case both
    scored (a component a rule scored is left out: no judge's opinion to map)."""
    judge: dict[str, list[float]] = defaultdict(list)
    target: dict[str, list[float]] = defaultdict(list)
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
    return {c: (np.array(judge[c]), np.array(target[c])) for c in COMPONENTS}


def calibrate(
    logs: Sequence[Path], people: RatingRound, folds: int = FOLDS, seed: int = 0
) -> tuple[dict[str, Any], list[FitFigures], list[str]]:
    """The calibration document, its figures per component, and notes. Raises
    ChallengeError for too few ratings or logs judged by different judges."""
    if not 2 <= folds <= MIN_CASES:
        raise ChallengeError([f"--folds {folds}: give 2 to {MIN_CASES} folds"])
    mapping, notes = map_round_to_logs(people, logs)
    identities: dict[str, tuple[dict[str, Any], list[Path]]] = {}
    for path in sorted({c.path for c in mapping.values()}):
        identity = judge_identity(log_header(path))
        key = json.dumps(identity, sort_keys=True)
        identities.setdefault(key, (identity, []))[1].append(path)
    if len(identities) > 1:
        raise ChallengeError(
            [
                "the rated cases were judged by different judges or prompts; calibrate one "
                "set of judges at a time:",
                *(
                    f"{', '.join(map(str, paths))}: {_identity_text(identity)}"
                    for identity, paths in identities.values()
                ),
            ]
        )
    [(identity, _)] = identities.values()
    data = pairs_for_fit(people, mapping)
    short = [
        f"{component}: {len(data[component][0])} case(s) rated by people and scored by the "
        f"judges; a stable fit needs at least {MIN_CASES}: rate {MIN_CASES - len(data[component][0])} "
        "more (a new page with more --cases, the same raters)"
        for component in COMPONENTS
        if len(data[component][0]) < MIN_CASES
    ]
    if short:
        raise ChallengeError(short)
    results = [fit_component(c, *data[c], folds, seed) for c in COMPONENTS]
    document = {
        "format": CALIBRATION_FORMAT,
        "version": CALIBRATION_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "page_id": people.page_id,
        "judges": identity,
        "raters": sorted(people.scores),
        "rater_count": len(people.scores),
        "method": {
            "fit": "sklearn.isotonic.IsotonicRegression(increasing=True, y_min=0, y_max=4, "
            "out_of_bounds='clip'), judge score -> the people's mean rating",
            "apply": "linear interpolation between the thresholds, clipped at the ends "
            "(what IsotonicRegression.predict does); scores given by rule kept",
            "cross_validation": f"KFold(n_splits={folds}, shuffle=True, random_state={seed})",
            "intervals": "95% percentile bootstrap over cases, 1,000 resamples, fixed seed",
            "min_cases": MIN_CASES,
        },
        "components": {r.component: _component_document(r) for r in results},
    }
    return document, results, notes


def _component_document(result: FitFigures) -> dict[str, Any]:
    return {
        "cases": result.cases,
        "map": {"judge": result.judge, "calibrated": result.calibrated},
        "people_mean": result.people_mean,
        "judge_mean": result.judge_mean,
        "cross_validated": {
            "before": {name: e.as_dict() for name, e in result.before.items()},
            "after": {name: e.as_dict() for name, e in result.after.items()},
            "mae_change": result.mae_change.as_dict(),
            "folds": result.folds,
        },
    }


def _cell(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "—"
    low, high = estimate.interval.lower, estimate.interval.upper
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return f"{estimate.value:.2f}{interval}"


def render_report(document: dict[str, Any], results: list[FitFigures], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(document, indent=2) + "\n"
    lines = [
        "# Judge calibration",
        "",
        f"{document['rater_count']} rater(s): {', '.join(document['raters'])}; "
        f"{_identity_text(document['judges'])}.",
        "",
        "Cross-validated against the people's mean rating (before: the raw judge; after: the "
        "calibrated judge, each case predicted by a map fitted without it):",
        "",
        "| component | cases | MAE before | MAE after | change | Spearman before | Spearman "
        "after | κ before | κ after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.component} | {r.cases} | {_cell(r.before['mae'])} | {_cell(r.after['mae'])} "
            f"| {_cell(r.mae_change)} | {_cell(r.before['spearman'])} | "
            f"{_cell(r.after['spearman'])} | {_cell(r.before['weighted_kappa'])} | "
            f"{_cell(r.after['weighted_kappa'])} |"
        )
    lines += ["", "The fitted maps (judge score → calibrated score):", ""]
    for r in results:
        steps = ", ".join(f"{x:g}→{y:.2f}" for x, y in zip(r.judge, r.calibrated, strict=True))
        lines.append(
            f"- {r.component}: {steps} (judge mean {r.judge_mean:.2f}, people {r.people_mean:.2f})"
        )
    lines += [
        "",
        "[a, b] = 95% bootstrap interval over cases (1,000 resamples, fixed seed); κ: "
        "quadratic-weighted, scores rounded half up.",
    ]
    return "\n".join(lines) + "\n"


@dataclass
class Calibration:
    """A calibration file, read and checked."""

    path: Path
    judges: dict[str, Any]
    maps: dict[str, tuple[np.ndarray, np.ndarray]]
    rater_count: int

    def apply(self, component: str, values: np.ndarray) -> np.ndarray:
        judge, calibrated = self.maps[component]
        return np.interp(values, judge, calibrated)


def read_calibration(path: Path) -> Calibration:
    """A calibration file, every problem named (never a traceback)."""
    problems: list[str] = []
    try:
        # a regular file within the limit, never a FIFO or a link to a device
        data = read_user_bytes(path, MAX_CALIBRATION_BYTES, "calibration file")
        document = json.loads(data.decode("utf-8"))
    except UserFileError as error:
        raise ChallengeError([str(error)]) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ChallengeError(
            [f"{path}: not a readable JSON file ({describe_error(error, 200)})"]
        ) from error
    except RecursionError as error:
        raise ChallengeError([f"{path}: JSON nested too deeply to read"]) from error
    if not isinstance(document, dict) or document.get("format") != CALIBRATION_FORMAT:
        raise ChallengeError([f"{path}: not a calibration file written by medreason calibrate"])
    if document.get("version") != CALIBRATION_VERSION:
        problems.append(
            f"{path}: version {document.get('version')!r}; this medreason reads version "
            f"{CALIBRATION_VERSION}"
        )
    judges = document.get("judges")
    if not isinstance(judges, dict) or not isinstance(judges.get("models"), dict):
        problems.append(f"{path}: judges: not the record of the judges it is valid for")
    components = document.get("components")
    maps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for component in COMPONENTS:
        entry = components.get(component) if isinstance(components, dict) else None
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
            continue
        x, y = np.array(judge, dtype=float), np.array(calibrated, dtype=float)
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
            problems.append(
                f"{path}: components.{component}.map: not a monotone map (judge scores must "
                "increase, calibrated ones never decrease)"
            )
            continue
        maps[component] = (x, y)
    count = document.get("rater_count")
    if type(count) is not int or count < 1:
        problems.append(f"{path}: rater_count is {count!r}, not a number of raters")
    if problems:
        raise ChallengeError(problems)
    assert isinstance(judges, dict) and isinstance(count, int)
    return Calibration(path, judges, maps, count)


def _numbers(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 4 for v in value
        )
    )


@dataclass
class CalibratedMean:
    mean: float
    interval: Interval
    cases: int


def calibrated_case_scores(
    path: Path, header: EvalLog, calibration: Calibration
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Per component, each case's calibrated score (epochs averaged, as the leaderboard's
    per-case values), and each case's image cluster. Raises ChallengeError when the log's
    judges are not the ones calibrated."""
    found = judge_identity(header)
    differences = identity_mismatch(calibration.judges, found)
    if differences:
        raise ChallengeError(
            [
                f"{path}: judged by other judges or prompts than {calibration.path} was "
                f"calibrated for ({_identity_text(calibration.judges)}; the log: "
                f"{_identity_text(found)})",
                *differences,
            ]
        )
    per_case: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
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
            mapped = (
                float(value)
                if by_rule
                else float(calibration.apply(component, np.array([value]))[0])
            )
            per_case[component][case].append(mapped)
    return (
        {
            c: {case: float(np.mean(v)) for case, v in cases.items()}
            for c, cases in per_case.items()
        },
        clusters,
    )


def calibrated_means(path: Path, calibration: Calibration) -> dict[str, CalibratedMean]:
    """Each component's calibrated mean over a log's cases, with its image-cluster bootstrap
    interval (the same interval the raw means carry)."""
    scores, clusters = calibrated_case_scores(path, log_header(path), calibration)
    result: dict[str, CalibratedMean] = {}
    for component, by_case in scores.items():
        cases = sorted(by_case)
        values = [by_case[c] for c in cases]
        result[component] = CalibratedMean(
            float(np.mean(values)),
            bootstrap_interval(values, [clusters[c] for c in cases]),
            len(cases),
        )
    return result


# The leaderboard's judge metrics and the component each one averages.
CALIBRATED_METRICS = {"Open-ended GT": "gt_final", "Open-ended VA": "va_final"}


def calibrated_label(name: str) -> str:
    return f"{name} (calibrated)"


def add_calibrated_means(
    rows: Sequence[Any], calibration: Calibration
) -> dict[str, dict[str, CalibratedMean]]:
    """Per row (by model label), each judge metric's calibrated mean from the log the raw
    metric came from (``row.sources``); stored on the row as ``row.calibrated`` and never in
    place of the raw metric. Raises ChallengeError when a log's judges are not the ones
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
                except ChallengeError as error:
                    problems += error.problems
                    cache[source] = {}
            found = cache[source].get(component)
            if found is not None:
                row.calibrated[calibrated_label(name)] = found
    if problems:
        raise ChallengeError(list(dict.fromkeys(problems)))
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
    scores, _ = calibrated_case_scores(run.path, log_header(run.path), calibration)
    for name, component in CALIBRATED_METRICS.items():
        if scores.get(component):
            run.values[calibrated_label(name)] = scores[component]
