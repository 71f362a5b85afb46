"""GEMeX-VQA task."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import GRADER_JUDGE_PARAMETERS, JudgeArguments
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    coerce_int,
    task_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import ShiftPlan, apply_shift, shift_parameters
from inspect_medreason.core.solvers import judge_roles_check, template_prompt
from inspect_medreason.gemex.dataset import GEMEX_SPLIT, QUESTION_TYPES, load_gemex_dataset
from inspect_medreason.gemex.scorer import __doc__ as SCORING_RULES
from inspect_medreason.gemex.scorer import gemex_scorer

GEMEX_TASK_VERSION = family_version(__file__)


def gemex_task(
    data: str | None,
    image_root: str | None,
    question_types: str | list[str],
    coordinate_size: Any,
    revision: str | None,
    split: str,
    images: Any,
    judges: JudgeArguments,
) -> Task:
    """The GEMeX task on the clean images: data, prompts, the grader-scored scorer."""
    show_images = coerce_bool(images, "images")
    kinds = question_types.split(",") if isinstance(question_types, str) else list(question_types)
    unknown = [k for k in kinds if k.strip() not in QUESTION_TYPES]
    if unknown:
        raise TaskArgumentError(
            f"-T question_types: unknown {unknown}; choose from {list(QUESTION_TYPES)}"
        )
    system, user = (
        load_template("gemex_system", family="gemex"),
        load_template("gemex_user", family="gemex"),
    )
    dataset, origins = load_gemex_dataset(
        data,
        image_root,
        [k.strip() for k in kinds],
        revision,
        split,
        show_images,
        (system, user),
        coerce_int(coordinate_size, "coordinate_size"),
    )
    return Task(
        dataset=dataset,
        setup=judge_roles_check(["grader"], panels=False),
        solver=template_prompt(),
        scorer=gemex_scorer(**judges.scorer_arguments()),
        config=DEFAULT_GENERATE_CONFIG,
        version=GEMEX_TASK_VERSION,
        metadata={
            "task_version": GEMEX_TASK_VERSION,
            "data": origins,
            "split": split,
            "images": show_images,
            "coordinate_size": coordinate_size,
            "prompts": {t.name: t.log_record() for t in (system, user)},
            "scoring": SCORING_RULES,
        },
    )


@task(version=GEMEX_TASK_VERSION)
@task_parameters(
    # MIMIC-CXR: every image is a chest radiograph
    image_shift=shift_parameters("X-ray"),
    judges=GRADER_JUDGE_PARAMETERS,
)
def gemex(
    data: str | None = None,
    image_root: str | None = None,
    question_types: str | list[str] = "closed,single,multi,open",
    coordinate_size: int = 224,
    revision: str | None = None,
    split: str = GEMEX_SPLIT,
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
) -> Task:
    """GEMeX-VQA test subset: the four JSONL files (one per question type) in a folder, or
    the hub. Images (MIMIC-CXR-JPG, credentialed) are looked up by ``image_path`` under
    ``image_root``; open answers are rated by the ``grader`` role.

    Args:
        data: A folder holding the four JSONL files (default: the hub at the pinned commit).
        image_root: The folder ``image_path`` is relative to (the MIMIC-CXR-JPG ``files/``
            folder's parent; see the family README).
        question_types: Which question types, comma-separated: closed, single, multi, open.
        coordinate_size: The side of the square the boxes' coordinates are given in.
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
        images: False withholds the images (blind control).
    """
    task = gemex_task(
        data, image_root, question_types, coordinate_size, revision, split, images, judges
    )
    return apply_shift(task, image_shift)
