"""Metrics shared by the tasks: per-group breakdowns and the MCQ accuracy family.

Unscored samples (no reference, a failed judge) are left out of every mean, never counted as
zero; ``unparsed`` reports how many replies had no readable answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Value,
    ValueToFloat,
    accuracy,
    grouped,
    mean,
    metric,
    value_to_float,
)

from inspect_medreason.core.intervals import image_ci, image_stderr
from inspect_medreason.core.unread_warning import unread_forms

MCQ_GROUP_FIELDS = ("modality", "organ_system")
# Every MedReason-layout sample carries these (UNKNOWN_GROUP when the case names none), so a
# grouped metric over any of them never meets a sample without its key.
CASE_GROUP_FIELDS = (*MCQ_GROUP_FIELDS, "task")


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
    (``accuracy``, ``grouped``) and this project's (``image_ci``, ``stderr``) summarise one component of it.

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
        image_stderr(to_float=correct),  # both count images, not cases
        image_ci(top=1.0, to_float=correct),
        strict_accuracy(),
        parsed_accuracy(),
        unparsed(),
        official_template_accuracy(),
        official_template_differs(),
        official_baseline_accuracy(),
        official_baseline_differs(),
        *breakdown(list(breakdown_fields), of="accuracy", to_float=correct),
        extractor_metrics(),  # reports nothing unless the extractor role is bound
        unread_forms(),  # in the log, and a warning at the end, above 5% unread
    ]


@metric
def scored_mean(key: str) -> Metric:
    """The mean of one key of a dictionary score over the cases that scored it (a NaN
    component, a failed judge, is left out, never counted as zero), for a breakdown of that
    key with ``grouped()`` beside the scorer's dictionary of metrics."""

    def compute(scores: list[SampleScore]) -> Value:
        return component_mean(scores, key)

    return compute


def component_metrics() -> list[Metric]:
    """One component of a dictionary score, Inspect's way (its list in the scorer's
    dictionary of metrics, logged as a score named for the key): ``mean``, ``stderr`` and
    ``image_ci`` (``lower``/``upper``, the 95% interval on the 0-4 scale), both counting
    images, not cases. Inspect leaves a NaN component out of all three and counts it in the
    score's ``unscored_samples``."""
    return [mean(), image_stderr(), image_ci(top=4.0)]


def component_breakdowns(components: Mapping[str, Sequence[str]]) -> list[Metric]:
    """A ``grouped()`` mean per metadata field of each component (``components`` maps a key
    to its fields), named ``{key} by {field}:{value}`` among the scorer's own metrics.

    They sit beside the dictionary of metrics, not in its lists: in a dictionary of metrics
    Inspect keeps one metric per name and key, so a second ``grouped()`` on one key is
    dropped without a word (docs/inspect_notes.md has the reproduction)."""
    return [
        grouped(
            scored_mean(key), field, all=False, name_template=f"{key} by {field}:{{group_name}}"
        )
        for key, fields in components.items()
        for field in fields
    ]
