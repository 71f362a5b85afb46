"""How much a model loses when its images get worse: :func:`shift_report` (what
``medreason shift`` runs), its figure and the contact sheets of the images each shifted run's
model saw.

Runs are grouped by model and task. Each shifted run (``-T shift=... -T severity=1..3``) is
paired with the clean run of the same model and task (no shift, or severity 0) on the same
cases; a run that cannot be paired is refused, named, with why (no clean run of its model,
other data, other cases), all at once. For each pair and each metric (MCQ accuracy, GT_final,
VA_final, VQA closed and open accuracy, GEMeX accuracy): both means and the change (shifted - clean) with a 95% interval and a test that
keep cases sharing an image together (``core.intervals.clustered_paired_change``), the same
per modality, then answer consistency (the same extracted answer clean and shifted)
and how often the model's reply says the image is of poor quality (``POOR_QUALITY``).
The command's arguments and what it prints are in ``cli/shift.py``.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from inspect_ai.log import read_eval_log
from PIL import Image, ImageDraw

from inspect_medreason.analysis.comparison import (
    LEADERBOARD_METRICS,
    _add_case_values,
)
from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import log_files, medreason_headers
from inspect_medreason.analysis.figures import (
    DOUBLE_COLUMN,
    SINGLE_COLUMN,
    display_names,
    metric_label,
    png_bytes,
    print_style,
)
from inspect_medreason.analysis.logs import (
    LoggedSample,
    UnreadableSample,
    logged_samples,
    task_name,
)
from inspect_medreason.core.errors import describe_error, first_few
from inspect_medreason.core.image_confinement import DIGESTS_KEY, run_data_folder
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.intervals import PairedResult, clustered_paired_change
from inspect_medreason.core.loaders import prepare_case_images
from inspect_medreason.core.shift import SEVERITIES, SHIFTS, judge_image_files

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ContactSheets",
    "ModalityChange",
    "PairReport",
    "ShiftReport",
    "ShiftRun",
    "Summary",
    "contact_sheets",
    "plot_caption",
    "plot_png",
    "says_poor_quality",
    "shift_figure",
    "shift_report",
    "summarise",
]

# What counts as the model saying the image is poor: a quality or resolution called poor
# (low, limited, suboptimal, degraded, reduced, inadequate, insufficient, bad; before or after
# the word: "poor image quality", "the quality is poor"), an image called
# non-diagnostic, an image said to be blurry, noisy, grainy, pixelated, degraded, unclear or
# badly exposed, a named artefact (motion, ghosting, compression, noise, or artefacts in
# general), or a finding said to be impossible to assess because of the image. A match within
# the three words after "no", "not", "without" or "free of" is a negation and does not count
# ("no motion artefact", "not of poor quality").
POOR_QUALITY = re.compile(
    r"""
    \b(?:poor|low|limited|sub-?optimal|degraded|reduced|inadequate|insufficient|bad)
        \s+(?:image\s+|diagnostic\s+|scan\s+|film\s+|technical\s+)?(?:quality|resolution)\b
  | \b(?:image|scan|film|study)?\s*quality\s+(?:is|was|appears|seems)\s+(?:very\s+|quite\s+|rather\s+)?
        (?:poor|low|limited|sub-?optimal|degraded|reduced|inadequate|insufficient|bad)\b
  | \bnon-?diagnostic\b
  | \b(?:image|scan|film|picture|radiograph|view)\s+(?:is|appears|looks|seems)\s+
        (?:too\s+|very\s+|quite\s+|rather\s+|somewhat\s+|heavily\s+)?
        (?:blurry|blurred|noisy|grainy|pixelated|degraded|unclear|distorted|
           washed[-\s]out|over-?exposed|under-?exposed)\b
  | \b(?:motion|ghosting|compression|noise|streak)\s+artefacts?\b
  | \b(?:motion|ghosting|compression|noise|streak)\s+artifacts?\b
  | \bartefacts?\b | \bartifacts?\b
  | \b(?:difficult|hard|impossible|unable)\s+to\s+(?:assess|evaluate|interpret|visuali[sz]e)\b
        [^.]*\b(?:quality|noise|blur|resolution|artefact|artifact)
    """,
    re.IGNORECASE | re.VERBOSE,
)
NEGATION = re.compile(r"\b(?:no|not|without|free\s+of)\s+(?:\S+\s+){0,3}$", re.IGNORECASE)


def says_poor_quality(text: str) -> bool:
    """Whether a reply says its image is of poor quality (``POOR_QUALITY``, negations left out)."""
    for match in POOR_QUALITY.finditer(text or ""):
        if not NEGATION.search(text[max(0, match.start() - 60) : match.start()]):
            return True
    return False


@dataclass(frozen=True)
class ShiftRun:
    """One log: its model, task, shift and per-case values, answers and quality remarks."""

    path: Path
    model: str
    task: str
    shift: str | None
    severity: int
    seed: int | None
    judge_image: str | None
    epochs: int
    data: dict[str, Any]
    values: dict[str, dict[str, float]]  # metric -> case -> mean over epochs
    groups: dict[str, dict[str, str]]
    clusters: dict[str, str]
    answers: dict[tuple[str, int], str]  # (case, epoch) -> extracted answer ("" = none)
    poor_quality: dict[tuple[str, int], bool]  # (case, epoch) -> says the image is poor
    unreadable: list[str] = field(default_factory=list)

    @property
    def cases(self) -> set[str]:
        return {case for values in self.values.values() for case in values}

    @property
    def label(self) -> str:
        return "clean" if self.shift is None else f"{self.shift} {self.severity}"


def _shift_of(path: Path, metadata: dict[str, Any]) -> tuple[str | None, int, int | None, Any]:
    """The run's shift record; a log written before shifts existed is clean. ValueError
    naming the field when the record cannot be read (an edited header)."""
    record = metadata.get("shift")
    if record is None:
        return None, 0, None, None
    if not isinstance(record, dict):
        raise ValueError("eval.metadata.shift is not a record")
    if isinstance(record.get("grid"), list):  # each sample says which combination it is
        return None, 0, None, record.get("judge_image")
    name, severity, seed = record.get("name"), record.get("severity", 0), record.get("seed")
    if severity == 0 or name is None:
        if name is None and severity not in (0, None):
            raise ValueError(f"eval.metadata.shift.severity {severity!r} without a name")
        return None, 0, seed if isinstance(seed, int) else None, record.get("judge_image")
    if name not in SHIFTS:
        raise ValueError(f"eval.metadata.shift.name {name!r} is not one of {', '.join(SHIFTS)}")
    if isinstance(severity, bool) or severity not in SEVERITIES:
        raise ValueError(f"eval.metadata.shift.severity {severity!r} is not one of 1, 2, 3")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"eval.metadata.shift.seed {seed!r} is not a whole number")
    return str(name), int(severity), seed, record.get("judge_image")


# The scorers whose ``answer`` is the reply's extracted answer, in the order they are read.
# In a combined run every case carries both MedReason scorers and the one that does not
# apply has an empty answer (an open case's mcq_scorer), so the first non-empty one counts:
# reading only the first scorer present called every open-ended reply unanswered.
ANSWER_SCORERS = ("mcq_scorer", "open_ended_scorer", "vqa_scorer", "gemex_scorer")

# The other image families' per-case values (MedXpertQA's is the MCQ scorer, read as MCQ
# Accuracy): VQA-RAD, SLAKE and PathVQA score each case 0/1, closed and open questions
# apart (the sample's answer_type); GEMeX's answer accuracy is its scorer's "accuracy".
VQA_METRICS = {"closed": "VQA closed accuracy", "open": "VQA open accuracy"}
GEMEX_METRIC = "GEMeX accuracy"
SHIFT_METRICS = (*LEADERBOARD_METRICS, *VQA_METRICS.values(), GEMEX_METRIC)
# right or wrong per case (one epoch): the paired-proportion interval applies
BINARY_METRICS = {"MCQ Accuracy", *VQA_METRICS.values(), GEMEX_METRIC}


def _add_family_values(sample: LoggedSample, sums: dict[str, dict[str, list[float]]]) -> None:
    case = str(sample.id)
    vqa = sample.scores.get("vqa_scorer")
    if vqa is not None and isinstance(vqa.value, (int, float)) and not isinstance(vqa.value, bool):
        metric = VQA_METRICS.get(str(sample.metadata.get("answer_type")))
        if metric is not None and not math.isnan(float(vqa.value)):
            sums[metric][case].append(float(vqa.value))
    gemex = sample.scores.get("gemex_scorer")
    if gemex is not None and isinstance(gemex.value, dict):
        accuracy = gemex.value.get("accuracy")
        if isinstance(accuracy, (int, float)) and not math.isnan(float(accuracy)):
            sums[GEMEX_METRIC][case].append(float(accuracy))


def _answer(sample: LoggedSample) -> str:
    for name in ANSWER_SCORERS:
        score = sample.scores.get(name)
        answer = " ".join(str(score.answer or "").casefold().split()) if score else ""
        if answer:
            return answer
    return ""


@dataclass
class _Collected:
    """One run's values while its log is read."""

    sums: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    groups: dict[str, dict[str, str]] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)
    answers: dict[tuple[str, int], str] = field(default_factory=dict)
    poor: dict[tuple[str, int], bool] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    def add(self, sample: LoggedSample) -> None:
        self.unreadable.extend(_add_case_values(sample, self.sums, self.groups, self.clusters))
        _add_family_values(sample, self.sums)
        key = (str(sample.id), sample.epoch)
        self.answers[key] = _answer(sample)
        self.poor[key] = says_poor_quality(sample.completion)


def _grid_key(path: Path, sample: LoggedSample) -> tuple[str | None, int, str]:
    """A grid run's sample: its shift, severity and case id, from its shift record."""
    record = sample.metadata.get("shift")
    if not isinstance(record, dict) or not isinstance(record.get("case"), str):
        raise AnalysisError(
            [
                f"{path}: sample {str(sample.id)!r} of a grid run has no readable shift record "
                "(an edited log?)"
            ]
        )
    name, severity = record.get("name"), record.get("severity")
    if name is None and severity == 0:
        return None, 0, record["case"]
    if name not in SHIFTS or isinstance(severity, bool) or severity not in SEVERITIES:
        raise AnalysisError(
            [
                f"{path}: sample {str(sample.id)!r}: shift {name!r} severity {severity!r} is "
                "not one a task writes (an edited log?)"
            ]
        )
    return str(name), int(severity), record["case"]


def read_shift_runs(path: Path, header: Any) -> list[ShiftRun]:
    """A finished log's values, answers and quality remarks, read one sample at a time: one
    run, or for a grid (``-T shift=a,b -T severity=0,1,...``) one run per combination, its
    cases under their own ids."""
    metadata = header.eval.metadata or {}
    try:
        shift, severity, seed, judge_image = _shift_of(path, metadata)
    except ValueError as error:
        raise AnalysisError([f"{path}: {error} (an edited log?)"]) from error
    record = metadata.get("shift")
    grid = isinstance(record, dict) and isinstance(record.get("grid"), list)
    collected: dict[tuple[str | None, int], _Collected] = defaultdict(_Collected)
    try:
        for sample in logged_samples(path, header):
            if isinstance(sample, UnreadableSample):
                collected[(shift, severity)].unreadable.append(sample.describe())
                continue
            if grid:
                name, level, case = _grid_key(path, sample)
                collected[(name, level)].add(sample.model_copy(update={"id": case}))
            else:
                collected[(shift, severity)].add(sample)
    except AnalysisError:
        raise
    except Exception as error:  # a damaged file: nothing of it is reported
        raise AnalysisError(
            [f"{path}: its samples cannot be read ({describe_error(error)})"]
        ) from error
    data = metadata.get("data") if isinstance(metadata.get("data"), dict) else {}
    if grid and isinstance(record, dict):
        seed = record.get("seed") if isinstance(record.get("seed"), int) else None
        judge_image = record.get("judge_image")
    return [
        ShiftRun(
            path=path,
            model=header.eval.model,
            task=task_name(header),
            shift=name,
            severity=level,
            seed=seed,
            judge_image=judge_image,
            epochs=int(header.eval.config.epochs or 1),
            data=data or {},
            values={
                m: {c: float(np.mean(v)) for c, v in cases.items()}
                for m, cases in found.sums.items()
            },
            groups=found.groups,
            clusters=found.clusters,
            answers=found.answers,
            poor_quality=found.poor,
            unreadable=found.unreadable,
        )
        for (name, level), found in sorted(
            collected.items(), key=lambda item: (item[0][0] or "", item[0][1])
        )
    ]


@dataclass(frozen=True)
class ModalityChange:
    """A metric's change on the cases of one modality."""

    modality: str
    result: PairedResult


@dataclass(frozen=True)
class PairReport:
    """A shifted run against its clean run: per metric the paired change (all cases, and
    per modality), the share of answers the same in both, the change in how often replies
    call the image poor, and what was left out (``warnings``)."""

    clean: ShiftRun
    shifted: ShiftRun
    metrics: dict[str, PairedResult]
    modalities: dict[str, list[ModalityChange]]
    consistency: float | None
    consistency_pairs: int
    poor_quality: PairedResult
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, repr=False)
class ShiftReport(NotebookDisplay):
    """What ``medreason shift`` reports: every shifted run paired with its clean run
    (sorted by model, task, shift and severity), and notes on the logs skipped."""

    pairs: list[PairReport]
    notes: list[str]

    def display_summary(self) -> str:
        models = sorted({p.shifted.model for p in self.pairs})
        shifts = sorted({p.shifted.label for p in self.pairs})
        return (
            f"{len(self.pairs)} shifted run(s) of {', '.join(models)} against their clean "
            f"runs ({', '.join(shifts)}); {len(self.notes)} note(s)"
        )

    def display_notes(self) -> list[str]:
        return [*(w for p in self.pairs for w in p.warnings), *self.notes]

    def to_pandas(self) -> pd.DataFrame:
        """One row per pair of runs and metric: the shifted run (model, task, shift,
        severity, seed, judge image, log), the cases both scored, the clean and shifted
        means, the change with its 95% interval's bounds, the test, its p-value and why a
        figure could not be estimated (``note``)."""
        import pandas as pd

        rows = [
            {
                "model": p.shifted.model,
                "task": p.shifted.task,
                "shift": p.shifted.shift,
                "severity": p.shifted.severity,
                "seed": p.shifted.seed,
                "judge_image": p.shifted.judge_image,
                "metric": metric,
                "cases": r.cases,
                "clean": r.mean_a,
                "shifted": r.mean_b,
                "change": r.difference,
                "lower": r.interval.lower,
                "upper": r.interval.upper,
                "test": r.test,
                "p_value": r.p_value,
                "note": r.note,
                "clean_log": str(p.clean.path),
                "shifted_log": str(p.shifted.path),
            }
            for p in self.pairs
            for metric, r in p.metrics.items()
        ]
        return pd.DataFrame(rows, columns=PAIR_COLUMNS)

    def modalities_to_pandas(self) -> pd.DataFrame:
        """One row per pair of runs, metric and modality: the shifted run (model, task,
        shift, severity), the cases of that modality both runs scored, the clean and
        shifted means and the change with its 95% interval's bounds."""
        import pandas as pd

        rows = [
            {
                "model": p.shifted.model,
                "task": p.shifted.task,
                "shift": p.shifted.shift,
                "severity": p.shifted.severity,
                "metric": metric,
                "modality": change.modality,
                "cases": change.result.cases,
                "clean": change.result.mean_a,
                "shifted": change.result.mean_b,
                "change": change.result.difference,
                "lower": change.result.interval.lower,
                "upper": change.result.interval.upper,
                "note": change.result.note,
            }
            for p in self.pairs
            for metric, changes in p.modalities.items()
            for change in changes
        ]
        return pd.DataFrame(rows)

    def summary(self) -> list[Summary]:
        """Per model, task and metric, the corruption error of each shift (:func:`summarise`)."""
        return summarise(self)

    def plot_png(self) -> bytes:
        """Each metric's change against severity, one panel per shift and metric, as PNG
        bytes (:func:`plot_png`); its caption is :meth:`plot_caption`."""
        return plot_png(self)

    def plot_caption(self) -> str:
        """The caption of :meth:`plot_png`, as text to set under it."""
        return plot_caption(self)


PAIR_COLUMNS = ["model", "task", "shift", "severity", "seed", "judge_image", "metric", "cases",
                "clean", "shifted", "change", "lower", "upper", "test", "p_value", "note",
                "clean_log", "shifted_log"]  # fmt: skip


def read_runs(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[ShiftRun], list[str]]:
    """Every finished MedReason run among ``paths`` (logs or folders), one per shift and
    severity of a grid run, and notes on the logs skipped."""
    notes: list[str] = []
    headers = medreason_headers(log_files([os.fspath(p) for p in paths], notes), notes)
    runs: list[ShiftRun] = []
    for path, header in headers:
        if header.status != "success":
            notes.append(f"{path}: skipped, the run did not finish (status {header.status!r})")
            continue
        runs.extend(read_shift_runs(path, header))
    return runs, notes


def _pairing_problems(clean: ShiftRun, shifted: ShiftRun) -> list[str]:
    problems: list[str] = []
    for key in ("cases_sha256", "ground_truth_sha256"):
        if clean.data.get(key) != shifted.data.get(key):
            problems.append(
                f"{shifted.path} ({shifted.label}) ran on other data than its clean run "
                f"{clean.path} ({key}: {shifted.data.get(key)} vs {clean.data.get(key)}); "
                "run both on the same files"
            )
            return problems
    only_clean, only_shifted = clean.cases - shifted.cases, shifted.cases - clean.cases
    if only_clean or only_shifted:
        detail = "; ".join(
            f"{len(cases)} scored only in {where} ({first_few(sorted(cases), 3)})"
            for where, cases in (("the clean run", only_clean), ("the shifted run", only_shifted))
            if cases
        )
        problems.append(
            f"{shifted.path} ({shifted.label}) and its clean run {clean.path} scored other "
            f"cases: {detail}; run both on the same cases (--limit, --sample-id)"
        )
    return problems


def pair_runs(runs: list[ShiftRun]) -> list[tuple[ShiftRun, ShiftRun]]:
    """Each shifted run with the clean run of its model and task; every run that cannot be
    paired is named in one refusal."""
    clean: dict[tuple[str, str], list[ShiftRun]] = defaultdict(list)
    for run in runs:
        if run.shift is None:
            clean[(run.model, run.task)].append(run)
    problems: list[str] = []
    pairs: list[tuple[ShiftRun, ShiftRun]] = []
    for run in runs:
        if run.shift is None:
            continue
        found = clean.get((run.model, run.task), [])
        if not found:
            others = sorted({f"{m} on {t}" for (m, t) in clean}) or ["none"]
            problems.append(
                f"{run.path} ({run.label}, model {run.model}, task {run.task}): no clean run "
                f"of that model and task to pair it with (clean runs given: "
                f"{', '.join(others)}); add its clean run"
            )
            continue
        if len(found) > 1:
            problems.append(
                f"{run.path} ({run.label}): {len(found)} clean runs of {run.model} on "
                f"{run.task} ({', '.join(str(c.path) for c in found)}); give one"
            )
            continue
        mismatch = _pairing_problems(found[0], run)
        if mismatch:
            problems.extend(mismatch)
            continue
        pairs.append((found[0], run))
    if problems:
        raise AnalysisError(problems)
    if not pairs:
        raise AnalysisError(
            ["no shifted run among the logs given (a run with -T shift=... -T severity=1..3)"]
        )
    return pairs


def _paired(
    clean: dict[str, float], shifted: dict[str, float], clusters: dict[str, str], binary: bool
) -> PairedResult:
    cases = sorted(set(clean) & set(shifted))
    return clustered_paired_change(
        [clean[c] for c in cases],
        [shifted[c] for c in cases],
        [clusters.get(c, c) for c in cases],
        binary=binary,
    )


def report_pair(clean: ShiftRun, shifted: ShiftRun) -> PairReport:
    binary = clean.epochs == 1 and shifted.epochs == 1
    metrics: dict[str, PairedResult] = {}
    modalities: dict[str, list[ModalityChange]] = {}
    for metric in SHIFT_METRICS:
        first, second = clean.values.get(metric, {}), shifted.values.get(metric, {})
        if not set(first) & set(second):
            continue
        is_binary = (
            binary
            and metric in BINARY_METRICS
            and all(v in (0.0, 1.0) for v in (*first.values(), *second.values()))
        )
        metrics[metric] = _paired(first, second, clean.clusters, is_binary)
        by_modality: dict[str, list[str]] = defaultdict(list)
        for case in sorted(set(first) & set(second)):
            by_modality[clean.groups.get(case, {}).get("modality", "unknown")].append(case)
        modalities[metric] = [
            ModalityChange(
                modality,
                _paired(
                    {c: first[c] for c in members},
                    {c: second[c] for c in members},
                    clean.clusters,
                    is_binary,
                ),
            )
            for modality, members in sorted(by_modality.items())
        ]
    keys = sorted(set(clean.answers) & set(shifted.answers))
    answered = [k for k in keys if clean.answers[k] and shifted.answers[k]]
    same = sum(clean.answers[k] == shifted.answers[k] for k in answered)
    consistency = same / len(answered) if answered else None
    quality_keys = sorted(set(clean.poor_quality) & set(shifted.poor_quality))
    poor = clustered_paired_change(
        [float(clean.poor_quality[k]) for k in quality_keys],
        [float(shifted.poor_quality[k]) for k in quality_keys],
        [clean.clusters.get(k[0], k[0]) for k in quality_keys],
        binary=True,
    )
    warnings = [
        f"{len(run.unreadable)} value(s) or sample(s) of {run.path} are left out: "
        + first_few(run.unreadable, 3, "; ")
        for run in (clean, shifted)
        if run.unreadable
    ]
    if clean.judge_image != shifted.judge_image and "Open-ended VA" in metrics:
        warnings.append(
            f"{shifted.path} ({shifted.label}) had its vision judge see the "
            f"{shifted.judge_image} image and its clean run the {clean.judge_image} one: the "
            "VA change mixes the model's loss with the judge's view"
        )
    if len(answered) < len(keys):
        warnings.append(
            f"{len(keys) - len(answered)} of {len(keys)} replies of {shifted.label} or its "
            "clean run gave no answer the scorer could read: left out of the consistency"
        )
    return PairReport(
        clean, shifted, metrics, modalities, consistency, len(answered), poor, warnings
    )


def shift_report(logs: Sequence[str | os.PathLike[str]]) -> ShiftReport:
    """How much each model loses under image-quality shifts: every shifted run among
    ``logs`` (eval logs or folders of them) paired with the clean run of its model and task
    on the same cases, and per metric and modality the change with a 95% interval and a
    test that keep cases sharing an image together, answer consistency and quality remarks.
    Raises AnalysisError naming every run that cannot be paired, all at once."""
    runs, notes = read_runs(logs)
    if not runs:
        raise AnalysisError(["no finished MedReason eval log among the paths given", *notes])
    pairs = pair_runs(runs)
    reports = [report_pair(clean, shifted) for clean, shifted in pairs]
    reports.sort(
        key=lambda r: (r.shifted.model, r.shifted.task, r.shifted.shift or "", r.shifted.severity)
    )
    return ShiftReport(reports, notes)


NOTE = (
    "Each shifted run is paired with the clean run of the same model and task on the same "
    "cases. shifted − clean < 0 is a loss. Cases that share an image are not independent, so "
    "both the interval and the test keep them together. The 95% interval is a range of "
    "changes compatible with the data: for MCQ correctness, the Bonett-Price adjusted Wald "
    "interval widened by the shared images' design effect; for the 0-4 judge components, "
    "Student's t with the delete-one-image jackknife standard error on Bell-McCaffrey degrees "
    "of freedom (docs/intervals.md). The test is "
    "the exact sign-flip randomization test of Durkalski's clustered McNemar statistic (each "
    "image's summed change negated or not). A change that cannot be estimated (one image, no "
    "case changed) says why in the note column. 'Same answer' is the share of replies whose extracted answer is the "
    "same clean and shifted (replies without one left out). 'Says poor quality' is the share "
    "of replies that call the image poor, non-diagnostic, blurry, noisy or full of artefacts "
    "(docs/shift.md lists the phrases). A simulated shift is not a new scanner: see "
    "docs/shift.md for what each shift models and its limits."
)


@dataclass(frozen=True)
class Summary:
    """One model, task and metric across every shift: the corruption error of each shift
    relative to the clean run, their mean, and the relative drop per modality."""

    model: str
    task: str
    metric: str
    shifts: dict[str, float | None]  # shift -> relative corruption error (None: undefined)
    mean_ce: float | None
    modality_drop: dict[str, float | None]  # modality -> mean relative drop
    note: str = ""


def summarise(report: ShiftReport) -> list[Summary]:
    """Hendrycks and Dietterich's corruption error ("Benchmarking neural network robustness
    to common corruptions and perturbations", ICLR 2019), each shift's errors summed over
    its severities, normalised by the clean run's error at as many severities instead of a
    baseline model's; the mean over shifts is the mCE (1 = no loss). The error of a score is
    its distance to the top of its scale (1 - accuracy, 4 - judge score). The relative drop
    per modality is (clean - shifted) / clean, averaged over every shift and severity."""
    grouped: dict[tuple[str, str, str], list[PairReport]] = defaultdict(list)
    for pair in report.pairs:
        for metric in pair.metrics:
            grouped[(pair.shifted.model, pair.shifted.task, metric)].append(pair)
    summaries = []
    for (model, task, metric), pairs in sorted(grouped.items()):
        top = METRIC_SCALES[metric][1]
        clean_error = top - pairs[0].metrics[metric].mean_a
        by_shift: dict[str, list[float]] = defaultdict(list)
        for pair in pairs:
            by_shift[pair.shifted.shift or ""].append(top - pair.metrics[metric].mean_b)
        note = ""
        if clean_error <= 0 or math.isnan(clean_error):
            shifts: dict[str, float | None] = dict.fromkeys(sorted(by_shift))
            mean_ce = None
            note = "the clean run has no error (every case at the top of the scale): a "
            note += "corruption error relative to it is undefined; read the changes instead"
        else:
            shifts = {s: sum(e) / (clean_error * len(e)) for s, e in sorted(by_shift.items())}
            values = [v for v in shifts.values() if v is not None]
            mean_ce = sum(values) / len(values) if values else None
        drops: dict[str, list[float]] = defaultdict(list)
        for pair in pairs:
            for change in pair.modalities.get(metric, []):
                if change.result.cases and change.result.mean_a > 0:
                    drops[change.modality].append(
                        (change.result.mean_a - change.result.mean_b) / change.result.mean_a
                    )
        modality_drop: dict[str, float | None] = {
            m: sum(d) / len(d) for m, d in sorted(drops.items())
        }
        summaries.append(Summary(model, task, metric, shifts, mean_ce, modality_drop, note))
    return summaries


SUMMARY_NOTE = (
    "Corruption error: a shift's errors (1 - accuracy, or 4 - judge score) summed over its "
    "severities, over the clean run's error as many times (Hendrycks and Dietterich 2019, "
    "normalised by the clean run instead of a baseline model): 1 is no loss, 2 twice the "
    "errors. mCE: its mean over shifts. Relative drop per modality: (clean - shifted) / "
    "clean, averaged over every shift and severity."
)


# Each metric's fixed scale: a panel never autoscales (a 0.02 wobble must not look like a
# collapse), and its axis says what the number is.
METRIC_SCALES = {
    "MCQ Accuracy": (0.0, 1.0, "accuracy (0-1)"),
    "VQA closed accuracy": (0.0, 1.0, "accuracy (0-1)"),
    "VQA open accuracy": (0.0, 1.0, "accuracy (0-1)"),
    "GEMeX accuracy": (0.0, 1.0, "accuracy (0-1)"),
    "Open-ended GT": (0.0, 4.0, "GT_final, judge score (0-4)"),
    "Open-ended VA": (0.0, 4.0, "VA_final, judge score (0-4)"),
}
# Each shift as a figure names it.
SHIFT_NAMES = {
    "noise": "Noise (lower dose)",
    "rician": "Rician noise",
    "bias_field": "Bias field",
    "motion_ghosting": "Motion ghosting",
    "undersampling": "k-space undersampling",
    "gibbs": "Gibbs ringing",
    "spike": "k-space spike",
    "speckle": "Speckle",
    "stain": "Stain variation",
    "blur": "Blur",
    "downsample": "Downsampling",
    "jpeg": "JPEG compression",
    "gamma": "Gamma",
    "window": "Mis-set window",
    "brightness_up": "Brightness up",
    "brightness_down": "Brightness down",
    "contrast_up": "Contrast up",
    "contrast_down": "Contrast down",
}
SEVERITY_NAMES = {1: "1\nmild", 2: "2\nmoderate", 3: "3\nsevere"}
PLOT_COLUMNS = 3  # panels side by side at the double column's width
CUT_MARKERS = {"lower": "v", "upper": "^"}  # an interval cut at the axis ends in one


def shift_name(shift: str) -> str:
    """A shift's name as a figure prints it."""
    return SHIFT_NAMES.get(shift, shift.replace("_", " ").capitalize())


class PlottedLine(NamedTuple):
    """One line of a panel: its legend label and, per severity, the pair it draws."""

    label: str
    pairs: list[PairReport]


def _line_keys(report: ShiftReport) -> dict[tuple[str, str, int | None, str | None], str]:
    """Each line's legend label: the model's display name, and the task, seed and judge
    image only where the figure's lines differ in them (the rest is in the caption)."""
    keys = sorted(
        {(p.shifted.model, p.shifted.task, p.shifted.seed, p.shifted.judge_image)
         for p in report.pairs},
        key=str,
    )  # fmt: skip
    names = display_names([key[0] for key in keys])
    varies = [len({key[index] for key in keys}) > 1 for index in range(4)]
    labels = {}
    for key in keys:
        extras = [
            text
            for index, text in ((1, key[1]), (2, f"seed {key[2]}"), (3, f"judge sees {key[3]}"))
            if varies[index]
        ]
        labels[key] = names[key[0]] + (f" ({', '.join(extras)})" if extras else "")
    return labels


def plot_panels(report: ShiftReport) -> list[tuple[str, str, list[PlottedLine]]]:
    """What the figure draws: per shift and metric (in that order), its lines."""
    labels = _line_keys(report)
    shifts = sorted({p.shifted.shift or "" for p in report.pairs})
    metrics = [m for m in SHIFT_METRICS if any(m in p.metrics for p in report.pairs)]
    panels = []
    for shift in shifts:
        for metric in metrics:
            lines: dict[str, list[PairReport]] = defaultdict(list)
            for p in report.pairs:
                if p.shifted.shift == shift and metric in p.metrics:
                    key = (p.shifted.model, p.shifted.task, p.shifted.seed, p.shifted.judge_image)
                    lines[labels[key]].append(p)
            if lines:
                panels.append(
                    (
                        shift,
                        metric,
                        [
                            PlottedLine(label, sorted(ps, key=lambda p: p.shifted.severity))
                            for label, ps in sorted(lines.items())
                        ],
                    )
                )
    return panels


def shift_figure(report: ShiftReport) -> Any:
    """The figure of :func:`plot_png` as a matplotlib ``Figure`` (to restyle or save as a
    vector file); its caption is :func:`plot_caption`."""
    panels = plot_panels(report)
    labels = list(dict.fromkeys(line.label for *_, lines in panels for line in lines))
    metrics = list(dict.fromkeys(metric for _, metric, _ in panels))
    # a shift's metrics in one row when they fit, else the panels three abreast
    columns = len(metrics) if 1 < len(metrics) <= PLOT_COLUMNS else PLOT_COLUMNS
    columns = max(1, min(columns, len(panels)))
    rows = max(1, math.ceil(len(panels) / columns))
    width = DOUBLE_COLUMN if columns > 1 else SINGLE_COLUMN
    legend_rows = math.ceil(len(labels) / 3)
    band = 0.15 + 0.2 * legend_rows  # inches under the panels for the legend
    height = 2.3 * rows + band
    with print_style() as plt:
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        colour = {label: colours[i % len(colours)] for i, label in enumerate(labels)}
        figure, axes = plt.subplots(rows, columns, figsize=(width, height), squeeze=False)
        step = 0.5 / max(len(labels), 1)  # lines side by side at each severity
        for index, (shift, metric, lines) in enumerate(panels):
            axis = axes[index // columns, index % columns]
            low_end, high_end, _unit = METRIC_SCALES[metric]
            span = high_end - low_end
            for line in lines:
                offset = (labels.index(line.label) - (len(labels) - 1) / 2) * step
                results = [p.metrics[metric] for p in line.pairs]
                xs = [p.shifted.severity + offset for p in line.pairs]
                ys = [r.difference for r in results]
                axis.plot(xs, ys, "-", color=colour[line.label], linewidth=1, alpha=0.6)
                for x, r in zip(xs, results, strict=True):
                    _draw_interval(axis, x, r, -span, span, colour[line.label])
            counts = sorted({p.metrics[metric].cases for line in lines for p in line.pairs})
            axis.axhline(0.0, color="0.6", linewidth=0.8, linestyle="--", zorder=0)
            axis.set_title(f"{shift_name(shift)}, n = {'/'.join(map(str, counts))}")
            axis.set_ylim(-span * 1.04, span * 1.04)
            axis.set_xlim(min(SEVERITIES) - 0.5, max(SEVERITIES) + 0.5)
            axis.set_xticks(list(SEVERITIES), [SEVERITY_NAMES[s] for s in SEVERITIES])
            axis.set_xlabel("severity")
            axis.set_ylabel(f"change in {metric_label(metric)}")
            axis.grid(alpha=0.3)
        for index in range(len(panels), rows * columns):
            axes[index // columns, index % columns].set_visible(False)
        handles = [
            plt.Line2D([], [], color=colour[label], marker="o", label=label) for label in labels
        ]
        figure.legend(
            handles=handles,
            loc="lower center",
            ncol=min(len(labels), 3),
            frameon=False,
            bbox_to_anchor=(0.5, 0.0),
        )
        figure.tight_layout(rect=(0, band / height, 1, 1))
    return figure


def _draw_interval(axis: Any, x: float, result: PairedResult, low: float, high: float,
                   colour: str) -> None:  # fmt: skip
    """The change as a point, its 95% interval as a bar from its lower to its upper bound
    (not around the point: a bootstrap's need not be symmetric); an end beyond the axis is
    cut there and marked with a triangle; a change without an interval is drawn hollow."""
    lower, upper = result.interval.lower, result.interval.upper
    finite = not (math.isnan(lower) or math.isnan(upper))
    if finite:
        shown = (max(lower, low), min(upper, high))
        axis.vlines(x, *shown, color=colour, linewidth=1.5)
        for end, value, cut in (
            ("lower", shown[0], lower < low),
            ("upper", shown[1], upper > high),
        ):
            if cut:
                axis.plot([x], [value], CUT_MARKERS[end], color=colour, markersize=5)
            else:
                axis.hlines(value, x - 0.04, x + 0.04, color=colour, linewidth=1)
    axis.plot(
        [x],
        [result.difference],
        "o",
        color=colour,
        markerfacecolor=colour if finite else "white",
        markersize=4,
    )


def plot_caption(report: ShiftReport) -> str:
    """The figure's caption, as text to set under it: what each panel, point and bar is,
    what the lines share, and the clean means the changes are from."""
    keys = {(p.shifted.task, p.shifted.seed, p.shifted.judge_image) for p in report.pairs}
    shared = []
    if len({k[0] for k in keys}) == 1:
        shared.append(f"task {next(iter(keys))[0]}")
    if len({k[1] for k in keys}) == 1:
        shared.append(f"shift seed {next(iter(keys))[1]}")
    if len({k[2] for k in keys}) == 1 and next(iter(keys))[2]:
        shared.append(f"the vision judge sees the {next(iter(keys))[2]} image")
    names = display_names(sorted({p.shifted.model for p in report.pairs}))
    clean = []
    several_tasks = len({k[0] for k in keys}) > 1
    means = {
        (p.shifted.model, p.shifted.task, metric): r.mean_a
        for p in report.pairs
        for metric, r in p.metrics.items()
    }
    for (model, task, metric), mean in sorted(means.items()):
        where = f" on {task}" if several_tasks else ""
        clean.append(f"{names[model]}{where} {metric_label(metric)} {mean:.3f}")
    text = (
        "Change under each image-quality shift (shifted − clean, on the cases both runs "
        "scored; below the dashed line is a loss), one panel per shift and metric, on the "
        "metric's whole range of change. Points: the change at each severity (1 mild, "
        "2 moderate, 3 severe), each model's beside the others'; bars: its 95% interval, "
        "cases sharing an image kept together (a hollow point has no interval: see the "
        "table's note; a triangle marks an interval cut at the axis). n: cases per pair."
    )
    if shared:
        text += " All runs: " + "; ".join(shared) + "."
    if clean:
        text += " Clean means: " + "; ".join(clean) + "."
    return text


def plot_png(report: ShiftReport) -> bytes:
    """The change of each metric against severity with its 95% interval, one panel per
    shift and metric side by side, the models beside each other in each; PNG bytes at
    print size. The caption is :func:`plot_caption`, not drawn in."""
    return png_bytes(shift_figure(report))


# --- contact sheets: the images each shifted run's model saw ---------------------------

EXAMPLE_IMAGES = 12  # images per sheet: enough to see the shift, small enough to look at
TILE = 192  # pixels a side of every tile: each image is fitted into it, whatever its size
PAIRS_PER_ROW = 3  # clean and degraded side by side, three pairs to a row
GAP, LABEL, HEAD = 12, 22, 52  # pixels: between pairs, under a pair, above the tiles
FONT_PIXELS = 14
TILE_BACKGROUND = (224, 224, 224)  # shows a tile's extent around an image of another shape


def _confined_files(folder: Path, metadata: dict[str, Any]) -> list[Path]:
    """A sample's case images under ``folder`` with the loader's confinement and decoding
    checks, each checked against the digest its run recorded; ImagePathError when refused.
    A path written in the log is never opened: only ``image_paths`` relative to ``folder``."""
    relatives = [str(relative) for relative in metadata.get("image_paths") or []]
    frame = (metadata.get("extra_metadata") or {}).get("frame")
    prepared = prepare_case_images(folder, relatives, frame)
    digests = metadata.get(DIGESTS_KEY)
    if not (isinstance(digests, list) and len(digests) == len(prepared)):
        raise ImagePathError("the log records no digest of the images its run loaded")
    for relative, image, expected in zip(relatives, prepared, digests, strict=True):
        if image.sha256 != expected:
            raise ImagePathError(f"{relative} in {folder} is not the file the run loaded")
    return [image.path for image in prepared]


class SheetImage(NamedTuple):
    """One image of a contact sheet: its clean picture, the degraded one its first case's
    model saw, and every case on the sheet that shows it (a shared image is one tile)."""

    cases: list[str]
    clean: Image.Image
    degraded: Image.Image


def tile_box(index: int, degraded: bool) -> tuple[int, int, int, int]:
    """The pixels (left, top, right, bottom) of image ``index``'s clean or degraded tile."""
    row, column = divmod(index, PAIRS_PER_ROW)
    left = GAP + column * (2 * TILE + GAP) + (TILE if degraded else 0)
    top = HEAD + row * (TILE + LABEL + GAP)
    return left, top, left + TILE, top + TILE


def fitted(picture: Image.Image) -> Image.Image:
    """``picture`` scaled (up or down, its shape kept) to fill a ``TILE`` square at its
    longer side, centred on the tile's background: every tile is one size."""
    image = picture.convert("RGB")
    scale = TILE / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    image = image.resize(size, Image.Resampling.LANCZOS if scale < 1 else Image.Resampling.NEAREST)
    tile = Image.new("RGB", (TILE, TILE), TILE_BACKGROUND)
    tile.paste(image, ((TILE - size[0]) // 2, (TILE - size[1]) // 2))
    return tile


def _font(pixels: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=pixels)
    except (TypeError, OSError):  # Pillow without FreeType: its one bitmap size
        return ImageFont.load_default()


def _sheet(images: list[SheetImage], title: str, shifted: str) -> bytes:
    """A contact sheet: per image its clean picture beside the degraded one (each tile one
    size), the cases that show it under the pair, a title and the columns' names above."""
    rows = max(1, math.ceil(len(images) / PAIRS_PER_ROW))
    columns = min(PAIRS_PER_ROW, max(1, len(images)))
    width = GAP + columns * (2 * TILE + GAP)
    sheet = Image.new("RGB", (width, HEAD + rows * (TILE + LABEL + GAP)), "white")
    draw = ImageDraw.Draw(sheet)
    font = _font(FONT_PIXELS)
    draw.text((GAP, 6), title, fill="black", font=font)
    for column in range(columns):
        for degraded, name in ((False, "clean"), (True, shifted)):
            left = tile_box(column, degraded)[0]
            draw.text((left + 4, HEAD - FONT_PIXELS - 6), name, fill="#334e68", font=font)
    for index, image in enumerate(images):
        for degraded, picture in ((False, image.clean), (True, image.degraded)):
            sheet.paste(fitted(picture), tile_box(index, degraded)[:2])
        left, _, _, bottom = tile_box(index, False)
        label = ", ".join(image.cases)
        label = label if len(label) <= 44 else label[:43] + "…"
        draw.text((left, bottom + 3), label, fill="black", font=font)
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    return buffer.getvalue()


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"


class ContactSheets(NamedTuple):
    """Contact sheets as PNG bytes by file name, and notes on the images not shown."""

    sheets: dict[str, bytes]
    notes: list[str]

    def __repr__(self) -> str:
        return f"<ContactSheets: {len(self.sheets)} sheet(s), {len(self.notes)} note(s)>"

    def _repr_html_(self) -> str:
        """Each sheet under its file name, then the notes on the images not shown."""
        import base64
        import html

        parts = [f"<p><strong>ContactSheets</strong>: {len(self.sheets)} sheet(s)</p>"]
        for name, data in self.sheets.items():
            encoded = base64.b64encode(data).decode("ascii")
            parts.append(
                f"<figure><img alt='{html.escape(name)}' style='max-width:100%' "
                f"src='data:image/png;base64,{encoded}'><figcaption>{html.escape(name)}"
                "</figcaption></figure>"
            )
        parts.extend(f"<p>note: {html.escape(note)}</p>" for note in self.notes)
        return "\n".join(parts)


def sheet_images(
    report: ShiftReport, data: str | os.PathLike[str] | None = None
) -> tuple[dict[str, tuple[str, str, list[SheetImage]]], list[str]]:
    """What :func:`contact_sheets` draws: per sheet file name its title, its shift's name
    and its images (each once, however many cases share it), and notes on what could not
    be shown."""
    found: dict[str, tuple[str, str, list[SheetImage]]] = {}
    notes: list[str] = []
    for pair in report.pairs:
        run = pair.shifted
        header = read_eval_log(str(run.path), header_only=True)
        folder = data if data is not None else run_data_folder(header)
        if folder is None:
            notes.append(f"{run.path}: no data folder recorded; name it with --data")
            continue
        images: dict[str, SheetImage] = {}  # by the clean file's recorded digest
        for sample in logged_samples(run.path, header):
            if isinstance(sample, UnreadableSample) or sample.epoch != 1:
                continue
            record = sample.metadata.get("shift")
            if not isinstance(record, dict) or (record.get("name"), record.get("severity")) != (
                run.shift,
                run.severity,
            ):
                continue  # another combination of a grid
            if len(images) >= EXAMPLE_IMAGES:
                break
            case = str(record.get("case", sample.id))
            try:
                files = _confined_files(Path(folder), sample.metadata)
                digests = [str(d) for d in sample.metadata[DIGESTS_KEY]]
                for digest in dict.fromkeys(digests):
                    if digest in images:
                        images[digest].cases.append(case)
                first = {d: i for i, d in reversed(list(enumerate(digests)))}
                new = [i for d, i in sorted(first.items(), key=lambda item: item[1])
                       if d not in images][: EXAMPLE_IMAGES - len(images)]  # fmt: skip
                if not new:
                    continue
                shown = judge_image_files(
                    files, {**sample.metadata, "shift_judge_image": "degraded"}, sample.id
                )
                for index in new:
                    label = case if len(files) == 1 else f"{case} #{index + 1}"
                    images[digests[index]] = SheetImage(
                        [label], _read_picture(files[index]), _read_picture(shown[index])
                    )
            except (ImagePathError, OSError, ValueError) as error:
                notes.append(f"{run.path}: sample {sample.id!r} not shown ({error})")
        if images:
            title = (
                f"{run.model} · {run.task} · {shift_name(run.shift or '')}, severity "
                f"{run.severity} · seed {run.seed}: the images the model saw, beside the clean"
            )
            name = f"{_safe(run.model)}_{_safe(run.task)}_{run.shift}-{run.severity}.png"
            shifted = f"{run.shift} {run.severity} (what the model saw)"
            found[name] = (title, shifted, list(images.values()))
    return found, notes


def _read_picture(path: Path) -> Image.Image:
    with Image.open(path) as picture:
        picture.load()
        return picture.copy()


def contact_sheets(
    report: ShiftReport, data: str | os.PathLike[str] | None = None
) -> ContactSheets:
    """Per shifted run (each shift and severity), a PNG of the first ``EXAMPLE_IMAGES``
    images, each once (a shared image is one tile, the cases sharing it counted under it),
    its clean picture beside the one its model saw; every tile one size. Both are read again
    from the data folder (``data``, or the folder the run recorded) with the loader's checks
    and the digest the run recorded, and degraded again from the sample's shift record
    exactly as the run degraded them. Returns the sheets by file name and notes on what
    could not be shown."""
    found, notes = sheet_images(report, data)
    sheets = {
        name: _sheet(images, title, shifted) for name, (title, shifted, images) in found.items()
    }
    return ContactSheets(sheets, notes)
