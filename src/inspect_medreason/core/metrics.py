"""Metrics shared by the tasks: per-group breakdowns and the MCQ accuracy family.

Unscored samples (no reference, a failed judge) are left out of every mean, never counted as
zero; ``unparsed`` reports how many replies had no readable answer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Value,
    ValueToFloat,
    accuracy,
    ci_wilson,
    grouped,
    mean,
    metric,
    stderr,
    value_to_float,
)

from inspect_medreason.core.intervals import (
    IMAGE_CLUSTER,
    LEVEL,
    RESAMPLES,
    SEED,
    bootstrap_interval,
    case_cluster,
)
from inspect_medreason.core.loaders import UNKNOWN_GROUP

MCQ_GROUP_FIELDS = ("modality", "organ_system")
# Every MedReason-layout sample carries these (UNKNOWN_GROUP when the case names none), so a
# grouped metric over any of them never meets a sample without its key.
CASE_GROUP_FIELDS = (*MCQ_GROUP_FIELDS, "task")


class _SharedOnCopy:
    """Mixin: copies (deep or shallow) of a finished record are the record itself."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self

    def __copy__(self) -> Any:
        return self

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("score metadata is read-only once the scorer has returned it")


class ReadOnlyRecord(_SharedOnCopy, dict[str, Any]):
    """A dict in score metadata that Inspect's copies share instead of deep-copying."""

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = (
        _SharedOnCopy._read_only
    )

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return dict, (dict(self),)  # unpickled as a plain dict


class ReadOnlyList(_SharedOnCopy, list[Any]):
    """A list in score metadata that Inspect's copies share instead of deep-copying."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = (
        clear
    ) = sort = reverse = _SharedOnCopy._read_only

    def __reduce__(self) -> tuple[type, tuple[list[Any]]]:
        return list, (list(self),)


def shared_score_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Score metadata whose records Inspect's per-metric copies share.

    Inspect deep-copies every sample's score once per key of a dictionary score each time it
    computes metrics (about once a second for the progress display, and again at the end).
    With the judges' records in the metadata that copying was a third of a judged run's CPU
    (7 s of 22 s of a profiled 300-case run, perf/bench_judge.py). A score's metadata is written
    once by its scorer and only read afterwards, so the copies can share it: each record or
    list in it becomes a read-only container that copies share, holding plain dicts and lists
    (what is inside is shared as it is: a change to it would show through every copy, so
    nothing may change it). Only the outer containers are wrapped because pydantic serialises
    a dict subclass on a slower path: wrapping every level made each of the several
    serialisations of a score per sample four times slower (72 against 17 microseconds). In
    the log they are ordinary JSON objects and arrays.
    """
    return {key: _read_only(value) for key, value in metadata.items()}


def _read_only(value: Any) -> Any:
    if isinstance(value, dict):
        return ReadOnlyRecord(value)
    if isinstance(value, list):
        return ReadOnlyList(value)
    return value


def breakdown(
    fields: list[str], of: str | None = None, to_float: ValueToFloat | None = None
) -> list[Metric]:
    """Means per value of each metadata field (``modality:CT``), one Inspect ``grouped()``
    per field. ``of`` names the score broken down where the column does not ("accuracy by
    modality:CT"); in a dictionary score the column is the score's own key."""
    label = f"{of} by " if of else ""
    average = mean(to_float) if to_float else mean()
    return [
        grouped(average, field, all=False, name_template=f"{label}{field}:{{group_name}}")
        for field in fields
    ]


def scored_samples(scores: list[SampleScore]) -> list[SampleScore]:
    return [
        s for s in scores if not (isinstance(s.score.value, float) and math.isnan(s.score.value))
    ]


def component(key: str) -> ValueToFloat:
    """A ``ValueToFloat`` reading one key of a dictionary score, so Inspect's own metrics
    (``accuracy``, ``stderr``, ``ci_wilson``, ``grouped``) summarise one component of it.

    The numbers a metric reports must be in the score's value, not its metadata: Inspect's
    epoch reducers average a dictionary value key by key but keep the first epoch's metadata,
    so a metric read from metadata would describe the first epoch only. A float score (a log
    written before the MCQ score was a dictionary) is its own accuracy.
    """
    to_float = value_to_float()

    def read(value: Value) -> float:
        if isinstance(value, dict):
            part = value.get(key)
            return math.nan if part is None else to_float(part)
        return to_float(value)

    return read


def component_values(scores: list[SampleScore], key: str) -> list[float]:
    """The scored cases' values of one key (a case without it, or NaN, is left out)."""
    read = component(key)
    values = (read(s.score.value) for s in scores)
    return [value for value in values if not math.isnan(value)]


def component_mean(scores: list[SampleScore], key: str) -> float:
    """Mean of one key of a dictionary score over the cases that have it (NaN when none)."""
    values = component_values(scores, key)
    return math.fsum(values) / len(values) if values else math.nan


@metric
def strict_accuracy() -> Metric:
    """The official rule on the raw answer field: ``answer.strip() == label``."""

    def compute(scores: list[SampleScore]) -> Value:
        return component_mean(scores, "strict_correct")

    return compute


@metric
def parsed_accuracy() -> Metric:
    """Accuracy over the replies from which a label was extracted: correct replies over
    replies read (an unread reply is never correct), pooled over every epoch's replies."""

    read_correct, read_parsed = component("correct"), component("parsed")

    def compute(scores: list[SampleScore]) -> Value:
        pairs = [
            (read_correct(s.score.value), read_parsed(s.score.value))
            for s in scores
            if isinstance(s.score.value, dict)
        ]
        read = math.fsum(parsed for correct, parsed in pairs if not math.isnan(parsed))
        correct = math.fsum(correct for correct, parsed in pairs if not math.isnan(parsed))
        return correct / read if read else math.nan

    return compute


@metric
def unparsed() -> Metric:
    """Share of replies with no extractable label (ambiguous, silent or empty)."""

    def compute(scores: list[SampleScore]) -> Value:
        return 1.0 - component_mean(scores, "parsed")

    return compute


@metric
def official_template_accuracy() -> Metric:
    """The official rule on what the challenge's template container would have submitted
    (its ``parse_reasoning_and_answer`` then ``normalize_mcq_answer``, guesses included)."""

    def compute(scores: list[SampleScore]) -> Value:
        return component_mean(scores, "official_template_correct")

    return compute


@metric
def official_baseline_accuracy() -> Metric:
    """The official rule on what the challenge's Qwen2.5-VL baseline container would have
    submitted (its reply parser, first option when it reads nothing)."""

    def compute(scores: list[SampleScore]) -> Value:
        return component_mean(scores, "official_baseline_correct")

    return compute


@metric
def official_template_differs() -> Metric:
    """How many scored cases the template container reads differently from ``accuracy``'s
    label (a different label, or a label where this reader found no answer); with several
    epochs, the mean over epochs of that count."""

    def compute(scores: list[SampleScore]) -> Value:
        return math.fsum(component_values(scores, "official_template_differs"))

    return compute


@metric
def official_baseline_differs() -> Metric:
    """How many scored cases the baseline container reads differently from ``accuracy``'s
    label; with several epochs, the mean over epochs of that count."""

    def compute(scores: list[SampleScore]) -> Value:
        return math.fsum(component_values(scores, "official_baseline_differs"))

    return compute


# The keys the extractor judge adds to an MCQ score's value (core.extractor; only when the
# ``extractor`` role is bound).
EXTRACTED_CORRECT = "extracted_correct"
EXTRACTOR_ASKED = "extractor_asked"
EXTRACTOR_READ = "extractor_read"
EXTRACTOR_FAILED = "extractor_failed"
EXTRACTOR_AGREES = "extractor_agrees"


@metric
def extractor_metrics() -> Metric:
    """``accuracy_extracted`` and the extractor's counts, reported only when some score
    carries the extractor's keys (a run without the role reports exactly what it did
    before): ``accuracy_extracted_unscored`` (unread replies the extractor failed on),
    ``extractor_asked``, ``extractor_read`` (unread replies it read a label from),
    ``extractor_failed``, ``extractor_agreement`` and ``extractor_agreement_cases``."""

    def compute(scores: list[SampleScore]) -> Value:
        if not any(
            isinstance(s.score.value, dict) and EXTRACTED_CORRECT in s.score.value for s in scores
        ):
            return {}
        extracted = component_values(scores, EXTRACTED_CORRECT)
        carrying = [
            s
            for s in scores
            if isinstance(s.score.value, dict) and EXTRACTED_CORRECT in s.score.value
        ]
        agreement = component_values(scores, EXTRACTOR_AGREES)
        return {
            "accuracy_extracted": math.fsum(extracted) / len(extracted) if extracted else math.nan,
            "accuracy_extracted_unscored": float(len(carrying) - len(extracted)),
            "extractor_asked": math.fsum(component_values(scores, EXTRACTOR_ASKED)),
            "extractor_read": math.fsum(component_values(scores, EXTRACTOR_READ)),
            "extractor_failed": math.fsum(component_values(scores, EXTRACTOR_FAILED)),
            "extractor_agreement": math.fsum(agreement) / len(agreement) if agreement else math.nan,
            "extractor_agreement_cases": float(len(agreement)),
        }

    return compute


def mcq_metrics(breakdown_fields: Sequence[str] = MCQ_GROUP_FIELDS) -> list[Metric]:
    """``accuracy`` counts an unparsed reply as wrong, as the challenge does; with
    ``parsed_accuracy`` and ``unparsed`` beside it, what extraction costs is visible.

    The score is a dictionary (``correct``, ``strict_correct``, ``parsed``, the official
    readings) so that Inspect's epoch reducers reduce every number reported here; the metrics
    are one list, each reading its key in place (``component``): a dictionary of metric lists
    would have Inspect deep-copy every sample's score once per key at each metrics pass.
    """
    correct = component("correct")
    return [
        accuracy(to_float=correct),
        stderr(to_float=correct),
        ci_wilson(to_float=correct),  # the 95% Wilson score interval of the accuracy
        strict_accuracy(),
        parsed_accuracy(),
        unparsed(),
        official_template_accuracy(),
        official_template_differs(),
        official_baseline_accuracy(),
        official_baseline_differs(),
        *breakdown(list(breakdown_fields), of="accuracy", to_float=correct),
        extractor_metrics(),  # reports nothing unless the extractor role is bound
    ]


@metric(name="components")
def score_components(
    components: Mapping[str, Sequence[str]],
    cluster: str = IMAGE_CLUSTER,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Metric:
    """The components of a dictionary score, each read in place (``components`` maps each
    key to the metadata fields it is broken down by): its mean (named for the key),
    ``{key}_stderr`` (as Inspect's ``stderr()``), the 95% cluster-bootstrap interval
    ``{key}_lower``/``{key}_upper`` (cases sharing an image resampled together), the number
    of cases that left it unscored (``{key}_unscored``: NaN or absent, never counted as zero)
    and a mean per value of each field (``{key} by modality:CT``).

    Inspect's own way, a dictionary of metric lists keyed by component, deep-copies every
    sample's score (with its metadata and the sample's) once per key at each metrics pass:
    the open-ended score's four keys made a pass cost 8 times a float score's (0.22 against
    0.027 s on 1,000 cases), and Inspect repeats the pass through the run for its progress
    display, spaced at ten times its cost. Here nothing is copied, each case's cluster is
    derived once per pass for all components, and components with as many scored clusters
    share one bootstrap draw.
    """
    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> Value:
        clusters = [case_cluster(s.sample_metadata, s.sample_id, cluster) for s in scores]
        result: dict[str, float] = {}
        for key, breakdown_fields in components.items():
            values: list[float] = []
            kept: list[int] = []
            for row, sample_score in enumerate(scores):
                value = sample_score.score.value
                component = value.get(key) if isinstance(value, dict) else None
                number = math.nan if component is None else to_float(component)
                if not math.isnan(number):
                    values.append(number)
                    kept.append(row)
            count = len(values)
            interval = bootstrap_interval(
                values, [clusters[row] for row in kept], level, resamples, seed
            )
            result[key] = statistics.fmean(values) if count else math.nan
            result[f"{key}_stderr"] = _standard_error(values)
            result[f"{key}_lower"] = interval.lower
            result[f"{key}_upper"] = interval.upper
            result[f"{key}_unscored"] = float(len(scores) - count)
            for field in breakdown_fields:
                groups: dict[str, list[float]] = {}
                for number, row in zip(values, kept, strict=True):
                    group = (scores[row].sample_metadata or {}).get(field, UNKNOWN_GROUP)
                    groups.setdefault(str(group), []).append(number)
                for group, members in groups.items():
                    result[f"{key} by {field}:{group}"] = statistics.fmean(members)
        return result

    return compute


def _standard_error(values: Sequence[float]) -> float:
    """The standard error of the mean as Inspect's ``stderr()`` gives it (sample standard
    deviation over the square root of n; 0 for one value), NaN for none. In plain floats, not
    ``statistics.stdev``, which raises on an infinite value (an edited log can hold one)."""
    count = len(values)
    if count < 2:
        return 0.0 if count else math.nan
    centre = math.fsum(values) / count
    return math.sqrt(math.fsum((value - centre) ** 2 for value in values) / (count - 1) / count)
