"""GEMeX-VQA task."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import judge_arguments, require_judge_roles
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_bool, coerce_int
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import apply_shift, parse_shift
from inspect_medreason.core.solvers import template_prompt
from inspect_medreason.gemex.dataset import GEMEX_SPLIT, QUESTION_TYPES, load_gemex_dataset
from inspect_medreason.gemex.scorer import __doc__ as SCORING_RULES
from inspect_medreason.gemex.scorer import gemex_scorer

GEMEX_TASK_VERSION = family_version(__file__)


@task(version=GEMEX_TASK_VERSION)
def gemex(
    data: str | None = None,
    image_root: str | None = None,
    question_types: str | list[str] = "closed,single,multi,open",
    coordinate_size: int = 224,
    revision: str | None = None,
    split: str = GEMEX_SPLIT,
    images: bool = True,
    shift: str | list[str] | None = None,
    severity: int | list[int] = 0,
    shift_seed: int = 0,
    shift_judge_image: str = "degraded",
    **judging: Any,
) -> Task:
    """GEMeX-VQA test subset: the four JSONL files (one per question type) in a folder, or
    the hub. Images (MIMIC-CXR-JPG, credentialed) are looked up by ``image_path`` under
    ``image_root``."""
    show_images = coerce_bool(images, "images")
    judge_args = judge_arguments(judging, "gemex", max_tokens=256)
    # MIMIC-CXR: every image is a chest radiograph
    spec = parse_shift(shift, severity, shift_seed, shift_judge_image, "X-ray")
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
    require_judge_roles(["grader"], judge_args["allow_self_judging"])
    task = Task(
        dataset=dataset,
        solver=template_prompt(),
        scorer=gemex_scorer(**judge_args),
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
    return apply_shift(task, spec)
