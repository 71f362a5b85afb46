"""A run that leaves many MCQ replies unread says so: in its log and, at its end, on screen.

An unread reply (no label, or a label only a less-proven rule reads) is counted wrong in
``accuracy``; a few are expected, many mean the model answers in a form the rules do not
read, and the accuracy then measures the reader, not the model. ``unread_forms`` records
in the log how many replies stayed unread and in which form; above ``UNREAD_WARNING_SHARE``
its ``unread_warning`` is 1 and, when the task ends, ``UnreadWarning`` (an Inspect hook)
logs a warning with the commonest forms and how to bind an extractor. A metric cannot warn
itself: Inspect also computes metrics for the progress display, many times per run.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Metric, SampleScore, Value, metric

from inspect_medreason.core.extraction import LESS_PROVEN

logger = logging.getLogger(__name__)

# Above this share of unread replies a run warns (issue 59): one reply in twenty.
UNREAD_WARNING_SHARE = 0.05
UNREAD_WARNING = "unread_warning"
UNREAD_FORM_PREFIX = "unread by form:"
EXTRACTOR_HINT = (
    "bind an extractor judge to read what the rules leave unread: "
    "--model-role extractor=<model> (accuracy_extracted; docs/mcq.md, 'The extractor judge')"
)

# What each way of leaving a reply unread means, as a person would say it.
FORM_DESCRIPTIONS = {
    "empty": "empty replies",
    "thinking_only": "replies that are all reasoning (an unclosed <think>)",
    "unparsed": "no answer statement and no option's text",
    "ambiguous": "several options given as the answer",
    "invalid_label": "a label the question does not have",
    "no_option": "a last stated answer that names no option",
    "denied_label": "a label given only to deny it",
    "broken_tag": "broken or nested <answer> tags",
}


def unread_form(metadata: Mapping[str, object] | None) -> str:
    """The form of an unread reply: its method, and for a less-proven reading its rule."""
    method = str((metadata or {}).get("extraction_method") or "unparsed")
    if method == LESS_PROVEN:
        return f"{LESS_PROVEN}:{(metadata or {}).get('extraction_rule') or 'unknown'}"
    return method


def describe_form(form: str) -> str:
    if form.startswith(f"{LESS_PROVEN}:"):
        return f"a label only the less-proven rule {form.split(':', 1)[1]} reads"
    return FORM_DESCRIPTIONS.get(form, form)


@metric
def unread_forms() -> Metric:
    """``unread_warning`` (1 when more than ``UNREAD_WARNING_SHARE`` of the scored replies
    are unread) and, per form, how many replies stayed unread (``unread by form:ambiguous``,
    ``unread by form:less_proven:boxed``); with several epochs a case counts the share of
    its epochs left unread."""

    def compute(scores: list[SampleScore]) -> Value:
        counts: dict[str, float] = {}
        scored = 0
        for sample in scores:
            value = sample.score.value
            if not isinstance(value, dict) or not isinstance(value.get("parsed"), int | float):
                continue
            parsed = float(value["parsed"])
            if math.isnan(parsed):
                continue
            scored += 1
            if parsed < 1.0:
                form = unread_form(sample.score.metadata)
                counts[form] = counts.get(form, 0.0) + 1.0 - parsed
        unread = math.fsum(counts.values())
        result: dict[str, float] = {
            UNREAD_WARNING: float(bool(scored) and unread / scored > UNREAD_WARNING_SHARE)
        }
        for form, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            result[f"{UNREAD_FORM_PREFIX}{form}"] = count
        return result

    return compute


def unread_warning_message(log: EvalLog) -> str | None:
    """The warning for a finished run whose ``unread_warning`` is 1, else None."""
    if log.results is None:
        return None
    for score in log.results.scores:
        flag = score.metrics.get(UNREAD_WARNING)
        if flag is None or flag.value != 1:
            continue
        forms = {
            name.removeprefix(UNREAD_FORM_PREFIX): metric.value
            for name, metric in score.metrics.items()
            if name.startswith(UNREAD_FORM_PREFIX)
        }
        share = score.metrics.get("unparsed")
        scored = score.scored_samples
        unread = math.fsum(forms.values())
        commonest = "; ".join(
            f"{count:g} {describe_form(form)}" for form, count in list(forms.items())[:3]
        )
        share_text = f"{share.value:.1%}" if share is not None else "many"
        of = f" ({unread:g} of {scored})" if scored else ""
        extractor = score.metrics.get("extractor_read")
        remedy = (
            f"the extractor read {extractor.value:g} of them (accuracy_extracted)"
            if extractor is not None
            else EXTRACTOR_HINT
        )
        return (
            f"{log.eval.task}: {share_text} of the replies{of} have no answer the rules read "
            f"(counted wrong in accuracy; over {UNREAD_WARNING_SHARE:.0%}). Commonest: "
            f"{commonest}. Each score's explanation says why (inspect view); {remedy}."
        )
    return None


@hooks(
    name="inspect_medreason_unread_warning",
    description="Warns at the end of an MCQ run that leaves over 5% of its replies unread.",
)
class UnreadWarning(Hooks):
    async def on_task_end(self, data: TaskEnd) -> None:
        message = unread_warning_message(data.log)
        if message is not None:
            logger.warning(message)
