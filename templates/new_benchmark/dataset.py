"""How the benchmark's rows become samples. Write the real schema down first (the family
README's Data section: files, configs, splits, columns and types, how images are stored, and
where each fact comes from); never invent one."""

from __future__ import annotations

from typing import Any

from inspect_ai.dataset import Sample

from inspect_medreason.core.hub import HubSource
from inspect_medreason.core.images import PreparedImage
from inspect_medreason.core.loaders import build_sample

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


def record_to_sample(row: dict[str, Any], sample_id: str, images: list[PreparedImage]) -> Sample:
    """One row as a sample: the image and question as input, the answer as target, and in
    metadata what the scorer and the breakdowns read."""
    question = str(row["question"])
    return build_sample(
        sample_id,
        images,
        question,
        prompt={},
        target=str(row["answer"]),
        metadata={"question": question},
    )
