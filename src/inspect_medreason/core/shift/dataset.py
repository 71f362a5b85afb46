"""A task's dataset under a shift: every sample's images replaced by their degraded copies.

The one place every image task calls (``shifted_dataset``): the samples are the task's own,
each image part of the user turn pointing at the degraded PNG (a path, so Inspect reads one
sample's images at a time), and the metadata saying which model and modality class the
sample got and which image the vision judge is to see.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Dataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageUser, Content, ContentImage

from inspect_medreason.core.dicom import converted_from
from inspect_medreason.core.errors import TaskArgumentError, UserInputError
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.lazy_dataset import LazySampleDataset
from inspect_medreason.core.shift.catalog import (
    MODEL_PARAMETERS,
    ShiftPlan,
    ShiftSpec,
    modality_class,
)
from inspect_medreason.core.shift.degrade import (
    NotHounsfieldError,
    UnchangedImageError,
    degraded_path,
)

# Sample metadata keys: the shift a sample got, and the image its vision judge is shown.
SAMPLE_SHIFT_KEY = "shift"
JUDGE_IMAGE_KEY = "shift_judge_image"


class ShiftError(UserInputError, ImagePathError):
    """An image a shift could not degrade; the message names the case and the file (a
    refused image to a judge's scorer, which leaves that component unscored)."""


def shift_sample(sample: Sample, spec: ShiftSpec, rename: bool = False) -> Sample:
    """The sample with its images degraded (a new sample; the original is left as it is),
    and its shift recorded; ``rename`` (a grid) suffixes the id of a shifted one."""
    metadata = dict(sample.metadata or {})
    modality = modality_class(metadata.get("modality"))
    if modality == "unknown" and spec.default_modality is not None:
        modality = modality_class(spec.default_modality)
    model = spec.model(modality) if spec.active else None
    case_id = str(sample.id)
    messages = sample.input if isinstance(sample.input, list) else []
    index = 0
    shifted_messages: list[ChatMessage] = []
    for message in messages:
        if not isinstance(message, ChatMessageUser) or isinstance(message.content, str):
            shifted_messages.append(message)
            continue
        content: list[Content] = []
        for part in message.content:
            if isinstance(part, ContentImage):
                if model is not None:
                    name = _image_name(metadata, index, part.image)
                    part = part.model_copy(
                        update={"image": _degrade(part.image, model, spec, case_id, index, name)}
                    )
                content.append(part)
                index += 1
            else:
                content.append(part)
        shifted_messages.append(message.model_copy(update={"content": content}))
    metadata[SAMPLE_SHIFT_KEY] = {
        "name": spec.name if spec.active else None,
        "severity": spec.severity if spec.active else 0,
        "model": model,
        "modality_class": modality,
        "seed": spec.seed,
        "case": case_id,
        "images": index,
    }
    metadata[JUDGE_IMAGE_KEY] = spec.judge_image
    update: dict[str, Any] = {"metadata": metadata}
    if messages:
        update["input"] = shifted_messages
    if rename and spec.active:
        update["id"] = f"{case_id}@{spec.name}-{spec.severity}"
    return sample.model_copy(update=update)


def _image_name(metadata: dict[str, Any], index: int, sent: str) -> str:
    """The case's own name for its ``index``-th image (what the user wrote or the file it
    was read from), not the cache file it is sent from."""
    for key in ("image_paths", "image_sources"):
        names = metadata.get(key)
        if isinstance(names, list) and index < len(names) and names[index]:
            return str(names[index])
    source = converted_from(Path(sent))
    return source[0].name if source is not None else Path(sent).name


def _degrade(image: str, model: str, spec: ShiftSpec, case_id: str, index: int, name: str) -> str:
    path = Path(image)
    if image.startswith(("data:", "http://", "https://")) or not path.is_file():
        raise ShiftError(
            f"case {case_id!r}: image {index + 1} is not a local file ({image[:60]!r}); "
            "a shift degrades image files only"
        )
    try:
        return str(degraded_path(path, model, spec.severity, spec.seed, case_id, index))
    except (UnchangedImageError, NotHounsfieldError) as error:
        raise ShiftError(
            f"case {case_id!r}: image {name} under -T shift={spec.name} -T severity="
            f"{spec.severity}: {error}"
        ) from error
    except (OSError, ValueError) as error:
        raise ShiftError(
            f"case {case_id!r}: image {name} could not be degraded by -T shift="
            f"{spec.name} ({type(error).__name__}: {error}); check the file or run without a shift"
        ) from error


def shifted_dataset(dataset: Dataset, plan: ShiftPlan) -> Dataset:
    """``dataset`` under ``plan``: itself when the run is clean, else each case once per
    combination of the plan, degraded when the sample is built (one image at a time; a
    degraded image is then read from the cache)."""
    if not plan.active:
        return dataset
    rename = plan.grid
    # case by case (each case's combinations together): --limit keeps whole comparisons
    items = [(spec, index) for index in range(len(dataset)) for spec in plan.specs]

    def make_sample(item: tuple[ShiftSpec, int]) -> Sample:
        spec, index = item
        return shift_sample(dataset[index], spec, rename)

    return LazySampleDataset(
        items, make_sample, name=dataset.name, location=dataset.location, shuffled=dataset.shuffled
    )


def apply_shift(task: Task, plan: ShiftPlan) -> Task:
    """The task with its dataset under ``spec`` and the shift recorded in its metadata
    (``shift``: name, severity, seed, parameters; a clean run records severity 0). Every
    image task's last line. A shift with the images withheld (``-T images=false``, which
    every image task records as the metadata's ``images``) is refused: nothing would be
    degraded, yet the log would say it was."""
    if plan.active and (task.metadata or {}).get("images") is False:
        raise TaskArgumentError(
            "-T images=false withholds every image, so -T shift has nothing to degrade (the "
            "log would record a shift no image went through); drop one of the two"
        )
    task.dataset = shifted_dataset(task.dataset, plan)
    task.metadata = {**(task.metadata or {}), "shift": plan.record()}
    return task


def judge_image_files(files: list[Path], metadata: dict[str, Any], sample_id: object) -> list[Path]:
    """The files a vision judge is shown when the case images are read again from the data
    folder (a blind control, a re-scored log without its images): the clean ones when the
    run chose ``shift_judge_image=clean`` or was not shifted, otherwise degraded again
    exactly as the model saw them (same model, severity, seed, case and place)."""
    record = metadata.get(SAMPLE_SHIFT_KEY)
    if metadata.get(JUDGE_IMAGE_KEY) != "degraded" or not isinstance(record, dict):
        return files
    if record.get("model") is None:  # the clean images of a grid
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
    case_id = str(record.get("case", sample_id))
    degraded = []
    for index, path in enumerate(files):
        try:
            degraded.append(degraded_path(path, model, severity, seed, case_id, index))
        except (OSError, ValueError) as error:  # refused as the model's image would be
            raise ShiftError(
                f"case {case_id!r}: image {path.name} could not be degraded again for the "
                f"judge ({type(error).__name__}: {error}): its images are not sent"
            ) from error
    return degraded


def wants_clean_judge_image(metadata: dict[str, Any]) -> bool:
    """Whether the run asked its vision judge to see the clean image."""
    return metadata.get(JUDGE_IMAGE_KEY) == "clean"
