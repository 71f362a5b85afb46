"""CMB tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.cmb.dataset import (
    CMB_CLIN_HUB,
    CMB_EXAM_HUB,
    clin_record_to_sample,
    exam_record_to_sample,
)
from inspect_medreason.cmb.scorer import __doc__ as SCORING_RULES
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.cmb.solver import (
    clinical_conversation,
    cmb_exam_prompt,
)
from inspect_medreason.hub import load_rows
from inspect_medreason.judges import judge_arguments, require_judge_roles
from inspect_medreason.loaders import DatasetError, Problem
from inspect_medreason.params import DEFAULT_GENERATE_CONFIG, coerce_bool, coerce_int
from inspect_medreason.prompts import load_template

CMB_TASK_VERSION = "1.2.0"


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
    # The solver is built first: it checks prompt/fewshot/seed before any data is read.
    exam_prompt = cmb_exam_prompt(prompt, fewshot, fewshot_data, seed, revision)
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    template = load_template(f"cmb_{prompt}_user")
    loaded = load_rows(data, CMB_EXAM_HUB, revision)
    source = str(data or CMB_EXAM_HUB.path)
    samples = collect_samples(loaded.rows, exam_record_to_sample, source)
    return Task(
        dataset=MemoryDataset(samples, name="cmb_exam", location=source),
        solver=exam_prompt,
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
            "scoring": SCORING_RULES,
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
    judge_cache: bool = False,
    judge_timeout: float = 120.0,
    judge_max_connections: int | None = None,
) -> Task:
    """CMB-Clin (74 cases): a multi-turn consultation per case, judged per answer."""
    loaded = load_rows(data, CMB_CLIN_HUB, revision)
    source = str(data or CMB_CLIN_HUB.path)
    template = load_template("cmb_clin_user")
    samples = collect_samples(loaded.rows, clin_record_to_sample, source)
    judge_args = judge_arguments(locals())
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


def collect_samples(
    rows: list[dict[str, Any]],
    record_to_sample: Callable[[dict[str, Any], int, str], Sample | Problem],
    source: str,
) -> list[Sample]:
    """Every row as a sample, or one error listing every row that is not one."""
    converted = [record_to_sample(row, index, source) for index, row in enumerate(rows)]
    problems = [item for item in converted if isinstance(item, Problem)]
    if problems:
        raise DatasetError(problems)
    return [item for item in converted if isinstance(item, Sample)]
