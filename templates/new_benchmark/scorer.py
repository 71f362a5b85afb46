"""Scoring: the reply's stated short answer against the reference, by normalised exact
match. A reply with no readable answer is no answer (incorrect, with why), never a guess."""

from __future__ import annotations

from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from inspect_medreason.core.short_answers import normalise_answer, read_short_answer


@scorer(metrics=[accuracy(), stderr()])
def new_benchmark_scorer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        read = read_short_answer(state.output.completion)
        if not read.text:
            return Score(value=INCORRECT, answer="", explanation=f"no answer: {read.detail}")
        correct = normalise_answer(read.text) == normalise_answer(target.text)
        return Score(
            value=CORRECT if correct else INCORRECT,
            answer=read.text,
            explanation=f"read by {read.method}",
        )

    return score
