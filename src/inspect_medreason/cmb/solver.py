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

from inspect_medreason.cmb.dataset import CMB_VAL_HUB, exam_options, exam_row_problems
from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.hub import load_rows
from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.core.params import coerce_int
from inspect_medreason.core.prompts import load_template


def render_exam_question(template: Any, row: dict[str, Any]) -> str:
    options = "\n".join(f"{label}. {text}" for label, text in exam_options(row))
    return cast(
        str,
        template.render(
            exam_type=row.get("exam_type", ""),
            exam_class=row.get("exam_class", ""),
            question_type=row.get("question_type", ""),
            question=row.get("question", ""),
            options=options,
        ),
    ).strip()


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


def fewshot_pool(fewshot_data: str | None, revision: str | None) -> list[dict[str, Any]]:
    """The validation rows the worked examples are drawn from, checked as the questions
    are (every field of its published type, each with its answer): an example is shown to
    the model, so a wrong one changes every answer after it."""
    loaded = load_rows(fewshot_data, CMB_VAL_HUB, revision)
    problems = exam_row_problems(loaded, require_answer=True)
    if problems:
        raise DatasetError(problems)
    return loaded.rows


def metadata_row(metadata: dict[str, Any]) -> dict[str, Any]:
    """A sample's metadata in the row form the upstream prompt is rendered from."""
    return {**metadata, "option": {label: text for label, text in metadata.get("options", [])}}


@solver
def cmb_exam_prompt(
    prompt: str = "answer_only",
    fewshot: int = 0,
    fewshot_data: str | None = None,
    seed: int = 42,
    revision: str | None = None,
) -> Solver:
    """The upstream CMB-Exam prompt (``answer_only`` or ``cot``) with ``fewshot`` worked
    examples from the validation split before the question, then generate."""
    if prompt not in {"answer_only", "cot"}:
        raise TaskArgumentError(f"-T prompt={prompt!r}: choose answer_only or cot")
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    pool = fewshot_pool(fewshot_data, revision) if shots else []
    template = load_template(f"cmb_{prompt}_user", family="cmb")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        row = metadata_row(state.metadata)
        state.messages = [
            *fewshot_messages(pool, row, shots, fewshot_seed, template, prompt == "cot"),
            ChatMessageUser(content=render_exam_question(template, row)),
        ]
        return await generate(state)

    return solve


@solver
def clinical_conversation() -> Solver:
    """Ask the case's questions in turn (the first with the case description, in the
    upstream template), keeping the model's own answers in the history."""
    template = load_template("cmb_clin_user", family="cmb")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        questions: list[str] = state.metadata["questions"]
        first = template.render(
            description=state.metadata["description"], question=questions[0]
        ).strip()
        state.messages = [ChatMessageUser(content=first)]
        answers: list[str] = []
        for turn, question in enumerate(questions):
            if turn > 0:
                state.messages.append(ChatMessageUser(content=question))
            state = await generate(state)
            answers.append(state.output.completion)
        state.metadata["answers"] = answers
        return state

    return solve
