"""A task's dataset under a shift: every sample's images replaced by their degraded copies.

The one place every image task calls (``shifted_dataset``): the samples are the task's own,
each image part of the user turn pointing at the degraded PNG (a path, so Inspect reads one
sample's images at a time), and the metadata saying which model and modality class the
sample got and which image the vision judge is to see.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, overload

from inspect_ai import Task
from inspect_ai.dataset import Dataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageUser, Content, ContentImage

from inspect_medreason.core.errors import UserInputError
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.shift.catalog import MODEL_PARAMETERS, ShiftSpec, modality_class
from inspect_medreason.core.shift.degrade import degraded_path

# Sample metadata keys: the shift a sample got, and the image its vision judge is shown.
SAMPLE_SHIFT_KEY = "shift"
JUDGE_IMAGE_KEY = "shift_judge_image"


class ShiftError(UserInputError, ImagePathError):
    """An image a shift could not degrade; the message names the case and the file (a
    refused image to a judge's scorer, which leaves that component unscored)."""


def shift_sample(sample: Sample, spec: ShiftSpec) -> Sample:
    """The sample with its images degraded (a new sample; the original is left as it is)."""
    metadata = dict(sample.metadata or {})
    modality_text = metadata.get("modality")
    modality = modality_class(modality_text)
    if modality == "unknown" and spec.default_modality is not None:
        modality = modality_class(spec.default_modality)
    model = spec.model(modality)
    case_id = str(sample.id)
    messages = sample.input if isinstance(sample.input, list) else None
    if messages is None:
        return sample
    index = 0
    shifted_messages: list[ChatMessage] = []
    for message in messages:
        if not isinstance(message, ChatMessageUser) or isinstance(message.content, str):
            shifted_messages.append(message)
            continue
        content: list[Content] = []
        for part in message.content:
            if isinstance(part, ContentImage):
                content.append(
                    part.model_copy(
                        update={"image": _degrade(part.image, model, spec, case_id, index)}
                    )
                )
                index += 1
            else:
                content.append(part)
        shifted_messages.append(message.model_copy(update={"content": content}))
    metadata[SAMPLE_SHIFT_KEY] = {
        "name": spec.name,
        "severity": spec.severity,
        "model": model,
        "modality_class": modality,
        "seed": spec.seed,
        "images": index,
    }
    metadata[JUDGE_IMAGE_KEY] = spec.judge_image
    return sample.model_copy(update={"input": shifted_messages, "metadata": metadata})


def _degrade(image: str, model: str, spec: ShiftSpec, case_id: str, index: int) -> str:
    path = Path(image)
    if image.startswith(("data:", "http://", "https://")) or not path.is_file():
        raise ShiftError(
            f"case {case_id!r}: image {index + 1} is not a local file ({image[:60]!r}); "
            "a shift degrades image files only"
        )
    try:
        return str(degraded_path(path, model, spec.severity, spec.seed, case_id, index))
    except (OSError, ValueError) as error:
        raise ShiftError(
            f"case {case_id!r}: image {path.name} could not be degraded by -T shift="
            f"{spec.name} ({type(error).__name__}: {error}); check the file or run without a shift"
        ) from error


class ShiftedDataset(Dataset):
    """A dataset whose samples are another's under a shift, degraded when read."""

    def __init__(self, inner: Dataset, spec: ShiftSpec) -> None:
        self._inner = inner
        self._spec = spec

    @property
    def name(self) -> str | None:
        return self._inner.name

    @property
    def location(self) -> str | None:
        return self._inner.location

    @property
    def shuffled(self) -> bool:
        return self._inner.shuffled

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> Dataset: ...

    def __getitem__(self, index: int | slice) -> Sample | Dataset:
        if isinstance(index, slice):
            return ShiftedDataset(self._inner[index], self._spec)
        # Inspect reads a dataset several times as a run starts: each image is degraded on
        # the first read and found in the cache on the others (a digest and a stat), so no
        # sample is held here.
        return shift_sample(self._inner[index], self._spec)

    def __len__(self) -> int:
        return len(self._inner)

    def sort(self, reverse: bool = False, key: Callable[[Sample], Any] | None = None) -> None:
        if key is None:
            self._inner.sort(reverse=reverse)
        else:
            self._inner.sort(reverse=reverse, key=key)

    def filter(self, predicate: Callable[[Sample], bool], name: str | None = None) -> Dataset:
        return ShiftedDataset(self._inner.filter(predicate, name), self._spec)

    def shuffle(self, seed: int | None = None) -> None:
        self._inner.shuffle(seed)

    def shuffle_choices(self, seed: int | None = None) -> None:
        self._inner.shuffle_choices(seed)


def shifted_dataset(dataset: Dataset, spec: ShiftSpec) -> Dataset:
    """``dataset`` under ``spec`` (itself when the run is clean)."""
    return ShiftedDataset(dataset, spec) if spec.active else dataset


def apply_shift(task: Task, spec: ShiftSpec) -> Task:
    """The task with its dataset under ``spec`` and the shift recorded in its metadata
    (``shift``: name, severity, seed, parameters; a clean run records severity 0). Every
    image task's last line."""
    task.dataset = shifted_dataset(task.dataset, spec)
    task.metadata = {**(task.metadata or {}), "shift": spec.record()}
    return task


def judge_image_files(files: list[Path], metadata: dict[str, Any], sample_id: object) -> list[Path]:
    """The files a vision judge is shown when the case images are read again from the data
    folder (a blind control, a re-scored log without its images): the clean ones when the
    run chose ``shift_judge_image=clean`` or was not shifted, otherwise degraded again
    exactly as the model saw them (same model, severity, seed, case and place)."""
    record = metadata.get(SAMPLE_SHIFT_KEY)
    if metadata.get(JUDGE_IMAGE_KEY) != "degraded" or not isinstance(record, dict):
        return files
    try:
        model, severity = str(record["model"]), int(record["severity"])
        seed = int(record["seed"])
        MODEL_PARAMETERS[model][severity]
    except (KeyError, TypeError, ValueError) as error:
        raise ShiftError(
            f"the sample's shift record {str(record)[:120]!r} cannot be read (an edited "
            "log?): its images are not sent"
        ) from error
    case_id = str(sample_id)
    return [
        degraded_path(path, model, severity, seed, case_id, index)
        for index, path in enumerate(files)
    ]


def wants_clean_judge_image(metadata: dict[str, Any]) -> bool:
    """Whether the run asked its vision judge to see the clean image."""
    return metadata.get(JUDGE_IMAGE_KEY) == "clean"
