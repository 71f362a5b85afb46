"""CMB tasks."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.cmb.dataset import load_clin_dataset, load_exam_dataset
from inspect_medreason.cmb.scorer import __doc__ as SCORING_RULES
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.cmb.solver import (
    clinical_conversation,
    cmb_exam_prompt,
)
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import GRADER_JUDGE_PARAMETERS, JudgeArguments
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_int,
    task_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.solvers import judge_roles_check

CMB_TASK_VERSION = family_version(__file__)


def exam_task(
    data: str | None,
    answers: str | None,
    split: str,
    fewshot: Any,
    fewshot_data: str | None,
    prompt: str,
    extraction: str,
    order_sensitive: Any,
    seed: Any,
    revision: str | None,
) -> Task:
    """The CMB-Exam task: the upstream prompt (and few-shot examples), the split, its key."""
    # The solver is built first: it checks prompt/fewshot/seed before any data is read.
    exam_prompt = cmb_exam_prompt(prompt, fewshot, fewshot_data, seed, revision)
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    template = load_template(f"cmb_{prompt}_user", family="cmb")
    dataset, origin, key_record = load_exam_dataset(data, answers, revision, split)
    return Task(
        dataset=dataset,
        solver=exam_prompt,
        scorer=cmb_exam_scorer(extraction=extraction, order_sensitive=order_sensitive),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
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
@task_parameters()
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
    validation split (``fewshot_data`` for a local copy).

    Args:
        data: The snapshot folder or one split's JSON file (default: the hub at the pinned
            commit).
        answers: The published test answer key (default: found in the data folder).
        split: ``test``, ``val`` (also ``validation``, ``dev``) or ``train``.
        fewshot: How many worked examples from the validation split precede each question.
        fewshot_data: A local copy of the validation split (snapshot or file) for fewshot.
        prompt: The upstream prompt: ``answer_only`` or ``cot``.
        extraction: ``safe`` or ``cmb`` (the upstream rule); both are computed on every reply.
        order_sensitive: True compares the answer letters as the upstream string equality.
        seed: Seed of the few-shot draw.
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
    """
    return exam_task(
        data,
        answers,
        split,
        fewshot,
        fewshot_data,
        prompt,
        extraction,
        order_sensitive,
        seed,
        revision,
    )


@task(version=CMB_TASK_VERSION)
@task_parameters(judges=GRADER_JUDGE_PARAMETERS)
def cmb_clin(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    *,
    judges: JudgeArguments,
) -> Task:
    """CMB-Clin (74 cases; its one split, test): a multi-turn consultation per case, judged
    per answer by the ``grader`` role.

    Args:
        data: A local copy of CMB-Clin, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: ``test``, CMB-Clin's one split.
    """
    template = load_template("cmb_clin_user", family="cmb")
    dataset, origin, reference_keys = load_clin_dataset(data, revision, split)
    return Task(
        dataset=dataset,
        setup=judge_roles_check(["grader"], panels=False),
        solver=clinical_conversation(),
        scorer=cmb_clin_scorer(**judges.scorer_arguments()),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
            "reference_field": reference_keys,
            "history": "the model's own previous answers",
            "prompts": {template.name: template.log_record()},
        },
    )
