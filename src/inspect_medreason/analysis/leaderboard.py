"""Comparing models the way the challenge ranks them, without ever mixing runs.

Three metrics (higher is better): MCQ Accuracy, Open-ended GT, Open-ended VA. Each model is
ranked on each metric (1 = best; ties share the average rank, the standard "average rank"
rule: the challenge states no tie rule), the overall order is by the mean of the three ranks
(the challenge's "average of the per-metric ranks"), ties again sharing the average rank.
A model without a metric is ranked after every model that has it, and the table says so.

A row is one experiment: a model plus every setting that changes a number (data files,
images shown or withheld, prompts, extraction mode, option shuffling, judges and their
settings, generation settings, epochs). Logs are combined into a row only when they agree
on all of these (an MCQ log and an open-ended log of the same experiment make one row).
Rows are ranked only against rows over the same data files. A run over part of the cases
(``--limit``, ``--sample-id``, or one that did not finish) is left out with a note, or,
with ``include_partial``, shown as its own unranked row marked partial. When several runs
of one configuration exist, the newest is used and the note names the others.

:func:`rank_models` reads, ranks and (optionally) calibrates and resamples the rows;
``cli/leaderboard.py`` is the ``medreason leaderboard`` command around it.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import inspect
import io
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from inspect_ai.log import EvalLog

from inspect_medreason.analysis.calibration import (
    add_calibrated_means,
    calibrated_cell,
    read_calibration,
)
from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import METRIC_NAMES
from inspect_medreason.analysis.figures import png_bytes, pyplot
from inspect_medreason.analysis.judgings import (
    MCQ_SCORER,
    OPEN_SCORER,
    Judging,
    is_score_of,
    read_judging,
    score_names,
)
from inspect_medreason.analysis.logs import (
    JudgesRecord,
    PathArg,
    Progress,
    TemplateRecord,
    log_files,
    medreason_headers,
    no_progress,
    task_record,
)
from inspect_medreason.analysis.markdown import markdown_row, markdown_text
from inspect_medreason.analysis.score_values import left_out, read_score
from inspect_medreason.core import strict_json
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.intervals import SEED, cluster_indices, clustered_mean_interval
from inspect_medreason.core.judges import bound_role_models
from inspect_medreason.core.lineage import role_lineage

if TYPE_CHECKING:
    import pandas

    from inspect_medreason.analysis.comparison import RunCases

__all__ = [
    "Leaderboard",
    "ModelRow",
    "RankStability",
    "collect_rows",
    "plot_png",
    "rank_models",
    "rank_rows",
    "rank_stability",
    "render",
]

# Where each leaderboard metric lives in a log, the first source found wins: (score name,
# metric name, the Inspect group of its interval). A score is found under the scorer it
# names (``open_ended_scorer1`` for an appended judging). MCQ accuracy is the mcq_scorer
# score's own metric (Inspect's scored-sample count, ``lower``/``upper`` of image_ci,
# breakdowns ``accuracy by field:value``). A judge component has two layouts:
# - since 2026-11-28, and before 2026-11-24, Inspect's for a dictionary score: a score of
#   its own named for the component (``gt_final``: ``mean``, ``stderr``,
#   ``image_ci``'s ``lower``/``upper``, its unscored cases in Inspect's count), with the
#   breakdowns ``gt_final by modality:CT`` among the scorer's own score's metrics (before
#   2026-11-24 they were ``grouped_modality:CT`` in the component's score);
# - from 2026-11-24 to 2026-11-28, metrics of the one open_ended_scorer score (group None):
#   ``gt_final`` with ``gt_final_unscored``, ``gt_final_lower``/``_upper`` and
#   ``gt_final by modality:CT`` beside it.
METRIC_SOURCES: dict[str, list[tuple[str, str, str | None]]] = {
    "MCQ Accuracy": [("mcq_scorer", "accuracy", "image_ci")],
    "Open-ended GT": [
        ("gt_final", "mean", "image_ci"),
        ("open_ended_scorer", "gt_final", None),
    ],
    "Open-ended VA": [
        ("va_final", "mean", "image_ci"),
        ("open_ended_scorer", "va_final", None),
    ],
}
# The intervals logs held before they counted images (0.1.0, issue 61): Inspect's Wilson
# interval per case for MCQ, and a cluster percentile bootstrap, which covered 0.92 at 25
# images, for the judge metrics. Not shown as if they were today's: the row says why.
CASE_INTERVALS = ("ci_wilson", "bootstrap_ci")
RECOUNTED_INTERVAL = (
    "{metric}: interval counted from {path}'s cases: the log was written before intervals "
    "counted images (its {kind} does not)"
)
OLD_INTERVAL = (
    "{metric}: no interval shown: {path} was written before intervals counted images (its "
    "{kind} does not), and its cases could not be counted again ({reason})"
)
# How Inspect names a grouped() breakdown in a dictionary score and in a list of metrics.
BREAKDOWN_PREFIXES = ("grouped_", "accuracy by ", "inspect_medreason/breakdown_")
# Generation settings that decide how a run is executed, not what it answers.
EXECUTION_ONLY = {
    "max_retries",
    "timeout",
    "attempt_timeout",
    "stream_idle_timeout",
    "max_connections",
    "adaptive_connections",
    "cache",
    "batch",
    "cache_prompt",
    "extra_headers",
}


@dataclass
class RunSettings:
    """What a log's numbers depend on, split by what both tracks share and each track's own."""

    dataset: dict[str, Any]
    common: dict[str, Any]
    tracks: dict[str, dict[str, Any]]
    partial: str | None  # why the run covers only part of its cases


@dataclass(frozen=True)
class LoggedMetric:
    """One leaderboard metric as a log holds it."""

    value: float
    cases: int
    breakdown: dict[str, float]
    interval: tuple[float, float] | None
    old_interval: str = ""  # the kind of interval an older log held instead (CASE_INTERVALS)


@dataclass
class LogMetrics:
    path: Path
    created: tuple[str, int]
    model: str
    settings: RunSettings
    metrics: dict[str, LoggedMetric]
    lineage: list[str]
    scores: dict[str, str] = field(default_factory=dict)  # metric -> a re-judging's score


@dataclass
class RankStability:
    """How often a row holds each overall position when the cases are resampled."""

    resamples: int
    shares: dict[int, float]  # position (competition ranking: ties share the best) -> share
    interval: tuple[float, float]  # 2.5th and 97.5th percentile of the position

    def describe(self) -> str:
        shares = ", ".join(f"{pos}: {share:.0%}" for pos, share in sorted(self.shares.items()))
        return f"{self.interval[0]:g}–{self.interval[1]:g} ({shares})"


@dataclass
class ModelRow:
    """One experiment's metrics, ranks and where they came from."""

    model: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    ranks: dict[str, float] = field(default_factory=dict)
    mean_rank: float = 0.0
    position: float | None = 0.0
    sources: dict[str, str] = field(default_factory=dict)
    # the score each metric was read from, where it is not the scorer's own (a re-judging:
    # open_ended_scorer1); what --bootstrap reads the cases of
    scores: dict[str, str] = field(default_factory=dict)
    breakdown: dict[str, dict[str, float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)  # 95%
    stability: RankStability | None = None
    dataset: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    partial: str | None = None
    notes: list[str] = field(default_factory=list)
    # Judges of the tested model's lineage in any log of the row (core.lineage).
    lineage: list[str] = field(default_factory=list)
    # "<metric> (calibrated)" -> calibration.CalibratedMean, with --calibration; beside the
    # raw metrics, never in their place (ranks use the raw ones)
    calibrated: dict[str, Any] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        return [name for name in METRIC_NAMES if self.metrics.get(name) is None]


@dataclass(repr=False)
class Leaderboard(NotebookDisplay):
    """The ranked rows (one per experiment, in leaderboard order once ranked) and the notes
    on what was left out, combined or calibrated, as the report lists them."""

    rows: list[ModelRow]
    notes: list[str]

    def display_summary(self) -> str:
        top = ", ".join(row.model for row in self.rows[:3])
        more = f" and {len(self.rows) - 3} more" if len(self.rows) > 3 else ""
        return f"{len(self.rows)} experiment(s), in order: {top}{more}; {len(self.notes)} note(s)"

    def display_notes(self) -> list[str]:
        return list(self.notes)

    def render(self, fmt: str = "md", breakdown: bool = False) -> str:
        """The report as ``medreason leaderboard`` writes it: ``fmt`` is md, csv, json or
        html; ``breakdown`` adds per-category results."""
        return render(self, fmt, breakdown)

    def to_markdown(self, breakdown: bool = False) -> str:
        """The Markdown report (the table, the ranking rule and the notes)."""
        return render(self, "md", breakdown)

    def plot_png(self) -> bytes:
        """The three metrics side by side per model, as PNG bytes."""
        return plot_png(self.rows)

    def to_pandas(self) -> pandas.DataFrame:
        """One row per experiment, in leaderboard order: dataset, position (None: a partial
        run, unranked), model, partial, and per metric its value, 95% interval (lower,
        upper), cases scored (n) and rank; then the mean rank, the metrics missing, the
        judge lineage warnings, and the calibrated metrics when calibrated."""
        import pandas

        return pandas.DataFrame([_frame_row(row) for row in self.rows])


def _frame_row(row: ModelRow) -> dict[str, Any]:
    frame: dict[str, Any] = {
        "dataset": row.dataset,
        "position": row.position,
        "model": row.model,
        "partial": row.partial,
    }
    for name in METRIC_NAMES:
        interval = row.intervals.get(name)
        frame[name] = row.metrics.get(name)
        frame[f"{name} lower"] = interval[0] if interval else None
        frame[f"{name} upper"] = interval[1] if interval else None
        frame[f"n {name}"] = row.counts.get(name)
        frame[f"rank {name}"] = row.ranks.get(name)
    frame["mean rank"] = row.mean_rank if row.position is not None else None
    frame["missing"] = ", ".join(row.missing)
    frame["judge lineage"] = "; ".join(row.lineage)
    for name, found in sorted(row.calibrated.items()):
        frame[name] = found.mean
        frame[f"{name} lower"] = found.interval.lower
        frame[f"{name} upper"] = found.interval.upper
    return frame


def rank_models(
    logs: Iterable[PathArg],
    label_args: Iterable[str] = (),
    include_partial: bool = False,
    scorer: str | None = None,
    reducer: str | None = None,
    calibration: PathArg | None = None,
    bootstrap: int = 0,
    on_note: Callable[[str], None] | None = None,
    progress: Progress = no_progress,
) -> Leaderboard:
    """The challenge's leaderboard of the runs in ``logs`` (log files or folders): one row
    per experiment (see the module docstring), ranked within each dataset.

    ``label_args`` keeps runs apart by these task arguments; ``include_partial`` shows runs
    over part of the cases as unranked rows; ``scorer`` and ``reducer`` keep one judging or
    one epoch reducer of a run; ``calibration`` (a ``medreason calibrate`` file) adds the
    calibrated judge metrics beside the raw ones; ``bootstrap`` resamples the cases that
    many times for each row's rank stability. ``on_note`` is called with each note as it is
    found (the command prints them as it works); every note is also in the result;
    ``progress`` shows the reading of the log headers. Raises :class:`AnalysisError` when no
    log holds MedReason metrics."""
    skipped: list[str] = []
    files = log_files(logs, skipped)
    board = collect_rows(files, list(label_args), include_partial, scorer, reducer, progress)
    board.notes[:0] = skipped
    _tell(on_note, board.notes)
    if not board.rows:
        raise AnalysisError(["no successful, complete eval log with MedReason metrics found"])
    board.rows = rank_rows(board.rows)
    if calibration:
        _add_calibration(board, calibration)
    if bootstrap:
        stability_notes = rank_stability(board.rows, bootstrap)
        _tell(on_note, stability_notes)
        board.notes += stability_notes
    return board


def _tell(on_note: Callable[[str], None] | None, notes: list[str]) -> None:
    if on_note is not None:
        for note in notes:
            on_note(note)


def _add_calibration(board: Leaderboard, path: PathArg) -> None:
    """The calibrated judge metrics beside the raw ones, and the notes that say how (naming
    the file as it was given)."""
    calibration = read_calibration(Path(path))
    # calibration reads each case's first judging: a re-judging's row is not calibrated
    rejudged = [row for row in board.rows if row.scores]
    add_calibrated_means([row for row in board.rows if not row.scores], calibration)
    board.notes.extend(
        f"{row.model}: not calibrated, its numbers are a re-judging's "
        f"({', '.join(sorted(set(row.scores.values())))})"
        for row in rejudged
    )
    board.notes.append(
        f"(calibrated) columns: the judges' scores mapped to {calibration.rater_count} "
        f"rater(s)' ratings by {path}; ranks use the raw metrics"
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _config(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    values = config.model_dump(exclude_none=True) if hasattr(config, "model_dump") else dict(config)
    return {key: value for key, value in values.items() if key not in EXECUTION_ONLY}


def _role(config: Any) -> Any:
    """A judge role as the log records it, without settings that only affect execution."""
    if isinstance(config, list):
        return [_role(item) for item in config]
    dumped = config.model_dump(exclude_none=True)
    dumped["config"] = _config(config.config)
    return dumped


def _prompt_digests(prompts: dict[str, TemplateRecord], prefix: str) -> dict[str, str]:
    return {
        name: record.sha256 or "" for name, record in prompts.items() if name.startswith(prefix)
    }


# Judge settings that size concurrency and change no number: runs that differ only there
# are one configuration (and logs from before a setting existed match the ones after).
CONCURRENCY_SETTINGS = frozenset({"max_connections"})
# Judge settings recorded only since a later version, with the behaviour every run had
# before: a log without them ran with these (judge_failure came with issue 53).
SETTINGS_BEFORE_RECORDED = {"failure": "unscored"}


def run_settings(
    log: EvalLog,
    judging: Judging | None = None,
    reducer: str | None = None,
    mcq_score: str = MCQ_SCORER,
) -> RunSettings:
    """Every setting of a log that changes its numbers: with ``judging``, the open track's
    judges as its cases record them (a re-judged log's header still names the first
    judges); with ``reducer``, the one epoch reducer its numbers are read under."""
    record = task_record(log)  # checked when the header was read (medreason_headers)
    dataset = {
        # by name (an old log recorded its local path; the digest says which data it is)
        "cases": Path(record.data.cases_file).name
        if record.data.cases_file
        else log.eval.dataset.location,
        "cases_sha256": record.data.cases_sha256,
        "ground_truth_sha256": record.data.ground_truth_sha256,
    }
    config = log.eval.config
    common = {
        "images": record.images
        if record.images is not None
        else (log.eval.task_args or {}).get("images", True),
        "model_args": log.eval.model_args or {},
        "generate": {
            **_config(log.plan.config if log.plan else None),
            **_config(log.eval.model_generate_config),
        },
        "epochs": config.epochs or 1,
        "epochs_reducer": [reducer] if reducer is not None else config.epochs_reducer,
    }
    prompts = record.prompts
    tracks: dict[str, dict[str, Any]] = {}
    scores = {score.name for score in (log.results.scores if log.results else [])}
    if mcq_score in scores:
        tracks["mcq"] = {
            "shuffle_choices": record.shuffle_choices,
            "shuffle_seed": record.shuffle_seed,
            "extraction": record.extraction.mode,
            "prompts": _prompt_digests(prompts, "mcq_"),
            **({"scorer": mcq_score} if mcq_score != MCQ_SCORER else {}),
        }
    if judging is not None:
        tracks["open"] = {
            **({"scorer": judging.scorer} if judging.scorer != OPEN_SCORER else {}),
            **judging.settings(),
            "judge_settings": _scorer_options(log, judging.scorer),
            "prompts": _prompt_digests(prompts, "open_"),
        }
    elif "open_ended_scorer" in scores or "gt_final" in scores:  # before 2026-11-24 too
        judges = record.judges or JudgesRecord()
        roles = {role: _role(cfg) for role, cfg in (log.eval.model_roles or {}).items()}
        tracks["open"] = {
            "judges": roles,
            "judge_settings": {
                name: value
                for name, value in {**SETTINGS_BEFORE_RECORDED, **judges.settings}.items()
                if name not in CONCURRENCY_SETTINGS
            },
            "panel_reduce": judges.panel_reduce,
            "judge_templates": {
                name: template.sha256 for name, template in judges.templates.items()
            },
            "prompts": _prompt_digests(prompts, "open_"),
        }
    return RunSettings(dataset, common, tracks, _partial(log, config))


# Scorer arguments that change no number: where images are read from (a folder, or the key
# of the one the run loaded), how many calls at once.
EXECUTION_ONLY_SCORER_ARGS = frozenset({"data_dir", "data_key", "judge_max_connections"})


def _scorer_options(log: EvalLog, score: str) -> dict[str, Any]:
    """The arguments the judging ``score`` was scored with, defaults filled in (the task
    passes every argument; ``inspect score`` only those given with ``-S``).

    Inspect names the k-th score of one scorer ``open_ended_scorer``, then
    ``open_ended_scorer1``, ...; the header lists the scorers in the same order, each under
    the scorer's own name."""
    from inspect_medreason.medreason.scorer import open_ended_scorer

    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(open_ended_scorer).parameters.items()
    }
    listed = [s for s in log.eval.scorers or [] if is_score_of(s.name, OPEN_SCORER)]
    names = score_names(log, OPEN_SCORER)
    index = names.index(score) if score in names else -1
    options = (listed[index].options or {}) if 0 <= index < len(listed) else {}
    return {
        name: value
        for name, value in {**defaults, **options}.items()
        if name not in EXECUTION_ONLY_SCORER_ARGS
    }


# The roles the open-ended track judges with, which allow_self_judging leaves to the model
# under test when they are not bound.
OPEN_JUDGE_ROLES = ("grader", "vision_grader")


def log_judge_lineage(log: EvalLog) -> list[str]:
    """Each judge of the log that is the model under test or of its family, as it reads
    beside the row (the run warned of the same when it judged)."""
    bound = bound_role_models(log.eval.model_roles or {})
    self_judging = str((log.eval.task_args or {}).get("allow_self_judging", "")).lower()
    self_judged = (
        [role for role in OPEN_JUDGE_ROLES if role not in (log.eval.model_roles or {})]
        if self_judging in {"true", "1", "yes"}
        else []
    )
    return [
        f"{warning.role} {warning.judge} {warning.relation}"
        for warning in role_lineage(log.eval.model, bound, self_judged)
    ]


def _partial(log: EvalLog, config: Any) -> str | None:
    if config.sample_id is not None:
        return f"--sample-id {config.sample_id}"
    total = log.eval.dataset.samples
    done = log.results.completed_samples if log.results else 0
    epochs = config.epochs or 1
    if total is not None and done < total * epochs:
        reason = f"--limit {config.limit}" if config.limit is not None else "unfinished"
        return f"{done // epochs} of {total} cases ({reason})"
    return None


def logged_metric(
    log: EvalLog, name: str, scorer: str | None = None, reducer: str | None = None
) -> LoggedMetric | None:
    """Leaderboard metric ``name`` from the log's results, in either layout; None when the
    log has none or it is NaN (nothing scored). ``scorer`` names the score of its track to
    read when a log holds several (a re-judging appended as ``open_ended_scorer1``),
    ``reducer`` the epoch reducer when the run had several (``--epochs-reducer mean,max``
    logs one score per reducer)."""
    scores = log.results.scores if log.results else []
    base = MCQ_SCORER if name == "MCQ Accuracy" else OPEN_SCORER
    judging = scorer if scorer is not None and is_score_of(scorer, base) else base

    def found(score: Any, score_name: str) -> bool:
        return (
            score.name == score_name
            and score.scorer == judging
            and (reducer is None or score.reducer in (reducer, None))
        )

    for score_name, metric_name, interval_group in METRIC_SOURCES[name]:
        wanted = judging if score_name == base else score_name
        for score in scores:
            metric = score.metrics.get(metric_name)
            if not found(score, wanted) or metric is None or metric.value != metric.value:
                continue
            if interval_group is not None:  # a score of its own
                breakdown = _breakdown(score.metrics, BREAKDOWN_PREFIXES)
                if wanted != judging:  # a component: its breakdowns are the scorer's own
                    breakdown |= next(
                        (
                            _breakdown(own.metrics, (f"{wanted} by ",), only_prefixed=True)
                            for own in scores
                            if found(own, judging) and own.reducer == score.reducer
                        ),
                        {},
                    )
                interval = _interval(score.metrics, group=interval_group)
                old = next(
                    (
                        kind
                        for kind in CASE_INTERVALS
                        if interval is None and _interval(score.metrics, group=kind)
                    ),
                    "",
                )
                return LoggedMetric(
                    float(metric.value), int(score.scored_samples or 0), breakdown, interval, old
                )
            unscored = score.metrics.get(f"{metric_name}_unscored")
            # this layout's lower/upper (2026-11-24 to 28) were the cluster bootstrap's
            old = "bootstrap" if _interval(score.metrics, prefix=f"{metric_name}_") else ""
            return LoggedMetric(
                float(metric.value),
                int(score.scored_samples or 0) - int(unscored.value if unscored else 0),
                _breakdown(score.metrics, (f"{metric_name} by ",), only_prefixed=True),
                None,
                old,
            )
    return None


def _breakdown(
    metrics: dict[str, Any], prefixes: tuple[str, ...], only_prefixed: bool = False
) -> dict[str, float]:
    """Breakdown metrics are the ones named "field:value" (e.g. "modality:CT"), after a
    prefix naming the breakdown."""
    found: dict[str, float] = {}
    for key, metric in metrics.items():
        if ":" not in key or (only_prefixed and not key.startswith(prefixes)):
            continue
        category = key
        for prefix in prefixes:
            category = category.removeprefix(prefix)
        found[category] = float(metric.value)
    return found


def _interval(
    metrics: dict[str, Any], group: str | None = None, prefix: str | None = None
) -> tuple[float, float] | None:
    """The 95% interval: metrics ``lower``/``upper`` of Inspect group ``group`` (a metric
    returning a dictionary), or ``{prefix}lower``/``{prefix}upper``; none for logs written
    before the intervals were."""
    if prefix is not None:
        lower_metric, upper_metric = metrics.get(f"{prefix}lower"), metrics.get(f"{prefix}upper")
        lower = lower_metric.value if lower_metric else None
        upper = upper_metric.value if upper_metric else None
    else:
        bounds = {m.name: m.value for m in metrics.values() if getattr(m, "group", None) == group}
        lower, upper = bounds.get("lower"), bounds.get("upper")
    if lower is None or upper is None or lower != lower or upper != upper:
        return None
    return float(lower), float(upper)


def _compatible(row: dict[str, Any], item: LogMetrics) -> bool:
    """Same experiment: the same dataset, shared settings and partial state, and equal
    settings for every track both have."""
    if row["dataset"] != item.settings.dataset or row["common"] != item.settings.common:
        return False
    if row["partial"] != item.settings.partial:
        return False
    return all(
        row["tracks"][track] == settings
        for track, settings in item.settings.tracks.items()
        if track in row["tracks"]
    )


def _row_name(model: str, label_args: list[str], task_args: dict[str, Any]) -> str:
    if not label_args:
        return model
    return f"{model} [" + ", ".join(f"{a}={task_args.get(a)}" for a in label_args) + "]"


def _log_items(
    path: Path,
    log: EvalLog,
    label_args: list[str],
    include_partial: bool,
    scorer: str | None,
    reducer: str | None,
    notes: list[str],
) -> list[LogMetrics]:
    """A log's candidate rows: one per judging and per epoch reducer it holds (or only the
    ones ``scorer`` and ``reducer`` name); what is left out is noted, never dropped
    silently."""
    tracks = {"mcq": score_names(log, MCQ_SCORER), "open": score_names(log, OPEN_SCORER)}
    if scorer is not None:
        track = "mcq" if is_score_of(scorer, MCQ_SCORER) else "open"
        if tracks[track] and scorer not in tracks[track]:
            notes.append(
                f"{path}: left out, no score {scorer!r}; its {track} scores are "
                + ", ".join(repr(name) for name in tracks[track])
            )
            return []
        tracks[track] = [name for name in tracks[track] if name == scorer]
    scores = log.results.scores if log.results else []
    reducers = list(dict.fromkeys(s.reducer for s in scores if s.reducer is not None))
    if reducer is not None and reducers and reducer not in reducers:
        notes.append(
            f"{path}: left out, not reduced by {reducer!r} (its epoch reducers: "
            + ", ".join(reducers)
            + ")"
        )
        return []
    variants: list[str | None] = (
        [reducer]
        if reducer is not None and reducers
        else list(reducers)
        if len(reducers) > 1
        else [None]
    )
    if reducer is None and len(reducers) > 1:
        notes.append(
            f"{path}: reduced {len(reducers)} ways over its epochs ({', '.join(reducers)}): "
            "a row for each (--reducer shows one)"
        )
    # None: no judging to read (an MCQ log, or the per-component scores before 2026-11-24)
    read = [read_judging(path, log, name) for name in tracks["open"]]
    for found in read:
        notes.extend(f"{path}: {problem}" for problem in found.unreadable)
    judgings: list[Judging | None] = [*read] or [None]
    if len(tracks["open"]) > 1:
        notes.append(
            f"{path}: judged {len(tracks['open'])} times ("
            + ", ".join(tracks["open"])
            + "): a row for each (--scorer shows one)"
        )
    items: list[LogMetrics] = []
    for mcq_score in tracks["mcq"] or [MCQ_SCORER]:
        for judging in judgings:
            for variant in variants:
                open_score = judging.scorer if judging is not None else None
                metrics: dict[str, LoggedMetric] = {}
                for name in METRIC_SOURCES:
                    chosen = mcq_score if name == "MCQ Accuracy" else open_score
                    logged = logged_metric(log, name, chosen, variant)
                    if logged is None:
                        continue
                    # a mean no run can give (an edited header): named and left out
                    problem = read_score(name, logged.value).problem
                    if problem is not None:
                        notes.append(left_out(str(path), problem))
                        continue
                    metrics[name] = logged
                if not metrics:
                    continue
                settings = run_settings(log, judging, variant, mcq_score)
                if settings.partial and not include_partial:
                    notes.append(
                        f"{path}: left out, a partial run ({settings.partial}); "
                        "--include-partial shows it as its own row"
                    )
                    return []
                lineage = (
                    judging.lineage(log.eval.model)
                    if judging is not None
                    else log_judge_lineage(log)
                    if "open" in settings.tracks
                    else []
                )
                items.append(
                    LogMetrics(
                        path,
                        (log.eval.created, path.stat().st_mtime_ns),
                        _row_name(log.eval.model, label_args, log.eval.task_args or {}),
                        settings,
                        metrics,
                        lineage,
                        {
                            name: chosen
                            for name in metrics
                            if (chosen := mcq_score if name == "MCQ Accuracy" else open_score)
                            not in (None, MCQ_SCORER, OPEN_SCORER)
                        },
                    )
                )
    return items


def collect_rows(
    logs: list[Path],
    label_args: list[str] | None = None,
    include_partial: bool = False,
    scorer: str | None = None,
    reducer: str | None = None,
    progress: Progress = no_progress,
) -> Leaderboard:
    """One row per experiment; see the module docstring for how logs combine.

    A log judged several times (``inspect score --action append``) gives a row per
    judging, or only the one ``scorer`` names; a run reduced several ways
    (``--epochs-reducer mean,max``) a row per reducer, or only ``reducer``'s. Judges and
    their lineage are read from the cases' judge records of the score used."""
    if scorer is not None and not (
        is_score_of(scorer, MCQ_SCORER) or is_score_of(scorer, OPEN_SCORER)
    ):
        raise AnalysisError(
            [
                f"--scorer {scorer!r}: the leaderboard reads {MCQ_SCORER!r} and "
                f"{OPEN_SCORER!r} scores (and their re-judgings, {OPEN_SCORER}1, ...)"
            ]
        )
    notes: list[str] = []
    items: list[LogMetrics] = []
    for path, log in medreason_headers(logs, notes, "each", progress):
        if log.status != "success":
            notes.append(f"{path}: left out (status {log.status!r})")
            continue
        try:
            items.extend(
                _log_items(path, log, label_args or [], include_partial, scorer, reducer, notes)
            )
        except Exception as error:  # a damaged or hostile file: that log out, named; the others
            # ranked. logged_samples raises for an entry holding another sample, an entry
            # declaring more than the entry limit, a failed checksum: nothing of it is trusted.
            notes.append(f"{path}: left out, its samples cannot be read ({describe_error(error)})")
    rows = _combined_rows(items)
    _label_differences(rows)
    return Leaderboard(rows, notes)


def _combined_rows(items: list[LogMetrics]) -> list[ModelRow]:
    """The logs' metrics combined into one row per experiment (see the module docstring)."""
    # Newest first: the newest run of a configuration is the one a row keeps.
    items.sort(key=lambda item: item.created, reverse=True)
    groups: list[dict[str, Any]] = []
    runs: dict[Path, RunCases | AnalysisError] = {}  # an older log's cases, read once
    for item in items:
        group = next((g for g in groups if g["model"] == item.model and _compatible(g, item)), None)
        if group is None:
            group = {
                "model": item.model,
                "dataset": item.settings.dataset,
                "partial": item.settings.partial,
                "common": item.settings.common,
                "tracks": {},
                "row": ModelRow(item.model),
            }
            groups.append(group)
        row: ModelRow = group["row"]
        for warning in item.lineage:
            if warning not in row.lineage:
                row.lineage.append(warning)
        for track, track_settings in item.settings.tracks.items():
            group["tracks"].setdefault(track, track_settings)
        for name, logged in item.metrics.items():
            if name in row.metrics:
                row.notes.append(
                    f"{name}: used {row.sources[name]} (the newest run of this "
                    f"configuration), not {item.path}"
                )
                continue
            row.metrics[name] = logged.value
            row.counts[name] = logged.cases
            row.sources[name] = str(item.path)
            if name in item.scores:
                row.scores[name] = item.scores[name]
            if logged.interval is not None:
                row.intervals[name] = logged.interval
            elif logged.old_interval:
                interval, note = _interval_counting_images(item, name, logged, runs)
                if interval is not None:
                    row.intervals[name] = interval
                row.notes.append(note)
            if logged.breakdown:
                row.breakdown[name] = logged.breakdown
    return [_finish(group) for group in groups]


def _interval_counting_images(
    item: LogMetrics,
    name: str,
    logged: LoggedMetric,
    runs: dict[Path, RunCases | AnalysisError],
) -> tuple[tuple[float, float] | None, str]:
    """The interval an older log's metric would have today, from its cases (read once per
    log), and the note that says so; none, and why, when its cases do not give the logged
    value back (an edited log) or cannot be read."""
    from inspect_medreason.analysis.comparison import read_run

    if item.path not in runs:
        chosen = {
            base: score
            for score in dict.fromkeys(item.scores.values())
            for base in (MCQ_SCORER, OPEN_SCORER)
            if is_score_of(score, base)
        }
        try:
            runs[item.path] = read_run(item.path, chosen)
        except AnalysisError as error:
            runs[item.path] = error
    run = runs[item.path]
    kind = logged.old_interval
    if isinstance(run, AnalysisError):
        reason = "; ".join(run.problems)
        return None, OLD_INTERVAL.format(metric=name, path=item.path, kind=kind, reason=reason)
    by_case = run.values.get(name, {})
    cases = [case for case, value in by_case.items() if not math.isnan(value)]
    values = [by_case[case] for case in cases]
    if not values or not math.isclose(float(np.mean(values)), logged.value, abs_tol=1e-9):
        reason = "its cases do not give the logged value back"
        return None, OLD_INTERVAL.format(metric=name, path=item.path, kind=kind, reason=reason)
    top = 1.0 if name == "MCQ Accuracy" else 4.0
    interval = clustered_mean_interval(values, [run.clusters.get(c, c) for c in cases], top)
    note = RECOUNTED_INTERVAL.format(metric=name, path=item.path, kind=kind)
    if math.isnan(interval.lower):
        return None, f"{note}: fewer than two images, no interval"
    return (interval.lower, interval.upper), note


def _finish(group: dict[str, Any]) -> ModelRow:
    row: ModelRow = group["row"]
    row.dataset = f"{Path(str(group['dataset']['cases'])).name} ({str(group['dataset']['cases_sha256'] or '')[:8]})"
    row.settings = {"common": group["common"], **group["tracks"]}
    row.partial = group["partial"]
    return row


def _flatten(settings: dict[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name in {"common", "mcq", "open", "common.generate"}:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = json.dumps(value, sort_keys=True, default=str)
    return flat


def _label_differences(rows: list[ModelRow]) -> None:
    """Name what tells apart rows of one model on one dataset ("images=false")."""
    flat = [_flatten(row.settings) for row in rows]
    labels: list[list[str]] = []
    for index, row in enumerate(rows):
        twins = [
            j
            for j, other in enumerate(rows)
            if j != index and other.model == row.model and other.dataset == row.dataset
        ]
        differing = sorted(
            {
                key
                for j in twins
                for key in set(flat[index]) | set(flat[j])
                if flat[index].get(key) != flat[j].get(key)
            }
        )
        shown = []
        for key in differing:
            value = flat[index].get(key)
            if value is not None:
                short = key.split(".")[-1]
                shown.append(f"{short}={value if len(value) <= 24 else _digest(value)}")
        labels.append(shown)
    for row, shown in zip(rows, labels, strict=True):
        if shown:
            row.model = f"{row.model} [{', '.join(shown)}]"
        if row.partial:
            row.model = f"{row.model} (partial: {row.partial})"


def _sort_key(value: float | None) -> float:
    """Rank key: higher values first (negated); a missing metric after every value."""
    return float("inf") if value is None else -value


def rank_rows(rows: list[ModelRow]) -> list[ModelRow]:
    """Per-metric average ranks (missing = after all present), mean rank, overall position;
    within each dataset; partial rows are shown but not ranked."""
    # imported here: scipy.stats costs a second at every start of the medreason command
    from scipy.stats import rankdata

    ranked: list[ModelRow] = []
    for dataset in dict.fromkeys(row.dataset for row in rows):
        complete = [row for row in rows if row.dataset == dataset and not row.partial]
        if complete:
            for name in METRIC_NAMES:
                keys = [_sort_key(row.metrics.get(name)) for row in complete]
                for row, rank in zip(complete, rankdata(keys, method="average"), strict=True):
                    row.ranks[name] = float(rank)
            for row in complete:
                row.mean_rank = sum(row.ranks.values()) / len(METRIC_NAMES)
            positions = rankdata([row.mean_rank for row in complete], method="average")
            for row, position in zip(complete, positions, strict=True):
                row.position = float(position)
        partial = [row for row in rows if row.dataset == dataset and row.partial]
        for row in partial:
            row.position = None
        ranked += sorted(complete, key=lambda row: (row.position or 0.0, row.model))
        ranked += sorted(partial, key=lambda row: row.model)
    return ranked


def rank_stability(rows: list[ModelRow], resamples: int, seed: int = SEED) -> list[str]:
    """Resample the cases (whole image clusters, with replacement, the same draw for every
    model of a dataset), re-rank by the challenge's rule each time, and record per row how
    often it holds each position and the 95% range of its position. Returns notes."""

    from inspect_medreason.analysis.comparison import read_run

    notes: list[str] = []
    for dataset in dict.fromkeys(row.dataset for row in rows):
        complete = [row for row in rows if row.dataset == dataset and row.position is not None]
        if len(complete) < 2:
            notes.append(f"{dataset}: rank stability needs at least two ranked models")
            continue
        per_row: list[dict[str, dict[str, float]]] = []
        clusters: dict[str, str] = {}
        for row in complete:
            values: dict[str, dict[str, float]] = {}
            for path in dict.fromkeys(row.sources.values()):
                # the re-judging the row shows, not the log's first judging
                chosen = {
                    base: row.scores[name]
                    for name, source in row.sources.items()
                    if source == path and name in row.scores
                    for base in (MCQ_SCORER, OPEN_SCORER)
                    if is_score_of(row.scores[name], base)
                }
                try:
                    run = read_run(Path(path), chosen)
                except AnalysisError as error:  # damaged since its row was read: named
                    notes.extend(
                        f"left out of the resampling, {problem}" for problem in error.problems
                    )
                    continue
                notes.extend(
                    f"{path}: left out of the resampling, {problem}" for problem in run.unreadable
                )
                clusters.update(run.clusters)
                for name in METRIC_NAMES:
                    if row.sources.get(name) == path and name in run.values:
                        values[name] = run.values[name]
            per_row.append(values)
        cases = sorted(
            {case for values in per_row for by_case in values.values() for case in by_case}
        )
        table = {
            name: np.array(
                [[values.get(name, {}).get(case, np.nan) for case in cases] for values in per_row]
            )
            for name in METRIC_NAMES
        }
        groups = cluster_indices([clusters.get(case, case) for case in cases], len(cases))
        positions = resampled_positions(table, groups, resamples, seed)
        for index, row in enumerate(complete):
            held, times = np.unique(positions[:, index], return_counts=True)
            row.stability = RankStability(
                resamples,
                {int(pos): float(n) / resamples for pos, n in zip(held, times, strict=True)},
                (
                    float(np.quantile(positions[:, index], 0.025, method="lower")),
                    float(np.quantile(positions[:, index], 0.975, method="higher")),
                ),
            )
    return notes


def resampled_positions(
    table: dict[str, np.ndarray], groups: list[np.ndarray], resamples: int, seed: int = SEED
) -> np.ndarray:
    """The resamples x models overall positions: each resample draws as many image clusters
    as there are (``groups``: each cluster's case columns), with replacement, takes each
    model's mean of every metric over the cases drawn (``table``: metric -> models x cases,
    NaN where unscored), ranks the models per metric and by the average of those ranks, as
    the challenge does."""
    from scipy.stats import rankdata

    models = next(iter(table.values())).shape[0]
    rng = np.random.default_rng(seed)
    positions = np.empty((resamples, models))
    for draw in range(resamples):
        picked = np.concatenate([groups[i] for i in rng.integers(0, len(groups), len(groups))])
        ranks = []
        for name in METRIC_NAMES:
            sample = table[name][:, picked]
            counts = np.sum(~np.isnan(sample), axis=1)
            sums = np.nansum(sample, axis=1)
            means = [sums[i] / counts[i] if counts[i] else None for i in range(models)]
            ranks.append(rankdata([_sort_key(m) for m in means], method="average"))
        positions[draw] = rankdata(np.mean(ranks, axis=0), method="min")
    return positions


def _cell(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _metric_cell(row: ModelRow, name: str) -> str:
    value = row.metrics.get(name)
    if value is None:
        return "—"
    interval = row.intervals.get(name)
    shown = f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
    return f"{value:.3f}{shown} (n={row.counts.get(name, 0)})"


def _rank_cell(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


HEADER = [
    "dataset",
    "position",
    "model",
    *METRIC_NAMES,
    *(f"rank {name}" for name in METRIC_NAMES),
    "mean rank",
    "missing (ranked last)",
    "judge lineage",
]
STABILITY_HEADER = "position under resampling: 95% range (share per position)"
CSV_HEADER = [
    "dataset",
    "position",
    "model",
    "partial",
    *(
        column
        for name in METRIC_NAMES
        for column in (name, f"{name} 95% lower", f"{name} 95% upper", f"n {name}")
    ),
    *(f"rank {name}" for name in METRIC_NAMES),
    "mean rank",
    "missing (ranked last)",
    "judge lineage",
]


def _stability_cells(row: ModelRow) -> list[str]:
    if row.stability is None:
        return ["", "", ""]
    shares = "; ".join(f"{pos}:{share:.4g}" for pos, share in sorted(row.stability.shares.items()))
    return [f"{row.stability.interval[0]:g}", f"{row.stability.interval[1]:g}", shares]


def _header(rows: list[ModelRow]) -> list[str]:
    header = [*HEADER, STABILITY_HEADER] if any(row.stability for row in rows) else HEADER
    return [*header, *_calibrated_names(rows)]


def _calibrated_names(rows: list[ModelRow]) -> list[str]:
    return sorted({name for row in rows for name in row.calibrated})


def table_rows(rows: list[ModelRow]) -> list[list[str]]:
    stability = any(row.stability for row in rows)
    return [
        [
            row.dataset,
            _rank_cell(row.position),
            row.model,
            *(_metric_cell(row, name) for name in METRIC_NAMES),
            *(_rank_cell(row.ranks.get(name)) for name in METRIC_NAMES),
            f"{row.mean_rank:.2f}" if row.position is not None else "—",
            ", ".join(row.missing),
            _lineage_cell(row),
            *([row.stability.describe() if row.stability else "—"] if stability else []),
            *(calibrated_cell(row.calibrated.get(name)) for name in _calibrated_names(rows)),
        ]
        for row in rows
    ]


def _lineage_cell(row: ModelRow) -> str:
    """Beside the row: a judge that is the tested model or of its family."""
    return "⚠ " + "; ".join(row.lineage) if row.lineage else ""


def _categories(rows: list[ModelRow], name: str) -> list[str]:
    return sorted({category for row in rows for category in row.breakdown.get(name, {})})


def render(board: Leaderboard, fmt: str, breakdown: bool = False) -> str:
    """The table as Markdown, CSV, JSON or HTML; ``breakdown`` adds per-category results in
    the same format (a JSON document stays one document, a CSV one table)."""
    rows = board.rows
    if fmt == "json":
        return strict_json.dumps(
            {
                "rows": [_json_row(row, breakdown) for row in rows],
                "notes": board.notes,
                "ranking": RANKING_NOTE,
            },
            indent=2,
        )
    if fmt == "csv":
        return _csv_report(rows, breakdown)
    body = table_rows(rows)
    if fmt == "html":
        return _html_page(board, body, breakdown)
    header = _header(rows)
    markdown = [markdown_row(header), "|" + "---|" * len(header)]
    markdown += [markdown_row(line) for line in body]
    text = "\n".join(markdown) + f"\n\n{RANKING_NOTE}\n"
    notes = _all_notes(board)
    if notes:
        text += "\nNotes:\n" + "".join(f"- {markdown_text(note)}\n" for note in notes)
    if breakdown:
        text += "\n" + render_breakdown(rows)
    return text


def _csv_report(rows: list[ModelRow], breakdown: bool) -> str:
    """The table as one CSV table: per metric its value, interval and count, then the
    stability, breakdown and calibrated columns when there are any."""
    extra = (
        [(name, c) for name in METRIC_NAMES for c in _categories(rows, name)] if breakdown else []
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    stability = any(row.stability for row in rows)
    stability_header = ["position 2.5%", "position 97.5%", "position shares"] if stability else []
    calibrated = _calibrated_names(rows)
    writer.writerow(
        [
            *CSV_HEADER,
            *stability_header,
            *(f"{name} {category}" for name, category in extra),
            *(
                column
                for name in calibrated
                for column in (name, f"{name} 95% lower", f"{name} 95% upper", f"n {name}")
            ),
        ]
    )
    for row in rows:
        writer.writerow(_csv_row(row, stability, extra, calibrated))
    return buffer.getvalue()


def _csv_row(
    row: ModelRow, stability: bool, extra: list[tuple[str, str]], calibrated: list[str]
) -> list[str]:
    metric_cells = []
    for name in METRIC_NAMES:
        value = row.metrics.get(name)
        interval = row.intervals.get(name)
        metric_cells += [
            "" if value is None else f"{value:.6g}",
            "" if interval is None else f"{interval[0]:.6g}",
            "" if interval is None else f"{interval[1]:.6g}",
            str(row.counts.get(name, "")),
        ]
    return [
        row.dataset,
        _rank_cell(row.position) if row.position is not None else "",
        row.model,
        row.partial or "",
        *metric_cells,
        *(_rank_cell(row.ranks.get(name)) for name in METRIC_NAMES),
        f"{row.mean_rank:.4g}" if row.position is not None else "",
        ", ".join(row.missing),
        "; ".join(row.lineage),
        *(_stability_cells(row) if stability else []),
        *(
            f"{row.breakdown.get(n, {}).get(c, ''):.6g}" if c in row.breakdown.get(n, {}) else ""
            for n, c in extra
        ),
        *(cell for name in calibrated for cell in _calibrated_csv_cells(row.calibrated.get(name))),
    ]


HTML_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem; color: #1f2933; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; } h3 { margin-top: 2rem; }
p.lead { color: #52606d; margin-top: 0; }
table { border-collapse: collapse; margin: 1rem 0; font-size: .88rem; }
th, td { border-bottom: 1px solid #d9e2ec; padding: .35rem .6rem; text-align: right; }
th { background: #f0f4f8; position: sticky; top: 0; }
td:nth-child(1), td:nth-child(3), th:nth-child(1), th:nth-child(3) { text-align: left; }
td:nth-child(3) { font-weight: 600; max-width: 28rem; overflow-wrap: anywhere; }
tr:nth-child(even) td { background: #fafbfc; }
img { max-width: 100%; border: 1px solid #d9e2ec; }
p.note { color: #7b8794; font-size: .82rem; margin: .2rem 0; }
"""


def _html_page(board: Leaderboard, body: list[list[str]], breakdown: bool) -> str:
    """One standalone page: styles, the table, the plot embedded as a data URI, notes."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in _header(board.rows))
    lines = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in line) + "</tr>"
        for line in body
    )
    image = base64.b64encode(plot_png(board.rows)).decode("ascii")
    notes = "".join(f"<p class='note'>{html.escape(note)}</p>\n" for note in _all_notes(board))
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        "<title>MedReason leaderboard</title>\n"
        f"<style>{HTML_STYLE}</style>\n</head>\n<body>\n"
        "<h1>MedReason leaderboard</h1>\n"
        f"<p class='lead'>{html.escape(RANKING_NOTE)}</p>\n"
        f'<table class="medreason-leaderboard">\n<thead><tr>{head}</tr></thead>\n'
        f"<tbody>{lines}</tbody>\n</table>\n"
        f"<img alt='The three leaderboard metrics per model' src='data:image/png;base64,{image}'>\n"
        f"{notes}{_breakdown_html(board.rows) if breakdown else ''}</body>\n</html>\n"
    )


def _all_notes(board: Leaderboard) -> list[str]:
    return [*board.notes, *(f"{row.model}: {note}" for row in board.rows for note in row.notes)]


def _json_row(row: ModelRow, breakdown: bool) -> dict[str, Any]:
    document: dict[str, Any] = {
        "dataset": row.dataset,
        "position": row.position,
        "model": row.model,
        "partial": row.partial,
        "metrics": {name: row.metrics.get(name) for name in METRIC_NAMES},
        "intervals": {
            name: {"lower": row.intervals[name][0], "upper": row.intervals[name][1], "level": 0.95}
            if name in row.intervals
            else None
            for name in METRIC_NAMES
        },
        "counts": {name: row.counts.get(name) for name in METRIC_NAMES},
        "ranks": row.ranks,
        "mean_rank": row.mean_rank if row.position is not None else None,
        "missing": row.missing,
        "sources": row.sources,
        "settings": row.settings,
        "notes": row.notes,
        "judge_lineage": row.lineage,
    }
    if row.stability is not None:
        document["rank_stability"] = {
            "resamples": row.stability.resamples,
            "position_shares": {
                str(pos): share for pos, share in sorted(row.stability.shares.items())
            },
            "position_interval": list(row.stability.interval),
        }
    if breakdown:
        document["breakdown"] = row.breakdown
    if row.calibrated:
        document["calibrated"] = {
            name: {
                "value": found.mean,
                "lower": found.interval.lower,
                "upper": found.interval.upper,
                "level": 0.95,
                "cases": found.cases,
            }
            for name, found in sorted(row.calibrated.items())
        }
    return document


def _calibrated_csv_cells(found: Any) -> list[str]:
    if found is None:
        return ["", "", "", ""]
    return [
        f"{found.mean:.6g}",
        f"{found.interval.lower:.6g}",
        f"{found.interval.upper:.6g}",
        str(found.cases),
    ]


RANKING_NOTE = (
    "Ranks: 1 = best per metric, ties share the average rank; position orders models by "
    "the mean of the three ranks (ties share the average position), within one dataset. A "
    "missing metric is ranked after every model that has it. [lower, upper] = 95% interval "
    "counting images, not cases (docs/intervals.md). "
    "n = cases scored. Partial runs are not ranked."
)


def render_breakdown(rows: list[ModelRow]) -> str:
    """Per-category results (e.g. modality:CT) as a Markdown table per metric."""
    parts: list[str] = []
    for name in METRIC_NAMES:
        categories = _categories(rows, name)
        if not categories:
            continue
        parts.append(f"### {name} by category\n")
        parts.append(markdown_row(["category", *(row.model for row in rows)]))
        parts.append("|---|" + "---|" * len(rows))
        for category in categories:
            cells = [_cell(row.breakdown.get(name, {}).get(category)) for row in rows]
            parts.append(markdown_row([category, *cells]))
        parts.append("")
    return "\n".join(parts)


def _breakdown_html(rows: list[ModelRow]) -> str:
    parts: list[str] = []
    for name in METRIC_NAMES:
        categories = _categories(rows, name)
        if not categories:
            continue
        head = "".join(f"<th>{html.escape(row.model)}</th>" for row in rows)
        body = "".join(
            f"<tr><td>{html.escape(category)}</td>"
            + "".join(
                f"<td>{_cell(row.breakdown.get(name, {}).get(category))}</td>" for row in rows
            )
            + "</tr>"
            for category in categories
        )
        parts.append(
            f"<h3>{html.escape(name)} by category</h3>\n<table><thead><tr><th>category</th>"
            f"{head}</tr></thead><tbody>{body}</tbody></table>\n"
        )
    return "".join(parts)


def plot_png(rows: list[ModelRow]) -> bytes:
    """Three panels (one per metric, each on its own scale) of horizontal bars, one row per
    model in leaderboard order; long labels wrap, the figure grows with the rows, and each
    bar carries its value and case count."""
    import textwrap

    plt = pyplot()

    limits = {"MCQ Accuracy": 1.0, "Open-ended GT": 4.0, "Open-ended VA": 4.0}
    labels = []
    for row in rows:
        position = "unranked" if row.position is None else f"{row.position:g}."
        spread = (
            f"\n(positions {row.stability.interval[0]:g}–{row.stability.interval[1]:g} "
            "under resampling)"
            if row.stability
            else ""
        )
        labels.append(f"{position} " + "\n".join(textwrap.wrap(row.model, 34)[:3]) + spread)
    lines = sum(label.count("\n") + 1 for label in labels)
    height = 1.6 + 0.32 * max(lines, 2) + 0.18 * len(rows)
    figure, axes = plt.subplots(1, 3, figsize=(13, height), sharey=True)
    positions = list(range(len(rows)))[::-1]  # the best at the top
    colours = plt.get_cmap("tab10")
    for axis, name in zip(axes, METRIC_NAMES, strict=True):
        values = [row.metrics.get(name) for row in rows]
        axis.barh(
            positions,
            [v if v is not None else 0.0 for v in values],
            color=[colours(i % 10) for i in range(len(rows))],
            hatch=["//" if row.partial else "" for row in rows],
        )
        for y, row, value in zip(positions, rows, values, strict=True):
            text = "n/a" if value is None else f"{value:.2f} (n={row.counts.get(name, 0)})"
            axis.text((value or 0.0) + limits[name] * 0.01, y, text, va="center", fontsize=8)
        axis.set_title(name, fontsize=11)
        axis.set_xlim(0, limits[name] * 1.3)
        axis.set_xticks([limits[name] * step / 4 for step in range(5)])
        axis.grid(axis="x", alpha=0.3)
        axis.set_yticks(positions)
        axis.set_yticklabels(labels, fontsize=8)
    figure.suptitle(
        "MedReason leaderboard (higher is better; position = mean of the three ranks)", fontsize=11
    )
    figure.tight_layout()
    return png_bytes(figure, dpi=110)
