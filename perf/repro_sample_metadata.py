"""A minimal reproduction, for an upstream Inspect report: what a sample's metadata costs
Inspect per image sample, when it is a few short strings.

No plugin code. N samples, each a user turn of one image (a file path) and a question,
``generate()`` and ``match()``, mockllm answering every request with the same reply, logs
written with ``--no-log-images``:

- ``no_metadata``: samples without metadata;
- ``six_keys``: each sample with the six keys this plugin's MCQ samples carry, five short
  strings and a one-path list, 66 characters in all (``task_type``, ``question``,
  ``image_paths``, ``modality``, ``organ_system``, ``task``);
- ``six_numbers``: the same six keys holding integers instead (what the keys cost apart from
  Inspect's handling of strings: it shortens every string of the metadata with
  ``textwrap.shorten`` for each sample summary).

Nothing reads the metadata: what it costs is Inspect's copying, summarising and logging of
it (sample, sample-init event, initial state). How each variant is run, timed and counted:
``reproduction.py``.

Usage: python perf/repro_sample_metadata.py [--samples 1000] [--repeats 5]
       python perf/repro_sample_metadata.py --instructions [--samples 100]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import reproduction

VARIANTS = ["no_metadata", "six_keys", "six_numbers"]


def case_metadata(case: dict[str, Any], variant: str) -> dict[str, Any] | None:
    """The metadata a variant's sample carries."""
    if variant == "no_metadata":
        return None
    if variant == "six_numbers":
        return {key: index for index, key in enumerate(
            ("task_type", "question", "image_paths", "modality", "organ_system", "task"))}  # fmt: skip
    return {
        "task_type": case["task_type"],
        "question": case["question"],
        "image_paths": [case["image_path"]],
        "modality": case["metadata"]["modality"],
        "organ_system": "unknown",
        "task": "unknown",
    }


def task(folder: Path, variant: str) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))["cases"]
    samples = []
    for case in cases:
        image = ContentImage(image=str(folder / case["image_path"]))
        turn = ChatMessageUser(content=[image, ContentText(text=case["question"])])
        samples.append(Sample(id=case["case_id"], input=[turn], target="A",
                              metadata=case_metadata(case, variant)))  # fmt: skip
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match())


REPRODUCTION = reproduction.Reproduction(
    description="what a sample's metadata costs Inspect per sample",
    variants=VARIANTS,
    task=task,
    script=__file__,
)


if __name__ == "__main__":
    reproduction.main(REPRODUCTION)
