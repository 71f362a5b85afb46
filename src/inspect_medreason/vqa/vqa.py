"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA (see ``scorer`` for the scoring rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.hub import (
    collect_images,
    default_image_root,
    hub_image_root,
    load_rows,
    missing_fields,
    unexpected_values,
)
from inspect_medreason.core.judges import judge_arguments, require_judge_roles
from inspect_medreason.core.loaders import DatasetError, Problem
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_bool
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.short_answers import yes_no_vocabulary
from inspect_medreason.core.solvers import template_prompt
from inspect_medreason.vqa.dataset import PATH_VQA, SLAKE, VQA_RAD, VqaBenchmark, record_to_sample
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
) -> Task:
    show_images = coerce_bool(images, "images")
    require_judge_roles(["grader"], judge_args["allow_self_judging"])
    loaded = load_rows(data, benchmark.hub, revision, split)
    source = str(data or benchmark.hub.path)

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("qid", row.get("id", f"{benchmark.name}_{index:05d}")))

    missing = missing_fields(loaded, benchmark.required_fields, id_of)
    missing += unexpected_values(loaded, benchmark.allowed_values, id_of)
    if missing:
        raise DatasetError(missing)
    keep: list[int] = list(range(len(loaded.rows)))
    if benchmark.language_field and language and language != "all":
        keep = [i for i in keep if str(loaded.rows[i][benchmark.language_field]) == language]
    loaded = loaded.subset(keep)
    root = (
        Path(image_root)
        if image_root is not None
        else hub_image_root(benchmark.hub, loaded)
        if loaded.image_root is None and show_images
        else default_image_root(loaded, benchmark.images_of, benchmark.image_folder)
    )
    if not loaded.rows:
        raise DatasetError([Problem(source, "-", "data", "no rows (check -T language)")])
    files = collect_images(loaded, benchmark.images_of, root, id_of)
    system, user = (
        load_template("vqa_system", family="vqa"),
        load_template("vqa_user", family="vqa"),
    )
    samples = [
        record_to_sample(benchmark, row, id_of(row, index), row_files, show_images, (system, user))
        for index, (row, row_files) in enumerate(zip(loaded.rows, files, strict=True))
    ]
    return Task(
        dataset=MemoryDataset(samples, name=benchmark.name, location=source),
        solver=template_prompt(),
        scorer=vqa_scorer(yes_no_vocabulary=benchmark.name, **judge_args),
        metrics=vqa_metrics(list(benchmark.group_fields)),
        config=DEFAULT_GENERATE_CONFIG,
        version=VQA_TASK_VERSION,
        metadata={
            "task_version": VQA_TASK_VERSION,
            "data": loaded.origin,
            "split": loaded.origin["split"],
            "licence": benchmark.licence,
            "language": language,
            "images": show_images,
            "prompts": {t.name: t.log_record() for t in (system, user)},
            "scoring": SCORING_RULES,
            "yes_no_vocabulary": yes_no_vocabulary(benchmark.name).as_record(),
        },
    )


@task(version=VQA_TASK_VERSION)
def vqa_rad(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
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
    )


@task(version=VQA_TASK_VERSION)
def path_vqa(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
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
    )


@task(version=VQA_TASK_VERSION)
def slake(
    data: str | None = None,
    image_root: str | None = None,
    language: str = "en",
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
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
    )
