"""How the rows of VQA-RAD, PathVQA and SLAKE become samples."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.core.errors import TaskArgumentError
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
from inspect_medreason.core.log_paths import data_location
from inspect_medreason.core.prompts import PromptTemplate
from inspect_medreason.core.short_answers import is_yes_no_reference
from inspect_medreason.core.splits import canonical_split

logger = logging.getLogger(__name__)


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


# The official release's CLOSED/OPEN label of every VQA-RAD question, keyed to join the
# hub's rows (built by scripts/build_vqa_rad_answer_types.py; its source in the file).
RELEASE_ANSWER_TYPES = Path(__file__).parent / "data" / "vqa_rad_answer_types.json"
# How closed/open is decided (-T closed_open): the release's labels, or the yes/no rule.
CLOSED_OPEN_RULES = ("release", "yes_no")


def hub_question(question: Any) -> str:
    """The question as the hub copy's processing script normalised it (lower case, runs of
    spaces as one, " ?" as "?", stripped): the same on the hub's rows, so both sides of the
    join are read alike."""
    return re.sub(" +", " ", str(question).lower()).replace(" ?", "?").strip()


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
            problems.append(
                loaded.row_problem(
                    index,
                    id_of(row, index),
                    "image",
                    "missing: the hub's rows carry an image, the release's an image_name",
                )
            )
    return problems


def _image_digest(row: dict[str, Any]) -> str | None:
    """The SHA-256 of the bytes the row's image was stored as (read or not), if it has one."""
    image = row.get("image")
    digest = getattr(image, "source_sha256", None)
    return str(digest) if digest else None


def _join_release_labels(
    loaded: LoadedRows, id_of: Callable[[dict[str, Any], int], str]
) -> list[Problem]:
    """Give each row the release's answer_type, found by its image's digest and its
    question as the hub normalises it; the record says how many joined. Some rows joining
    and others not would mix two definitions: those that do not are refused, each named.
    None joining is a copy that is not the release's questions (another set in the hub's
    layout, or images re-encoded): the yes/no rule splits it, said in the log and a
    warning."""
    table = json.loads(RELEASE_ANSWER_TYPES.read_text(encoding="utf-8"))
    images: dict[str, str] = table["images"]
    labels = {
        (images[image_name], question): answer_type
        for _, _, image_name, question, answer_type in table["questions"]
    }
    found = [
        labels.get((digest, hub_question(row.get("question"))))
        if (digest := _image_digest(row))
        else None
        for row in loaded.rows
    ]
    joined = sum(label is not None for label in found)
    record = {
        "table": f"inspect_medreason/vqa/data/{RELEASE_ANSWER_TYPES.name}",
        "table_sha256": hashlib.sha256(RELEASE_ANSWER_TYPES.read_bytes()).hexdigest(),
        "release": table["source"],
        "key": "the SHA-256 of the image's bytes and the question as the hub normalises it",
        "joined": joined,
        "rows": len(loaded.rows),
    }
    if joined == 0:
        _yes_no_labels(loaded)
        loaded.origin["closed_open"] = "yes_no"
        loaded.origin["answer_type_from"] = {
            **record,
            "rule": (
                "the yes/no rule (closed when the reference answer is yes or no): no row is "
                "one of the release's questions (by image and question), so its labels "
                "could not be used"
            ),
        }
        logger.warning(
            "VQA-RAD: none of the %d rows is one of the release's questions (by image "
            "digest and question): closed/open is split by the yes/no rule, not by the "
            "release's answer_type (the log's data.answer_type_from says so)",
            len(loaded.rows),
        )
        return []
    problems: list[Problem] = []
    for index, (row, label) in enumerate(zip(loaded.rows, found, strict=True)):
        if label is None:
            problems.append(
                loaded.row_problem(
                    index,
                    id_of(row, index),
                    "answer_type",
                    (
                        "not in the release's table (no question on this image, by the "
                        f"SHA-256 of its bytes, reads {hub_question(row.get('question'))!r}), "
                        f"while {joined:,} other rows are: pass -T closed_open=yes_no to "
                        "split every row by the yes/no rule"
                    ),
                )
            )
        else:
            row["answer_type"] = label
    if not problems:
        loaded.origin["closed_open"] = "release"
        loaded.origin["answer_type_from"] = {
            **record,
            "rule": "the release's answer_type, joined to these rows (which carry none)",
        }
    return problems


def _yes_no_labels(loaded: LoadedRows) -> None:
    for row in loaded.rows:
        reference = row.get("answer")
        row["answer_type"] = (
            "CLOSED" if reference is not None and is_yes_no_reference(str(reference)) else "OPEN"
        )


def _answer_type_record(
    loaded: LoadedRows,
    id_of: Callable[[dict[str, Any], int], str],
    closed_open: str = "release",
) -> list[Problem]:
    """Record in the log where closed/open came from (``closed_open``): the release's
    answer_type (the rows' own, or joined from the release's table for a copy that dropped
    it), or the yes/no rule when asked for by name. Rows that mix the two would mix two
    definitions in one accuracy: the rows without it are refused."""
    labelled = [not is_empty(row.get("answer_type")) for row in loaded.rows]
    if closed_open == "yes_no":
        _yes_no_labels(loaded)
        loaded.origin["closed_open"] = "yes_no"
        loaded.origin["answer_type_from"] = (
            "the yes/no rule (-T closed_open=yes_no: closed when the reference answer is yes "
            "or no)" + ("; the rows' own answer_type set aside" if any(labelled) else "")
        )
    elif all(labelled):
        loaded.origin["closed_open"] = "release"
        loaded.origin["answer_type_from"] = (
            "the rows' answer_type (the official release's CLOSED/OPEN labels)"
        )
    elif not any(labelled):
        return _join_release_labels(loaded, id_of)
    else:
        problems: list[Problem] = []
        for index, row in enumerate(loaded.rows):
            if not labelled[index]:
                problems.append(
                    loaded.row_problem(
                        index,
                        id_of(row, index),
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
    closed_open: str = "release",
) -> tuple[MemoryDataset, dict[str, Any]]:
    """One split of the benchmark as samples (every problem of the data reported at once),
    and the record of where it came from. ``closed_open`` (VQA-RAD): ``release`` splits
    closed/open by the release's answer_type, ``yes_no`` by the yes/no rule."""
    if closed_open not in CLOSED_OPEN_RULES:
        raise TaskArgumentError(
            f"-T closed_open={closed_open!r}: choose one of {', '.join(CLOSED_OPEN_RULES)}"
        )
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
        missing += _answer_type_record(loaded, id_of, closed_open)
    if missing:
        raise DatasetError(missing)
    if benchmark.answer_type_rule:
        kinds = [benchmark.answer_type_of(row) for row in loaded.rows]
        loaded.origin["closed_open_counts"] = {
            "closed": kinds.count("closed"),
            "open": kinds.count("open"),
        }
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
    return MemoryDataset(
        samples, name=benchmark.name, location=data_location(data, benchmark.hub.path)
    ), loaded.origin
