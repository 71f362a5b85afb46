"""MedXpertQA, multimodal subset: five-option MCQ on expert-level clinical images, scored
with the MedReason MCQ extraction and metrics, grouped by body system and task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.scorer import Metric, accuracy, stderr

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.extraction import EXTRACTION_MODE
from inspect_medreason.core.hub import (
    collect_images,
    default_image_root,
    hub_image_root,
    load_rows,
    missing_fields,
)
from inspect_medreason.core.loaders import DatasetError, Problem
from inspect_medreason.core.metrics import breakdown, parsed_accuracy, strict_accuracy, unparsed
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_bool
from inspect_medreason.core.solvers import TrackPrompts, medreason_prompt
from inspect_medreason.medreason.scorer import mcq_scorer
from inspect_medreason.medxpertqa.dataset import (
    IMAGE_FOLDER,
    MEDXPERTQA_HUB,
    REQUIRED_FIELDS,
    record_to_sample,
)

MEDXPERTQA_TASK_VERSION = family_version(__file__)


@task(version=MEDXPERTQA_TASK_VERSION)
def medxpertqa_mm(
    data: str | None = None,
    image_root: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
) -> Task:
    """MedXpertQA MM, one split (``test``, or ``dev``). Images are file names under
    ``image_root`` (default: the snapshot's unpacked ``images/`` folder)."""
    show_images = coerce_bool(images, "images")
    loaded = load_rows(data, MEDXPERTQA_HUB, revision, split)
    source = str(data or MEDXPERTQA_HUB.path)
    rows = loaded.rows

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("id") or f"medxpertqa_{index:05d}")

    missing = missing_fields(loaded, REQUIRED_FIELDS, id_of)
    if missing:
        raise DatasetError(missing)
    root = (
        Path(image_root)
        if image_root
        else hub_image_root(MEDXPERTQA_HUB, loaded)
        if loaded.image_root is None and show_images
        else default_image_root(loaded, lambda row: list(row["images"]), IMAGE_FOLDER)
    )
    files = collect_images(loaded, lambda row: list(row["images"]), root, id_of)
    prompts = TrackPrompts.load("mcq")
    problems: list[Problem] = []
    samples = []
    for index, (row, row_files) in enumerate(zip(rows, files, strict=True)):
        file, where = loaded.where(index)
        sample = record_to_sample(
            row, id_of(row, index), row_files, show_images, file, f"{where} ({id_of(row, index)})"
        )
        if isinstance(sample, Problem):
            problems.append(sample)
        else:
            samples.append(sample)
    if problems:
        raise DatasetError(problems)
    metrics: list[Metric | dict[str, list[Metric]]] = [
        accuracy(),
        stderr(),
        strict_accuracy(),
        parsed_accuracy(),
        unparsed(),
        *breakdown(["body_system", "medical_task", "question_type"], of="accuracy"),
    ]
    return Task(
        dataset=MemoryDataset(samples, name="medxpertqa_mm", location=source),
        solver=medreason_prompt(),
        scorer=mcq_scorer(),
        metrics=metrics,
        config=DEFAULT_GENERATE_CONFIG,
        version=MEDXPERTQA_TASK_VERSION,
        metadata={
            "task_version": MEDXPERTQA_TASK_VERSION,
            "data": loaded.origin,
            "split": loaded.origin["split"],
            "images": show_images,
            "extraction": {"mode": EXTRACTION_MODE},
            "prompts": {t.name: t.log_record() for t in prompts.templates()},
        },
    )
