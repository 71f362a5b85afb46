"""CMB solvers: the upstream exam prompt with optional few-shot examples, and the clinical
conversation.
"""

from __future__ import annotations

import random
from typing import Any, cast

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from inspect_medreason.cmb.dataset import exam_options


def render_exam_question(template: Any, row: dict[str, Any]) -> str:
    options = "\n".join(f"{label}. {text}" for label, text in exam_options(row))
    return cast(str, template.render(
        exam_type=row.get("exam_type", ""), exam_class=row.get("exam_class", ""),
        question_type=row.get("question_type", ""), question=row.get("question", ""), options=options,
    )).strip()  # fmt: skip


def fewshot_messages(
    pool: list[dict[str, Any]], row: dict[str, Any], shots: int, seed: int, template: Any, cot: bool
) -> list[ChatMessage]:
    """``shots`` worked examples from the validation pool, same exam_class when possible,
    drawn with a seed fixed per question so runs and subsets agree."""
    same = [r for r in pool if r.get("exam_class") == row.get("exam_class")]
    candidates = same if len(same) >= shots else pool
    rng = random.Random(f"{seed}:{row.get('exam_class')}:{row.get('question')}")
    examples = rng.sample(candidates, min(shots, len(candidates)))
    messages: list[ChatMessage] = []
    for example in examples:
        answer = str(example.get("answer", ""))
        reply = (
            f"{str(example.get('explanation') or '').strip()}所以答案是{answer}" if cot else answer
        )
        messages.append(ChatMessageUser(content=render_exam_question(template, example)))
        messages.append(ChatMessageAssistant(content=reply))
    return messages


@solver
def clinical_conversation() -> Solver:
    """Ask the case's questions in turn, keeping the model's own answers in the history."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        questions: list[str] = state.metadata["questions"]
        answers: list[str] = []
        for turn, question in enumerate(questions):
            if turn > 0:
                state.messages.append(ChatMessageUser(content=question))
            state = await generate(state)
            answers.append(state.output.completion)
        state.metadata["answers"] = answers
        return state

    return solve
