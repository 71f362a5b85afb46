"""Loading the public benchmarks: a local copy in the dataset's own published schema, or
the Hugging Face dataset through ``datasets``; images made into files Inspect can send.

Local data (``-T data=``) may be a JSONL/JSON/parquet file, a folder of them, or a folder
written by ``datasets.save_to_disk``; it is read with ``datasets`` itself, the same code
path as the hub. Image columns may hold decoded images, ``{"bytes": ...}`` records or file
names (resolved under ``image_root``, confined to it, DICOM converted).
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from inspect_medreason.images import ImagePathError, cache_root, check_image_decodes
from inspect_medreason.loaders import DatasetError, Problem, prepare_image

DATA_FILE_SUFFIXES = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}


@dataclass(frozen=True)
class HubSource:
    """Where a benchmark lives on the hub, and at which revision."""

    path: str
    split: str
    name: str | None = None
    revision: str | None = None
    data_files: dict[str, str] | str | None = None
    # The published layout, named in the message when the hub cannot be reached.
    layout: str = "the dataset's published files (JSONL, JSON or parquet)"


@dataclass
class LoadedRows:
    rows: list[dict[str, Any]]
    origin: dict[str, Any]
    image_root: Path | None


def _local_builder(path: Path) -> tuple[str, list[str]]:
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.suffix.lower() in DATA_FILE_SUFFIXES
    )  # fmt: skip
    if not files:
        raise DatasetError([Problem(str(path), "-", "data", "no .jsonl, .json or .parquet file")])
    kinds = {DATA_FILE_SUFFIXES.get(f.suffix.lower()) for f in files}
    if None in kinds or len(kinds) != 1:
        raise DatasetError([Problem(str(path), "-", "data", "expected files of one kind: "
                                    ".jsonl/.json or .parquet")])  # fmt: skip
    return str(kinds.pop()), [str(f) for f in files]


def resolve_revision(repo_id: str, requested: str | None) -> str:
    """The commit a hub dataset is read at, so that the log names exactly what was used.

    No default revision is pinned in the code: the datasets' commit ids could not be checked
    when these tasks were written. Instead every run resolves the requested revision (a
    branch, a tag or a commit; ``main`` by default) to its commit id and loads that commit;
    pass ``-T revision=<commit>`` to repeat a run exactly.
    """
    from huggingface_hub import HfApi

    info = HfApi().dataset_info(repo_id, revision=requested or "main")
    if not info.sha:
        raise DatasetError([Problem(repo_id, "-", "revision", f"{requested!r} has no commit id")])
    return info.sha


def load_rows(data: str | None, hub: HubSource, revision: str | None = None) -> LoadedRows:
    """Rows of the benchmark from ``data`` (local) or the hub, with where they came from."""
    import datasets

    if data:
        path = Path(data).expanduser()
        if not path.exists():
            raise DatasetError([Problem(str(path), "-", "data", "no such file or folder")])
        if path.is_dir() and any((path / n).is_file() for n in ("dataset_dict.json", "state.json")):
            dataset = datasets.load_from_disk(str(path))
            if isinstance(dataset, datasets.DatasetDict):
                dataset = dataset[hub.split]
            origin: dict[str, Any] = {"kind": "datasets folder", "path": str(path)}
        else:
            builder, files = _local_builder(path)
            dataset = datasets.load_dataset(builder, data_files=files, split="train")
            origin = {"kind": f"local {builder}", "files": files}
        image_root = path if path.is_dir() else path.parent
        return LoadedRows([dict(row) for row in dataset], origin, image_root)
    requested = revision or hub.revision
    try:
        pinned = resolve_revision(hub.path, requested)
        dataset = datasets.load_dataset(
            hub.path, name=hub.name, split=hub.split, revision=pinned, data_files=hub.data_files
        )
    except DatasetError:
        raise
    except Exception as error:  # the hub's many failure types all need the same advice
        raise DatasetError([Problem(hub.path, "-", "data", (
            f"could not load {hub.path} (config {hub.name}, split {hub.split}) from the Hugging "
            f"Face hub ({type(error).__name__}: {str(error)[:200]}). Without network access, or "
            f"for a dataset the hub no longer serves (loading scripts are refused by datasets "
            f"{datasets.__version__}), download it and pass -T data=PATH: {hub.layout}."
        ))]) from error  # fmt: skip
    origin = {"kind": "huggingface", "path": hub.path, "name": hub.name, "split": hub.split,
              "revision_requested": requested or "main", "revision": pinned}  # fmt: skip
    return LoadedRows([dict(row) for row in dataset], origin, None)


def _cache_file(data: bytes, suffix: str) -> Path:
    target = cache_root() / "images" / f"{hashlib.sha256(data).hexdigest()}{suffix}"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=suffix, delete=False) as handle:
            handle.write(data)
        os.replace(handle.name, target)
    return target


def image_file(value: Any, image_root: Path | None, frame: object = None) -> Path:
    """A file for an image cell: decoded image, ``{"bytes"|"path"}`` record, or file name."""
    if isinstance(value, Image.Image):
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return _cache_file(buffer.getvalue(), ".png")
    if isinstance(value, dict) and value.get("bytes"):
        path = _cache_file(bytes(value["bytes"]), ".img")
        check_image_decodes(path)
        return path
    if isinstance(value, dict) and value.get("path"):
        value = value["path"]
    if isinstance(value, str) and value:
        if image_root is None:
            raise ImagePathError(
                f"{value!r} is a file name but no image folder is known: pass -T image_root=DIR"
            )
        return prepare_image(image_root, value, frame)
    raise ImagePathError(f"no image in {type(value).__name__} value")


def collect_images(
    rows: list[dict[str, Any]],
    image_of: Any,
    image_root: Path | None,
    source: str,
    id_of: Any,
) -> list[list[Path]]:
    """Image files for every row; all problems are reported together before anything runs."""
    problems: list[Problem] = []
    files: list[list[Path]] = []
    for index, row in enumerate(rows):
        values = image_of(row)
        row_files: list[Path] = []
        for value in values:
            try:
                row_files.append(image_file(value, image_root))
            except ImagePathError as error:
                problems.append(Problem(source, str(id_of(row, index)), "image", str(error)))
        files.append(row_files)
    if problems:
        raise DatasetError(problems)
    return files
