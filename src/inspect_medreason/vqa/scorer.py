"""Scoring of VQA-RAD, SLAKE and PathVQA.

The answer is the one the reply states (``short_answers.read_short_answer``: a JSON answer
field, ``ANSWER:``/``答案是``, "the answer is", ``<answer>``, ``\\boxed{}``, else a reply
opening with yes or no, else a one-line reply; never a ``<think>`` block).

Closed (yes/no) questions: the final yes or no the reply commits to
(``read_committed_yes_no``: "No. Wait, actually yes." is yes; "Yes.\nNo." and "yes and no"
are no answer), under the dataset's own yes/no vocabulary (``yes_no_vocabulary``: VQA-RAD
and PathVQA count yes and no only, SLAKE its English and Chinese synonyms). Other closed answers (SLAKE's "which is
larger...") by normalised exact match of the text. Open questions: a normalised exact match
counts as correct without a judge call, otherwise the ``grader`` role decides; a grader
failure is unscored, never wrong.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    accuracy,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState

from inspect_medreason.core.intervals import image_stderr
from inspect_medreason.core.judges import (
    JUDGE_DEFAULTS,
    JudgeSettings,
    LineageWatch,
    grade_correctness,
)
from inspect_medreason.core.metrics import breakdown, scored_samples
from inspect_medreason.core.params import coerce_bool
from inspect_medreason.core.short_answers import (
    ShortAnswer,
    closed_form,
    normalise_answer,
    read_committed_yes_no,
    read_short_answer,
    yes_no,
    yes_no_vocabulary,
)


def _subset_mean(scores: list[SampleScore], field: str, value: str) -> float:
    chosen = [
        s.score.as_float()
        for s in scored_samples(scores)
        if (s.sample_metadata or {}).get(field) == value
    ]
    return sum(chosen) / len(chosen) if chosen else float("nan")


@metric(name="accuracy_closed")
def accuracy_closed() -> Metric:
    """Accuracy over closed (yes/no) questions."""

    def compute(scores: list[SampleScore]) -> Value:
        return _subset_mean(scores, "answer_type", "closed")

    return compute


@metric(name="accuracy_open")
def accuracy_open() -> Metric:
    """Accuracy over open questions (graded by the ``grader`` role)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _subset_mean(scores, "answer_type", "open")

    return compute


def closed_correct(
    answer: str, reference: str, vocabulary: str = "default", question: str | None = None
) -> bool:
    """A yes/no reference: the answer's polarity (the question decides 正常/异常); any other:
    the same text once normalised, without articles and plural -s (``closed_form``)."""
    expected = yes_no(reference, vocabulary, question)
    if expected is not None:
        return yes_no(answer, vocabulary, question) == expected
    return bool(answer) and closed_form(answer) == closed_form(reference)


def _closed_explanation(
    read: ShortAnswer, reference: str, vocabulary: str, question: str | None = None
) -> str:
    """Why a closed answer scored as it did; a missing or unreadable answer says why."""
    answer = read.text
    if not answer:
        return f"closed: no answer ({read.detail}): counted wrong; reference {reference!r}"
    expected = yes_no(reference, vocabulary, question)
    if expected is None:
        return (
            f"closed: {answer!r} vs {reference!r} (normalised exact match, articles and "
            "plural -s dropped)"
        )
    said, reason = read_committed_yes_no(read, vocabulary, question)
    if said is None:
        return f"closed: no yes/no answer ({reason}): counted wrong; reference {reference!r}"
    how = f", {reason}" if reason else ""
    return f"closed: {answer!r} read as {said!r} ({vocabulary} vocabulary{how}) vs {reference!r}"


def closed_reply_correct(
    read: ShortAnswer, reference: str, vocabulary: str = "default", question: str | None = None
) -> bool:
    """``closed_correct`` of a whole reply: a yes/no reference is compared with the final yes
    or no the reply commits to (``read_committed_yes_no``: "No. Wait, actually yes." is
    yes; "Yes.\nNo." is no answer)."""
    expected = yes_no(reference, vocabulary, question)
    if expected is not None:
        return read_committed_yes_no(read, vocabulary, question)[0] == expected
    return closed_correct(read.text, reference, vocabulary, question)


def vqa_metrics(group_fields: list[str]) -> list[Metric | dict[str, list[Metric]]]:
    base: list[Metric | dict[str, list[Metric]]] = [
        accuracy(),
        image_stderr(),
        accuracy_closed(),
        accuracy_open(),
    ]
    return [*base, *breakdown(group_fields, of="accuracy")]


def yes_no_vocabulary_of(name: str) -> str:
    """The vocabulary's name, checked when the scorer is built (an unknown one is a clear
    error before any sample runs)."""
    return yes_no_vocabulary(name).name


@scorer(metrics=vqa_metrics([]))
def vqa_scorer(
    allow_self_judging: bool = False,
    judge_temperature: float = JUDGE_DEFAULTS.temperature,
    judge_seed: int = JUDGE_DEFAULTS.seed,
    judge_max_tokens: int = JUDGE_DEFAULTS.max_tokens,
    judge_retries: int = JUDGE_DEFAULTS.retries,
    judge_structured_output: bool = JUDGE_DEFAULTS.structured_output,
    judge_cache: bool = JUDGE_DEFAULTS.cache,
    judge_timeout: float = JUDGE_DEFAULTS.timeout,
    judge_max_connections: int | None = JUDGE_DEFAULTS.max_connections,
    judge_failure: str = JUDGE_DEFAULTS.failure,
    yes_no_vocabulary: str = "default",
) -> Scorer:
    """Closed: yes/no under the dataset's vocabulary (``yes_no_vocabulary``: ``vqa_rad``,
    ``path_vqa``, ``slake`` or ``default``), else normalised exact match. Open: exact match,
    else the ``grader`` role."""
    settings = JudgeSettings.from_args(
        temperature=judge_temperature,
        seed=judge_seed,
        max_tokens=judge_max_tokens,
        retries=judge_retries,
        structured_output=judge_structured_output,
        cache=judge_cache,
        timeout=judge_timeout,
        max_connections=judge_max_connections,
        failure=judge_failure,
    )
    self_judging = coerce_bool(allow_self_judging, "allow_self_judging")
    vocabulary = yes_no_vocabulary_of(yes_no_vocabulary)
    lineage = LineageWatch()

    async def score(state: TaskState, target: Target) -> Score:
        read = read_short_answer(state.output.completion)
        answer, method = read.text, read.method
        reference = target.text
        details: dict[str, Any] = {
            "extracted_answer": answer,
            "extraction_method": method,
            "reference": reference,
        }
        if state.metadata.get("answer_type") == "closed":
            details["yes_no_vocabulary"] = vocabulary
            question = str(state.metadata.get("question", ""))
            correct = closed_reply_correct(read, reference, vocabulary, question)
            return Score(
                value=float(correct),
                answer=answer,
                metadata=details,
                explanation=_closed_explanation(read, reference, vocabulary, question),
            )
        if not answer:
            return Score(
                value=0.0,
                answer="",
                metadata=details,
                explanation=f"no final answer in the reply ({read.detail}): counted wrong",
            )
        if normalise_answer(answer) == normalise_answer(reference):
            return Score(
                value=1.0,
                answer=answer,
                metadata={**details, "graded_by": "exact_match"},
                explanation="open: exact match with the reference",
            )
        outcome = await grade_correctness(
            state.metadata.get("question", ""), reference, answer, settings, self_judging, lineage
        )
        details["grader"] = outcome.as_metadata()
        if outcome.score is None:
            return Score.unscored(reason=outcome.failure, answer=answer, metadata=details)
        return Score(
            value=float(outcome.score),
            answer=answer,
            metadata=details,
            explanation=f"open, grader: {outcome.rationale}",
        )

    return score
