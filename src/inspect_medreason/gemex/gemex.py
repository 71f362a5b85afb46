"""GEMeX-VQA task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.hub import collect_images, missing_fields
from inspect_medreason.core.judges import judge_arguments, require_judge_roles
from inspect_medreason.core.loaders import DatasetError, Problem
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_bool, coerce_int
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.solvers import template_prompt
from inspect_medreason.gemex.dataset import (
    GEMEX_HUB_ID,
    GEMEX_LAYOUT,
    GEMEX_SPLIT,
    QUESTION_TYPES,
    REQUIRED_FIELDS,
    load_question_type,
    record_to_sample,
)
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
    **judging: Any,
) -> Task:
    """GEMeX-VQA test subset: the four JSONL files (one per question type) in a folder, or
    the hub. Images (MIMIC-CXR-JPG, credentialed) are looked up by ``image_path`` under
    ``image_root``."""
    show_images = coerce_bool(images, "images")
    judge_args = judge_arguments(judging, "gemex", max_tokens=256)
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
    samples = []
    origins: dict[str, Any] = {}
    problems: list[Problem] = []
    size = coerce_int(coordinate_size, "coordinate_size")
    for kind in (k.strip() for k in kinds):
        loaded, missing = load_question_type(data, kind, revision, split)
        problems.extend(missing)
        if loaded is None:
            continue
        origins[kind] = loaded.origin
        root = Path(image_root) if image_root else loaded.image_root

        def id_of(row: dict[str, Any], index: int, kind: str = kind) -> str:
            return f"{kind}_{row.get('q_id', row.get('row_id', index))}"

        required = REQUIRED_FIELDS[kind] + (("image_path",) if show_images else ())
        empty = missing_fields(loaded, required, id_of)
        if empty:
            problems.extend(empty)
            continue
        # The blind control needs no image files (MIMIC-CXR is credentialed): none are read.
        files = (
            collect_images(loaded, lambda row: [row["image_path"]], root, id_of)
            if show_images
            else [[] for _ in loaded.rows]
        )
        for index, (row, row_files) in enumerate(zip(loaded.rows, files, strict=True)):
            samples.append(
                record_to_sample(
                    row, kind, id_of(row, index), row_files, (system, user), size, show_images
                )
            )
    if not origins and not problems:
        problems.append(
            Problem(
                str(data),
                "-",
                "data",
                f"no file of the question types {', '.join(kinds)}: expected {GEMEX_LAYOUT}",
            )
        )
    if problems:
        raise DatasetError(problems)
    require_judge_roles(["grader"], judge_args["allow_self_judging"])
    return Task(
        dataset=MemoryDataset(samples, name="gemex", location=str(data or GEMEX_HUB_ID)),
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
