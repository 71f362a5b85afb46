"""The MedReason case as an Inspect sample: images and question as the user turn, options as
``choices``, the option label (or reference answer) as target, everything else in metadata.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from inspect_medreason.core.dicom import DISPLAY_KEY
from inspect_medreason.core.images import PreparedImage
from inspect_medreason.core.lazy_dataset import LazySampleDataset
from inspect_medreason.core.loaders import (
    GROUP_FIELDS,
    UNKNOWN_GROUP,
    DatasetError,
    LoadedCases,
    Problem,
    case_turn,
    load_cases,
)
from inspect_medreason.core.log_paths import path_for_log
from inspect_medreason.core.metrics import CASE_GROUP_FIELDS as BREAKDOWN_FIELDS
from inspect_medreason.core.prompts import context_block
from inspect_medreason.core.schema import DEFAULT_LABELS, Case


def shuffle_options(case: Case, seed: int) -> tuple[list[dict[str, str]], dict[str, str]]:
    """Permute option texts under fixed labels; return shown options and shown→original labels.

    The permutation depends only on the seed and the case id, so it is stable whatever the
    order, subset or concurrency of the run.
    """
    rng = random.Random(f"{seed}:{case.case_id}")
    order = list(range(len(case.options)))
    rng.shuffle(order)
    shown = [
        {"label": case.options[position].label, "text": case.options[source].text}
        for position, source in enumerate(order)
    ]
    label_map = {
        case.options[position].label: case.options[source].label
        for position, source in enumerate(order)
    }
    return shown, label_map


def record_to_sample(
    case: Case,
    images: list[Path],
    shuffle_seed: int | None = None,
    show_images: bool = True,
    prepared: list[PreparedImage] | None = None,
) -> Sample:
    """A case as a sample: images (file paths) and question as the user turn, options as
    ``choices``, the label (or reference answer) as target, the case facts in metadata."""
    options = [{"label": option.label, "text": option.text} for option in case.options]
    label_map = {option.label: option.label for option in case.options}
    if shuffle_seed is not None and case.options:
        options, label_map = shuffle_options(case, shuffle_seed)
    target = ""
    if case.answer is not None:
        target = case.answer.strip()
        if case.task_type == "mcq":
            target = next(shown for shown, original in label_map.items() if original == target)
    # Read from the model as it is, not dumped: two dumps per case were a fifth of building
    # 100,000 samples. Its fields are the group fields; anything else the case carried is
    # its extra (plain JSON values, as read).
    group_values = {key: getattr(case.metadata, key, None) for key in GROUP_FIELDS}
    extra = {
        key: value
        for key, value in (case.metadata.model_extra or {}).items()
        if key not in GROUP_FIELDS
    }
    # Only what the solver, the scorers and the reports read, nothing the sample says already
    # (its id is the case id, its target the reference label, its choices the option texts)
    # and nothing empty: Inspect copies a sample's metadata several times per sample,
    # summarises each of its strings and writes it to the log three times.
    open_case = case.task_type == "open"
    metadata: dict[str, Any] = {
        "task_type": case.task_type,
        "question": case.question,
    }
    labels = [option["label"] for option in options]
    optional = {
        # The option texts are the sample's choices; their labels are A, B, C... unless
        # named here (the case's own labels).
        "option_labels": labels if labels != list(DEFAULT_LABELS[: len(labels)]) else None,
        # The open judges compare against it; an MCQ case's reference is the target.
        "reference_answer": case.answer if open_case else None,
        "context": case.context,
        "reference_reasoning": case.reference_reasoning,
        # shown label -> the case's own label, when the options were shuffled
        "label_map": label_map if any(k != v for k, v in label_map.items()) else None,
        # The blind control: the case has images, this run does not show them.
        "images_withheld": bool(case.image_paths) and not show_images,
        # The digest of each image sent (image_confinement.DIGESTS_KEY: what a file read
        # again later, by re-scoring or the rating page, is checked against), and any
        # conversion made to send it.
        "image_sha256": [image.sha256 for image in prepared] if prepared else None,
        "image_conversions": [image.conversion for image in prepared]
        if prepared and show_images and any(image.conversion for image in prepared)
        else None,
        # Each DICOM image's own windows, rescale and units (core.dicom.display_record),
        # for a rating page's window presets.
        DISPLAY_KEY: [image.dicom for image in prepared]
        if prepared and any(image.dicom for image in prepared)
        else None,
        # Also what the bootstrap intervals resample together (intervals.case_cluster).
        "image_paths": case.image_paths,
        # No data folder: a log names no local path (core.log_paths). Re-scoring reads the
        # images again from the folder the user names (medreason.image_folder).
        "extra_metadata": extra,
    }
    metadata.update({key: value for key, value in optional.items() if value})
    for key in GROUP_FIELDS:
        value = group_values.get(key)
        # The breakdown fields are always present (grouped metrics need the key); the
        # others only when the case names them.
        if value or key in BREAKDOWN_FIELDS:
            metadata[key] = str(value or UNKNOWN_GROUP)
    return Sample(
        id=case.case_id,
        input=case_turn(images, f"{context_block(case.context)}{case.question}", show_images),
        choices=[option["text"] for option in options] if case.task_type == "mcq" else None,
        target=target,
        metadata=metadata,
    )


def build_dataset(
    data: str | Path | None,
    ground_truth: str | Path | None,
    task_types: set[str],
    shuffle_seed: int | None = None,
    name: str = "medreason",
    show_images: bool = True,
) -> tuple[LazySampleDataset[Case], LoadedCases]:
    """Load and validate every case; keep those of the requested tracks as a dataset whose
    samples are built when Inspect reads them."""
    # The blind control of the MCQ track opens no image file and needs none to exist; the
    # open track's judges see the images whatever the model is shown.
    loaded = load_cases(data, ground_truth, check_images=show_images or "open" in task_types)
    cases = [case for case in loaded.cases if case.task_type in task_types]
    if not cases:
        raise DatasetError(
            [
                Problem(
                    str(loaded.cases_file),
                    "-",
                    "task_type",
                    f"no case of type {sorted(task_types)} in the data",
                )
            ]
        )
    if loaded.ground_truth_file is not None and not any(
        case.answer is not None and case.answer.strip() for case in cases
    ):
        raise DatasetError(
            [
                Problem(
                    str(loaded.ground_truth_file),
                    "-",
                    "answer",
                    f"ground truth was given, but none of the {len(cases)} {'/'.join(sorted(task_types))} "
                    "cases has a reference answer in it: check that its case_id values match the cases "
                    "file and that it holds answers (every score would otherwise be missing)",
                )
            ]
        )
    images = loaded.resolved_images
    prepared = loaded.prepared_images

    def make_sample(case: Case) -> Sample:
        return record_to_sample(
            case,
            images[case.case_id],
            shuffle_seed,
            show_images,
            prepared.get(case.case_id),
        )

    # the cases file by its name in the data folder (its digest is in the task metadata)
    location = path_for_log(loaded.cases_file, loaded.data_dir)
    return LazySampleDataset(cases, make_sample, name=name, location=location), loaded
