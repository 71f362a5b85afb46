"""How the rows of VQA-RAD, PathVQA and SLAKE become samples."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.core.hub import (
    HubSource,
    LoadedRows,
    collect_images,
    default_image_root,
    duplicate_ids,
    hub_image_root,
    id_text,
    is_empty,
    load_rows,
    missing_fields,
    unexpected_values,
    wrong_ids,
    wrong_types,
)
from inspect_medreason.core.images import PreparedImage
from inspect_medreason.core.loaders import DatasetError, Problem, build_sample
from inspect_medreason.core.prompts import PromptTemplate
from inspect_medreason.core.short_answers import is_yes_no_reference
from inspect_medreason.core.splits import canonical_split


@dataclass(frozen=True)
class VqaBenchmark:
    """How one VQA dataset's rows map onto questions, answers, images and groups."""

    name: str
    hub: HubSource
    licence: str
    images_of: Callable[[dict[str, Any]], list[Any]]
    answer_type_of: Callable[[dict[str, Any]], str]
    # The published schema's fields every row must carry non-empty.
    required_fields: tuple[str, ...] = ("image", "question", "answer")
    # Fields whose published values are a closed set: another value is refused, never
    # guessed into one of them.
    allowed_values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    group_fields: dict[str, str] = field(default_factory=dict)  # metadata key -> row field
    language_field: str | None = None
    # The folder the dataset's image archive unpacks to (SLAKE's imgs.zip: imgs/).
    image_folder: str = "images"
    # Whether closed/open comes from the rows' answer_type where they carry it (else the
    # yes/no rule), recorded in the log as which was used.
    answer_type_rule: bool = False
    # A field naming each row's split, in a release that keeps all splits in one file.
    split_field: str | None = None


def release_or_yes_no(row: dict[str, Any]) -> str:
    """closed/open as the release labels the question (its ``answer_type``: either/or
    questions such as "supratentorial or infratentorial?" are CLOSED there), else, for a
    copy that dropped the label (the hub's), closed when the reference is yes or no."""
    labelled = row.get("answer_type")
    if isinstance(labelled, str) and labelled.strip():
        return "closed" if labelled.strip().upper() == "CLOSED" else "open"
    return "closed" if is_yes_no_reference(str(row["answer"])) else "open"


VQA_RAD = VqaBenchmark(
    name="vqa_rad",
    hub=HubSource(
        "flaviagiammarino/vqa-rad",
        split="test",
        splits=("train", "test"),
        revision="bcf91e7654fb9d51c8ab6a5b82cacf3fafd2fae9",
        revision_source="inspect_evals src/inspect_evals/vqa_rad/dataset.py (VQA_RAD_DATASET_REVISION)",
        layout="the hub snapshot (data/train-00000-of-00001-<hash>.parquet and data/test-00000-of-00001-<hash>.parquet: image, question, answer), one of those files, a datasets.save_to_disk folder, or the official release's 'VQA_RAD Dataset Public.json' (image_name, question, answer, answer_type, phrase_type) beside its 'VQA_RAD Image Folder'",
    ),
    licence="CC0 1.0",
    # The hub's rows carry the image; the official release's name it (image_name).
    images_of=lambda row: [row.get("image") or row.get("image_name")],
    answer_type_of=release_or_yes_no,
    required_fields=("question", "answer"),
    allowed_values={"answer_type": ("OPEN", "CLOSED")},
    image_folder="VQA_RAD Image Folder",
    answer_type_rule=True,
    # The official release holds both splits in one file: phrase_type test_freeform and
    # test_para are its 451 test questions.
    split_field="phrase_type",
)


PATH_VQA = VqaBenchmark(
    name="path_vqa",
    hub=HubSource(
        "flaviagiammarino/path-vqa",
        split="test",
        # Pinned alike by several independent public loaders (one re-checked it through the
        # hub's metadata API); the test shards they checksum are the ones the hub's commit
        # history names.
        revision="1685832883334b5bb5beaf4e4b333fdeecaa4ad9",
        revision_source="public loaders that pin it, matching the hub's commit history of the shards",
        layout="the hub snapshot (data/{train,validation,test}-0000N-of-0000M-<hash>.parquet: image, question, answer), one split's files, or a datasets.save_to_disk folder",
    ),
    licence="MIT",
    images_of=lambda row: [row["image"]],
    answer_type_of=lambda row: "closed" if is_yes_no_reference(str(row["answer"])) else "open",
)


SLAKE = VqaBenchmark(
    name="slake",
    hub=HubSource(
        "BoKelvin/SLAKE",
        split="test",
        # The hub's commit history: main's head ("Update README.md"), the repository's last
        # commit; several public loaders pin the same id.
        revision="a9083ce6c34ac3ffb17671a605962924d8a8f9e9",
        revision_source="the hub's commit history (main's head)",
        image_archive=("imgs.zip", "imgs"),
        layout="the hub snapshot (train.json, validation.json, test.json with img_id, img_name, question, answer, q_lang, location, modality, answer_type, base_type, content_type, triple, qid; imgs.zip unpacked, its imgs/ folder as -T image_root), or one of the JSON files",
    ),
    required_fields=("img_name", "question", "answer", "q_lang", "answer_type"),
    allowed_values={"answer_type": ("OPEN", "CLOSED"), "q_lang": ("en", "zh")},
    licence="CC BY 4.0",
    images_of=lambda row: [row.get("image") or row["img_name"]],
    answer_type_of=lambda row: (
        "closed" if str(row["answer_type"]).strip().upper() == "CLOSED" else "open"
    ),
    group_fields={"modality": "modality", "content_type": "content_type", "organ": "location"},
    language_field="q_lang",
    image_folder="imgs",
)


def _has_image(benchmark: VqaBenchmark, row: dict[str, Any]) -> bool:
    try:
        return any(not is_empty(value) for value in benchmark.images_of(row))
    except (KeyError, TypeError):
        return False


def record_to_sample(
    benchmark: VqaBenchmark,
    row: dict[str, Any],
    sample_id: str,
    image_files: Sequence[Path | PreparedImage],
    show_images: bool,
    templates: tuple[PromptTemplate, PromptTemplate],
) -> Sample:
    """One row as a sample: the question and image(s) as input, the answer as target, the
    answer type (closed/open) and the benchmark's group fields in metadata."""
    metadata = {
        "question": str(row["question"]),
        "answer_type": benchmark.answer_type_of(row),
        **{
            key: str(row.get(column) or "unknown") for key, column in benchmark.group_fields.items()
        },
        # The blind control reads no image: whether the row has one to withhold.
        "images_withheld": not show_images and _has_image(benchmark, row),
    }
    if benchmark.language_field:
        metadata["language"] = str(row.get(benchmark.language_field, ""))
    system, user = templates
    prompt = {
        "family": "vqa",
        "system": system.name,
        "user": user.name,
        "values": {"question": str(row["question"])},
    }
    return build_sample(
        sample_id,
        image_files,
        str(row["question"]),
        prompt,
        str(row["answer"]),
        metadata,
        show_images,
    )


# The published types of the fields every VQA family reads (answers may be numbers in
# the official releases: they are compared as text).
ROW_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "question": ((str,), "text"),
    "answer": ((str, int, float), "text"),
    "answer_type": ((str,), "text (OPEN or CLOSED)"),
    "q_lang": ((str,), "text (en or zh)"),
    "img_name": ((str,), "an image file name"),
    "image_name": ((str,), "an image file name"),
    # The release's split mark (test_freeform), SLAKE's groups.
    "phrase_type": ((str,), "text"),
    "modality": ((str,), "text"),
    "content_type": ((str,), "text"),
    "location": ((str,), "text"),
}
ID_FIELDS = ("qid", "id")


def _row_split(row: dict[str, Any], field_name: str) -> str:
    value = str(row.get(field_name) or "").strip().lower()
    return "test" if value.startswith("test") else "train"


def _missing_images(
    loaded: LoadedRows, benchmark: VqaBenchmark, id_of: Callable[[dict[str, Any], int], str]
) -> list[Problem]:
    """A problem for each row with no image at all (in none of the fields its layout
    names it in)."""
    if benchmark is not VQA_RAD:
        return []
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        if all(is_empty(value) for value in benchmark.images_of(row)):
            file, where = loaded.where(index)
            problems.append(
                Problem(
                    file,
                    f"{where} ({id_of(row, index)})",
                    "image",
                    "missing: the hub's rows carry an image, the release's an image_name",
                )
            )
    return problems


def _answer_type_record(
    loaded: LoadedRows, id_of: Callable[[dict[str, Any], int], str]
) -> list[Problem]:
    """Record in the log where closed/open came from: the release's answer_type on every
    row, or the yes/no rule on every row (a copy without the label). Rows that mix the two
    would mix two definitions in one accuracy: the rows without it are refused."""
    labelled = [not is_empty(row.get("answer_type")) for row in loaded.rows]
    if all(labelled):
        loaded.origin["answer_type_from"] = (
            "the rows' answer_type (the official release's CLOSED/OPEN labels)"
        )
    elif not any(labelled):
        loaded.origin["answer_type_from"] = (
            "the yes/no rule (closed when the reference answer is yes or no): the rows "
            "carry no answer_type"
        )
    else:
        problems: list[Problem] = []
        for index, row in enumerate(loaded.rows):
            if not labelled[index]:
                file, where = loaded.where(index)
                problems.append(
                    Problem(
                        file,
                        f"{where} ({id_of(row, index)})",
                        "answer_type",
                        f"missing, while {sum(labelled):,} other rows have it: one "
                        "closed/open definition per run",
                    )
                )
        return problems
    return []


def load_vqa_dataset(
    benchmark: VqaBenchmark,
    data: str | None,
    image_root: str | None,
    revision: str | None,
    split: str | None,
    language: str | None,
    show_images: bool,
    templates: tuple[PromptTemplate, PromptTemplate],
) -> tuple[MemoryDataset, dict[str, Any]]:
    """One split of the benchmark as samples (every problem of the data reported at once),
    and the record of where it came from."""
    loaded = load_rows(data, benchmark.hub, revision, split, read_images=show_images)
    source = str(data or benchmark.hub.path)

    def id_of(row: dict[str, Any], index: int) -> str:
        named = [row[name] for name in ID_FIELDS if row.get(name) is not None]
        return (id_text(named[0]) if named else None) or f"{benchmark.name}_{index:05d}"

    # The split mark is checked in every row before the rows are split by it: a mark of
    # the wrong type would otherwise put its row in the other split unsaid.
    split_types = {name: ROW_TYPES[name] for name in (benchmark.split_field,) if name in ROW_TYPES}
    missing = wrong_types(loaded, split_types, id_of)
    keep: list[int] = list(range(len(loaded.rows)))
    # The release's one file marks its test rows (test_freeform, test_para); MEVF's
    # trainset.json and testset.json keep the field without the mark: one split a file.
    if benchmark.split_field and any(
        str(row.get(benchmark.split_field) or "").strip().lower().startswith("test")
        for row in loaded.rows
    ):
        wanted_split = canonical_split(split or benchmark.hub.split)
        keep = [
            i for i in keep if _row_split(loaded.rows[i], benchmark.split_field) == wanted_split
        ]
        loaded = loaded.subset(keep)
        loaded.origin["split_from"] = f"the rows' {benchmark.split_field} (test_*: test)"
        loaded.origin["rows"] = len(keep)
        keep = list(range(len(loaded.rows)))
    missing += wrong_types(
        loaded, {k: v for k, v in ROW_TYPES.items() if k not in split_types}, id_of
    )
    missing += wrong_ids(loaded, ID_FIELDS, id_of)
    missing += missing_fields(loaded, benchmark.required_fields, id_of)
    missing += _missing_images(loaded, benchmark, id_of)
    missing += duplicate_ids(loaded, id_of)
    missing += unexpected_values(loaded, benchmark.allowed_values, id_of)
    if benchmark.answer_type_rule:
        missing += _answer_type_record(loaded, id_of)
    if missing:
        raise DatasetError(missing)
    if benchmark.language_field and language and language != "all":
        wanted = str(language).strip().lower()
        keep = [
            i
            for i in keep
            if str(loaded.rows[i][benchmark.language_field]).strip().lower() == wanted
        ]
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
    # The blind control needs no image: none is opened, stored or required.
    files = (
        collect_images(loaded, benchmark.images_of, root, id_of)
        if show_images
        else [[] for _ in loaded.rows]
    )
    samples = [
        record_to_sample(benchmark, row, id_of(row, index), row_files, show_images, templates)
        for index, (row, row_files) in enumerate(zip(loaded.rows, files, strict=True))
    ]
    return MemoryDataset(samples, name=benchmark.name, location=source), loaded.origin
