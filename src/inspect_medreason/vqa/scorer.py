"""Scoring of VQA-RAD, SLAKE and PathVQA.

Closed (yes/no) questions: normalised exact match of the final answer (English and Chinese
yes/no synonyms); other closed answers (SLAKE's "which is larger...") by normalised exact
match of the text. Open questions: a normalised exact match counts as correct without a judge
call, otherwise the ``grader`` role decides; a grader failure is unscored, never wrong.
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
    stderr,
)
from inspect_ai.solver import TaskState

from inspect_medreason.judges import (
    JudgeSettings,
    grade_correctness,
)
from inspect_medreason.metrics import breakdown, scored_samples
from inspect_medreason.params import coerce_bool
from inspect_medreason.short_answers import final_answer, normalise_answer, yes_no


def _subset_mean(scores: list[SampleScore], field: str, value: str) -> float:
    chosen = [s.score.as_float() for s in scored_samples(scores)
              if (s.sample_metadata or {}).get(field) == value]  # fmt: skip
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


def closed_correct(answer: str, reference: str) -> bool:
    expected = yes_no(reference)
    if expected is not None:
        return yes_no(answer) == expected
    return bool(answer) and normalise_answer(answer) == normalise_answer(reference)


def vqa_metrics(group_fields: list[str]) -> list[Metric | dict[str, list[Metric]]]:
    base: list[Metric | dict[str, list[Metric]]] = [
        accuracy(), stderr(), accuracy_closed(), accuracy_open(),
    ]  # fmt: skip
    return [*base, *breakdown(group_fields, of="accuracy")]


@scorer(metrics=vqa_metrics([]))
def vqa_scorer(allow_self_judging: bool = False, **judge_args: Any) -> Scorer:
    """Closed: normalised exact match. Open: exact match, else the ``grader`` role."""
    settings = JudgeSettings.from_judge_args(judge_args)
    self_judging = coerce_bool(allow_self_judging, "allow_self_judging")

    async def score(state: TaskState, target: Target) -> Score:
        answer, method = final_answer(state.output.completion)
        reference = target.text
        details: dict[str, Any] = {
            "extracted_answer": answer, "extraction_method": method, "reference": reference,
        }  # fmt: skip
        if state.metadata.get("answer_type") == "closed":
            correct = closed_correct(answer, reference)
            return Score(value=float(correct), answer=answer, metadata=details,
                         explanation=f"closed: {answer!r} vs {reference!r}")  # fmt: skip
        if not answer:
            return Score(value=0.0, answer="", metadata=details,
                         explanation="no final answer in the reply: counted wrong")  # fmt: skip
        if normalise_answer(answer) == normalise_answer(reference):
            return Score(value=1.0, answer=answer, metadata={**details, "graded_by": "exact_match"},
                         explanation="open: exact match with the reference")  # fmt: skip
        outcome = await grade_correctness(
            state.metadata.get("question", ""), reference, answer, settings, self_judging
        )
        details["grader"] = outcome.as_metadata()
        if outcome.score is None:
            return Score.unscored(reason=outcome.failure, answer=answer, metadata=details)
        return Score(value=float(outcome.score), answer=answer, metadata=details,
                     explanation=f"open, grader: {outcome.rationale}")  # fmt: skip

    return score
