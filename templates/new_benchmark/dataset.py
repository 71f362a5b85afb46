"""How the benchmark's rows become samples. Write the real schema down first (the family
README's Data section: files, configs, splits, columns and types, how images are stored, and
where each fact comes from); never invent one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from inspect_medreason.core.hub import (
    HubSource,
    LoadedRows,
    collect_images,
    missing_fields,
)
from inspect_medreason.core.images import PreparedImage
from inspect_medreason.core.loaders import DatasetError, build_sample

# Where the benchmark lives on the hub, the split it reports, the splits it publishes and the
# commit its numbers are pinned to, checked against the hub's own record (say where in
# revision_source). With no verified commit, leave revision None: the task then asks the
# user for one instead of guessing.
HUB = HubSource(
    "owner/dataset",
    split="test",
    splits=("train", "test"),
    revision=None,
    revision_source=None,
    layout="the hub snapshot (data/test-00000-of-00001-<hash>.parquet: image, question, answer)",
)
# Fields of the published schema every row must carry non-empty.
REQUIRED_FIELDS = ("image", "question", "answer")


def read_samples(loaded: LoadedRows, image_root: Path | None, show_images: bool) -> list[Sample]:
    """Every row as a sample, or every problem at once (file, row, id and field) before
    anything runs; the blind control reads no image."""

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("id", f"new_benchmark_{index:05d}"))

    problems = missing_fields(loaded, REQUIRED_FIELDS, id_of)
    if problems:
        raise DatasetError(problems)
    row_images = (
        collect_images(loaded, image_cells, image_root, id_of)
        if show_images
        else [[] for _ in loaded.rows]
    )
    return [
        record_to_sample(row, id_of(row, index), files, show_images)
        for index, (row, files) in enumerate(zip(loaded.rows, row_images, strict=True))
    ]


def image_cells(row: dict[str, Any]) -> list[Any]:
    """A row's images: decoded images, or file names under ``-T image_root``."""
    return [row["image"]]


def record_to_sample(
    row: dict[str, Any],
    sample_id: str,
    images: list[PreparedImage],
    show_images: bool = True,
) -> Sample:
    """One row as a sample: the image and question as input, the answer as target, and in
    metadata what the scorer and the breakdowns read (and, in the blind control, that the
    row had an image that was withheld)."""
    question = str(row["question"])
    return build_sample(
        sample_id,
        images,
        question,
        prompt={},
        target=str(row["answer"]),
        metadata={"question": question, "images_withheld": not show_images},
        show_images=show_images,
    )
