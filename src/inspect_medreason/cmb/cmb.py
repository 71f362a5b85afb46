"""CMB tasks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.cmb.dataset import (
    CLIN_FIELDS,
    CMB_CLIN_HUB,
    CMB_EXAM_HUB,
    EXAM_FIELDS,
    clin_record_to_sample,
    exam_record_to_sample,
    join_answer_key,
)
from inspect_medreason.cmb.scorer import __doc__ as SCORING_RULES
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.cmb.solver import (
    clinical_conversation,
    cmb_exam_prompt,
)
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.hub import LoadedRows, load_rows, missing_fields
from inspect_medreason.core.judges import judge_arguments, require_judge_roles
from inspect_medreason.core.loaders import DatasetError, Problem
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_int
from inspect_medreason.core.prompts import load_template

CMB_TASK_VERSION = family_version(__file__)


@task(version=CMB_TASK_VERSION)
def cmb_exam(
    data: str | None = None,
    answers: str | None = None,
    split: str = "test",
    fewshot: int = 0,
    fewshot_data: str | None = None,
    prompt: str = "answer_only",
    extraction: str = "safe",
    order_sensitive: bool = False,
    seed: int = 42,
    revision: str | None = None,
) -> Task:
    """CMB-Exam, one split (``test``: 11,200 questions, answers from the published key
    ``answers``; or ``val``). ``prompt=answer_only|cot``; ``fewshot=N`` examples from the
    validation split (``fewshot_data`` for a local copy)."""
    # The solver is built first: it checks prompt/fewshot/seed before any data is read.
    exam_prompt = cmb_exam_prompt(prompt, fewshot, fewshot_data, seed, revision)
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    template = load_template(f"cmb_{prompt}_user", family="cmb")
    loaded = load_rows(data, CMB_EXAM_HUB, revision, split)
    source = str(data or CMB_EXAM_HUB.path)

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("id", f"cmb_exam_{index:05d}"))

    problems = missing_fields(loaded, EXAM_FIELDS, id_of)
    key_record, key_problems = join_answer_key(loaded, answers, data)
    problems += key_problems
    if problems:
        raise DatasetError(problems)
    samples = collect_samples(loaded, exam_record_to_sample)
    return Task(
        dataset=MemoryDataset(samples, name="cmb_exam", location=source),
        solver=exam_prompt,
        scorer=cmb_exam_scorer(extraction=extraction, order_sensitive=order_sensitive),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": loaded.origin,
            "split": loaded.origin["split"],
            "answer_key": key_record,
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
    split: str = "test",
    **judging: Any,
) -> Task:
    """CMB-Clin (74 cases; its one split, test): a multi-turn consultation per case, judged
    per answer."""
    judge_args = judge_arguments(judging, "cmb_clin", max_tokens=256)
    loaded = load_rows(data, CMB_CLIN_HUB, revision, split)
    source = str(data or CMB_CLIN_HUB.path)
    template = load_template("cmb_clin_user", family="cmb")
    problems = missing_fields(loaded, CLIN_FIELDS, lambda row, index: str(row.get("id", index)))
    if problems:
        raise DatasetError(problems)
    samples: list[Sample] = []
    reference_keys: Counter[str] = Counter()
    for index, row in enumerate(loaded.rows):
        file, where = loaded.where(index)
        sample, key = clin_record_to_sample(row, index, f"{file} {where}")
        if isinstance(sample, list):
            problems.extend(sample)
            continue
        samples.append(sample)
        reference_keys[str(key)] += 1
    if problems:
        raise DatasetError(problems)
    require_judge_roles(["grader"], judge_args["allow_self_judging"])
    return Task(
        dataset=MemoryDataset(samples, name="cmb_clin", location=source),
        solver=clinical_conversation(),
        scorer=cmb_clin_scorer(**judge_args),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": loaded.origin,
            "split": loaded.origin["split"],
            "reference_field": dict(reference_keys),
            "history": "the model's own previous answers",
            "prompts": {template.name: template.log_record()},
        },
    )


def collect_samples(
    loaded: LoadedRows,
    record_to_sample: Callable[[dict[str, Any], int, str], Sample | Problem],
) -> list[Sample]:
    """Every row as a sample, or one error listing every row that is not one (its file and
    row named)."""
    converted = [
        record_to_sample(row, index, " ".join(loaded.where(index)))
        for index, row in enumerate(loaded.rows)
    ]
    problems = [item for item in converted if isinstance(item, Problem)]
    if problems:
        raise DatasetError(problems)
    return [item for item in converted if isinstance(item, Sample)]
