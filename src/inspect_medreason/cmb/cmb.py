"""CMB tasks.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageUser,
)
from inspect_ai.solver import generate

from inspect_medreason.cmb.dataset import CMB_CLIN_HUB, CMB_EXAM_HUB, CMB_VAL_HUB, exam_options
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.cmb.solver import (
    clinical_conversation,
    fewshot_messages,
    render_exam_question,
)
from inspect_medreason.errors import TaskArgumentError
from inspect_medreason.hub import load_rows
from inspect_medreason.judges import require_judge_roles
from inspect_medreason.loaders import DatasetError, Problem
from inspect_medreason.params import DEFAULT_GENERATE_CONFIG, coerce_bool, coerce_int
from inspect_medreason.prompts import load_template

CMB_TASK_VERSION = "1.1.0"


@task(version=CMB_TASK_VERSION)
def cmb_exam(
    data: str | None = None,
    fewshot: int = 0,
    fewshot_data: str | None = None,
    prompt: str = "answer_only",
    extraction: str = "safe",
    order_sensitive: bool = False,
    seed: int = 42,
    revision: str | None = None,
) -> Task:
    """CMB-Exam test split (11,200 questions). ``prompt=answer_only|cot``; ``fewshot=N``
    examples from the validation split (``fewshot_data`` for a local copy)."""
    if prompt not in {"answer_only", "cot"}:
        raise TaskArgumentError(f"-T prompt={prompt!r}: choose answer_only or cot")
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    loaded = load_rows(data, CMB_EXAM_HUB, revision)
    source = str(data or CMB_EXAM_HUB.path)
    pool = load_rows(fewshot_data, CMB_VAL_HUB, revision).rows if shots else []
    template = load_template(f"cmb_{prompt}_user")
    problems: list[Problem] = []
    samples = []
    for index, row in enumerate(loaded.rows):
        case_id = str(row.get("id", f"cmb_exam_{index:05d}"))
        options = exam_options(row)
        answer = str(row.get("answer", "")).strip()
        if not options or not answer or not set(answer) <= {label for label, _ in options}:
            problems.append(
                Problem(source, case_id, "answer", f"{answer!r} is not made of option labels")
            )
            continue
        messages = [*fewshot_messages(pool, row, shots, fewshot_seed, template, prompt == "cot"),
                    ChatMessageUser(content=render_exam_question(template, row))]  # fmt: skip
        samples.append(Sample(id=case_id, input=messages, target=answer, metadata={
            "exam_type": str(row.get("exam_type") or "unknown"), "exam_class": str(row.get("exam_class") or "unknown"),
            "exam_subject": str(row.get("exam_subject") or "unknown"),
            "question_type": str(row.get("question_type") or ""), "options": [list(o) for o in options],
        }))  # fmt: skip
    if problems:
        raise DatasetError(problems)
    return Task(
        dataset=MemoryDataset(samples, name="cmb_exam", location=source),
        solver=generate(),
        scorer=cmb_exam_scorer(extraction=extraction, order_sensitive=order_sensitive),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": loaded.origin,
            "prompt": prompt,
            "fewshot": shots,
            "fewshot_seed": fewshot_seed if shots else None,
            "extraction": extraction,
            "order_sensitive": order_sensitive,
            "prompts": {template.name: template.log_record()},
            "scoring": __doc__,
        },
    )


@task(version=CMB_TASK_VERSION)
def cmb_clin(
    data: str | None = None,
    revision: str | None = None,
    allow_self_judging: bool = False,
    judge_temperature: float = 0.0,
    judge_seed: int = 42,
    judge_max_tokens: int = 256,
    judge_retries: int = 2,
    judge_structured_output: bool = True,
    judge_cache: bool = True,
    judge_timeout: float = 120.0,
) -> Task:
    """CMB-Clin (74 cases): a multi-turn consultation per case, judged per answer."""
    loaded = load_rows(data, CMB_CLIN_HUB, revision)
    source = str(data or CMB_CLIN_HUB.path)
    template = load_template("cmb_clin_user")
    problems: list[Problem] = []
    samples = []
    for index, row in enumerate(loaded.rows):
        case_id = str(row.get("id", index))
        pairs = row.get("QA_pairs") or []
        if not pairs or not str(row.get("description", "")).strip():
            problems.append(
                Problem(source, case_id, "QA_pairs", "a case needs a description and questions")
            )
            continue
        questions = [str(p["question"]) for p in pairs]
        first = template.render(
            description=str(row["description"]).strip(), question=questions[0]
        ).strip()
        samples.append(Sample(id=f"cmb_clin_{case_id}", input=[ChatMessageUser(content=first)], metadata={
            "title": str(row.get("title", "")), "description": str(row["description"]),
            "questions": questions, "solutions": [str(p.get("solution", "")) for p in pairs],
        }))  # fmt: skip
    if problems:
        raise DatasetError(problems)
    judge_args = {k: v for k, v in locals().items() if k.startswith(("judge_", "allow_"))}
    require_judge_roles(["grader"], coerce_bool(allow_self_judging, "allow_self_judging"))
    return Task(
        dataset=MemoryDataset(samples, name="cmb_clin", location=source),
        solver=clinical_conversation(),
        scorer=cmb_clin_scorer(**judge_args),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": loaded.origin,
            "history": "the model's own previous answers",
            "prompts": {template.name: template.log_record()},
        },
    )
