"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA (see ``scorer`` for the scoring rules)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import judge_arguments, require_judge_roles
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_bool
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import ShiftPlan, apply_shift, parse_shift
from inspect_medreason.core.short_answers import yes_no_vocabulary
from inspect_medreason.core.solvers import template_prompt
from inspect_medreason.vqa.dataset import (
    PATH_VQA,
    SLAKE,
    VQA_RAD,
    VqaBenchmark,
    load_vqa_dataset,
)
from inspect_medreason.vqa.scorer import __doc__ as SCORING_RULES
from inspect_medreason.vqa.scorer import vqa_metrics, vqa_scorer

VQA_TASK_VERSION = family_version(__file__)


def vqa_task(
    benchmark: VqaBenchmark,
    data: str | None,
    image_root: str | None,
    revision: str | None,
    split: str | None,
    language: str | None,
    images: Any,
    judge_args: dict[str, Any],
    shift: ShiftPlan,
) -> Task:
    show_images = coerce_bool(images, "images")
    require_judge_roles(["grader"], judge_args["allow_self_judging"])
    system, user = (
        load_template("vqa_system", family="vqa"),
        load_template("vqa_user", family="vqa"),
    )
    dataset, origin = load_vqa_dataset(
        benchmark, data, image_root, revision, split, language, show_images, (system, user)
    )
    task = Task(
        dataset=dataset,
        solver=template_prompt(),
        scorer=vqa_scorer(yes_no_vocabulary=benchmark.name, **judge_args),
        metrics=vqa_metrics(list(benchmark.group_fields)),
        config=DEFAULT_GENERATE_CONFIG,
        version=VQA_TASK_VERSION,
        metadata={
            "task_version": VQA_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
            "licence": benchmark.licence,
            "language": language,
            "images": show_images,
            "prompts": {t.name: t.log_record() for t in (system, user)},
            "scoring": SCORING_RULES,
            "yes_no_vocabulary": yes_no_vocabulary(benchmark.name).as_record(),
        },
    )
    return apply_shift(task, shift)


@task(version=VQA_TASK_VERSION)
def vqa_rad(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    shift: str | list[str] | None = None,
    severity: int | list[int] = 0,
    shift_seed: int = 0,
    shift_judge_image: str = "degraded",
    **judging: Any,
) -> Task:
    """VQA-RAD test split (451 QA): closed yes/no by exact match, open by the grader role."""
    return vqa_task(
        VQA_RAD,
        data,
        None,
        revision,
        split,
        None,
        images,
        judge_arguments(judging, "vqa_rad", max_tokens=256),
        parse_shift(shift, severity, shift_seed, shift_judge_image),
    )


@task(version=VQA_TASK_VERSION)
def path_vqa(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    shift: str | list[str] | None = None,
    severity: int | list[int] = 0,
    shift_seed: int = 0,
    shift_judge_image: str = "degraded",
    **judging: Any,
) -> Task:
    """PathVQA test split: closed yes/no by exact match, open by the grader role."""
    return vqa_task(
        PATH_VQA,
        data,
        None,
        revision,
        split,
        None,
        images,
        judge_arguments(judging, "path_vqa", max_tokens=256),
        parse_shift(shift, severity, shift_seed, shift_judge_image, "pathology"),
    )


@task(version=VQA_TASK_VERSION)
def slake(
    data: str | None = None,
    image_root: str | None = None,
    language: str = "en",
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    shift: str | list[str] | None = None,
    severity: int | list[int] = 0,
    shift_seed: int = 0,
    shift_judge_image: str = "degraded",
    **judging: Any,
) -> Task:
    """SLAKE test split (``language=en|zh|all``); images by ``img_name`` under ``image_root``
    (default: the data folder). Grouped by modality, content type and organ."""
    return vqa_task(
        SLAKE,
        data,
        image_root,
        revision,
        split,
        language,
        images,
        judge_arguments(judging, "slake", max_tokens=256),
        parse_shift(shift, severity, shift_seed, shift_judge_image),
    )
