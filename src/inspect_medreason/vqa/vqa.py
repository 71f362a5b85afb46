"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA (see ``scorer`` for the scoring rules)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import GRADER_JUDGE_PARAMETERS, JudgeArguments
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    task_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import ShiftPlan, apply_shift, shift_parameters
from inspect_medreason.core.short_answers import yes_no_vocabulary
from inspect_medreason.core.solvers import judge_roles_check, template_prompt
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
    judges: JudgeArguments,
    shift: ShiftPlan,
    closed_open: str = "release",
) -> Task:
    show_images = coerce_bool(images, "images")
    system, user = (
        load_template("vqa_system", family="vqa"),
        load_template("vqa_user", family="vqa"),
    )
    dataset, origin = load_vqa_dataset(
        benchmark,
        data,
        image_root,
        revision,
        split,
        language,
        show_images,
        (system, user),
        closed_open=str(closed_open),
    )
    task = Task(
        dataset=dataset,
        setup=judge_roles_check(["grader"], panels=False),
        solver=template_prompt(),
        scorer=vqa_scorer(yes_no_vocabulary=benchmark.name, **judges.scorer_arguments()),
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
@task_parameters(image_shift=shift_parameters(), judges=GRADER_JUDGE_PARAMETERS)
def medreason_vqa_rad(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    closed_open: str = "release",
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
) -> Task:
    """VQA-RAD test split (451 QA): closed yes/no by exact match, open by the grader role.

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
        images: False withholds the images (blind control).
        closed_open: Which questions are closed: ``release``, the release's answer_type
            (joined to the hub's rows, which dropped it), or ``yes_no``, closed when the
            reference is yes or no. The log's data.closed_open records which.
    """
    return vqa_task(
        VQA_RAD, data, None, revision, split, None, images, judges, image_shift, closed_open
    )


@task(version=VQA_TASK_VERSION)
@task_parameters(image_shift=shift_parameters("pathology"), judges=GRADER_JUDGE_PARAMETERS)
def path_vqa(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
) -> Task:
    """PathVQA test split: closed yes/no by exact match, open by the grader role.

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
        images: False withholds the images (blind control).
    """
    return vqa_task(PATH_VQA, data, None, revision, split, None, images, judges, image_shift)


@task(version=VQA_TASK_VERSION)
@task_parameters(image_shift=shift_parameters(), judges=GRADER_JUDGE_PARAMETERS)
def slake(
    data: str | None = None,
    image_root: str | None = None,
    language: str = "en",
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
) -> Task:
    """SLAKE test split (``language=en|zh|all``); images by ``img_name`` under ``image_root``
    (default: the data folder). Grouped by modality, content type and organ.

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        image_root: The folder ``img_name`` is relative to (default: the data folder).
        language: ``en``, ``zh`` or ``all``.
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
        images: False withholds the images (blind control).
    """
    return vqa_task(SLAKE, data, image_root, revision, split, language, images, judges, image_shift)
