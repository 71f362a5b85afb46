"""How MedXpertQA-MM rows become samples."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.core.hub import (
    HubSource,
    collect_images,
    default_image_root,
    duplicate_ids,
    hub_image_root,
    is_empty,
    load_rows,
    missing_fields,
    wrong_types,
)
from inspect_medreason.core.images import PreparedImage
from inspect_medreason.core.loaders import DatasetError, Problem, build_sample
from inspect_medreason.core.log_paths import data_location

MEDXPERTQA_HUB = HubSource(
    "TsinghuaC3I/MedXpertQA",
    name="MM",
    split="test",
    splits=("dev", "test"),
    # The hub's own file tree at this commit (MM/, Text/, images.zip, the card's configs).
    revision="f4e6fe7e5a9e13d6c97d7aa2b91cdd8b80c9cc61",
    revision_source="the hub's file tree at this commit",
    image_archive=("images.zip", "images"),
    layout="the hub snapshot (README.md with configs MM and Text; MM/dev.jsonl, MM/test.jsonl, Text/dev.jsonl, Text/test.jsonl; images.zip unpacked into images/), the MM folder, or MM/test.jsonl; rows with id, question, options {A..E}, label, images (file names), medical_task, body_system, question_type",
)
# Fields of the MM schema every row carries non-empty.
REQUIRED_FIELDS = ("id", "question", "options", "label", "images")
# The published types: the hub's (options an object, label a letter) and the GitHub
# repository's input files' (options a list of {letter, content}, label a list of one).
FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str, int), "text"),
    "question": ((str,), "text"),
    "options": ((dict, list), 'an object {"A": "..."} or a list of {"letter", "content"}'),
    "label": ((str, list), 'a letter ("A") or a list of one (["A"])'),
    "images": ((list,), "a list of image file names"),
    "medical_task": ((str,), "text"),
    "body_system": ((str,), "text"),
    "question_type": ((str,), "text"),
}
# images.zip unpacks to an images/ folder beside MM/ and Text/; the rows name the files in it.
IMAGE_FOLDER = "images"


# The dataset's question text repeats the options after this marker; the prompt lists them.
ANSWER_CHOICES_MARKER = "Answer Choices:"


def question_without_choices(question: str) -> str:
    """The question up to the repeated options. A plain search: a pattern opening with
    ``\\s*`` rescanned every run of spaces from each of its characters (quadratic)."""
    at = question.find(ANSWER_CHOICES_MARKER)
    return (question if at < 0 else question[:at]).strip()


def record_options(row: dict[str, Any]) -> list[dict[str, str]]:
    """``options`` as published: on the hub an object {"A": text, ...}; in the GitHub
    repository's input files a list of {"letter": "A", "content": text} (a list of
    {key, value} is read too). Checked first by ``option_problem``."""
    raw = row.get("options") or {}
    if isinstance(raw, list):
        raw = {
            item.get("letter", item.get("key")): item.get("content", item.get("value"))
            for item in raw
            if isinstance(item, dict)
        }
    return [
        {"label": str(k), "text": str(v)} for k, v in sorted(raw.items()) if v not in (None, "")
    ]


def option_problem(row: dict[str, Any]) -> tuple[str, str] | None:
    """(field, message) when ``options`` or ``label`` is in neither published form."""
    raw = row.get("options")
    if isinstance(raw, list):
        for position, item in enumerate(raw):
            if not (
                isinstance(item, dict)
                and isinstance(item.get("letter", item.get("key")), str)
                and isinstance(item.get("content", item.get("value")), str | None)
            ):
                return (
                    "options",
                    f"item {position} is {str(item)[:60]!r}; the GitHub input format lists "
                    'options as {"letter": "A", "content": "..."}',
                )
    elif isinstance(raw, dict):
        wrong = [str(k) for k, v in raw.items() if v is not None and not isinstance(v, str)]
        if wrong:
            return "options", f"option(s) {', '.join(wrong)} are not text"
    label = row.get("label")
    if isinstance(label, list) and not (len(label) == 1 and isinstance(label[0], str)):
        return "label", f'{label!r}: expected one letter ("A") or a list of one (["A"])'
    images = row.get("images")
    if isinstance(images, list) and not all(isinstance(name, str) for name in images):
        return "images", "expected a list of image file names (text)"
    return None


def record_label(row: dict[str, Any]) -> str:
    """The answer letter: "A" on the hub, ["A"] in the GitHub input files."""
    label = row.get("label", "")
    if isinstance(label, list):
        label = label[0] if label else ""
    return str(label).strip()


def record_to_sample(
    row: dict[str, Any],
    sample_id: str,
    image_files: Sequence[Path | PreparedImage],
    show_images: bool,
    source: str,
    where: str | None = None,
) -> Sample | Problem:
    """One MedXpertQA-MM row as an MCQ sample of the MedReason track (the track's solver
    renders the prompt from its metadata), or the problem that keeps it out."""
    raw = row.get("options")
    problem = option_problem(row)
    if problem is not None:
        return Problem(source, where or sample_id, *problem)
    empty = sorted(str(k) for k, v in raw.items() if is_empty(v)) if isinstance(raw, dict) else []
    if empty:
        return Problem(source, where or sample_id, "options", f"option(s) {', '.join(empty)} empty")
    options = record_options(row)
    label = record_label(row)
    if label not in {o["label"] for o in options}:
        return Problem(source, where or sample_id, "label", f"{label!r} is not an option")
    metadata = {
        "case_id": sample_id,
        "task_type": "mcq",
        "question": question_without_choices(str(row.get("question", ""))),
        "context": None,
        "options": options,
        "label_map": {o["label"]: o["label"] for o in options},
        "has_reference": True,
        "body_system": str(row.get("body_system") or "unknown"),
        "medical_task": str(row.get("medical_task") or "unknown"),
        "question_type": str(row.get("question_type") or "unknown"),
        "images_withheld": not show_images and bool(row.get("images")),
    }
    return build_sample(
        sample_id,
        image_files,
        str(metadata["question"]),
        {},
        label,
        metadata,
        show_images,
        choices=[o["text"] for o in options],
    )


def load_medxpertqa_dataset(
    data: str | None,
    image_root: str | None,
    revision: str | None,
    split: str,
    show_images: bool,
) -> tuple[MemoryDataset, dict[str, Any]]:
    """One MM split as samples (every problem reported at once), its images found in the
    snapshot, a folder the user names, or the hub's archive; and where it came from."""
    loaded = load_rows(data, MEDXPERTQA_HUB, revision, split, read_images=show_images)
    rows = loaded.rows

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("id") or f"medxpertqa_{index:05d}")

    missing = wrong_types(loaded, FIELD_TYPES, id_of)
    missing += missing_fields(loaded, REQUIRED_FIELDS, id_of)
    missing += duplicate_ids(loaded, id_of)
    # A row whose options or images are in no published form is refused before its
    # images are looked for (the refusal names the form, not 2,852 missing files).
    for index, row in enumerate(rows):
        found = option_problem(row)
        if found is not None:
            file, where = loaded.where(index)
            missing.append(Problem(file, f"{where} ({id_of(row, index)})", *found))
    if missing:
        raise DatasetError(missing)
    root = (
        Path(image_root)
        if image_root
        else hub_image_root(MEDXPERTQA_HUB, loaded)
        if loaded.image_root is None and show_images
        else default_image_root(loaded, lambda row: list(row["images"]), IMAGE_FOLDER)
    )
    # The blind control needs no image: none is opened, stored or required.
    files = (
        collect_images(loaded, lambda row: list(row["images"]), root, id_of)
        if show_images
        else [[] for _ in rows]
    )
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
    return MemoryDataset(
        samples, name="medxpertqa_mm", location=data_location(data, MEDXPERTQA_HUB.path)
    ), loaded.origin
