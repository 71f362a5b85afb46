"""Loading the public benchmarks as their publishers ship them: one split of one config, from
the Hugging Face hub at a pinned commit or from a local copy in any of the hub's layouts;
images made into files Inspect can send.

Local data (``-T data=``) may be:

- a hub snapshot folder (what ``huggingface-cli download`` or ``git clone`` leaves): the
  dataset card's ``configs`` say which files hold which split of which config;
- a folder of data files named the hub's way (``data/test-00000-of-00001-<hash>.parquet``,
  ``test.json``, ``MM/test.jsonl``, ``CMB-test/...``): the split is read from the names with
  ``datasets``' own rules;
- a folder written by ``datasets.save_to_disk`` (a ``DatasetDict`` or one split);
- a single JSON, JSONL, parquet or arrow file, taken as the requested split unless its name
  says it is another one.

One split is read, never several mixed; when a folder's files cannot be told apart, the load
is refused and the files are named. Every file is read with ``datasets`` (the same code path
as the hub), one at a time, so that a library error names the file it came from; every file
read is recorded in the log.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from inspect_medreason.core.errors import TaskArgumentError, describe_error, first_few
from inspect_medreason.core.images import ImagePathError, ImageStore, PreparedImage
from inspect_medreason.core.loaders import (
    DatasetError,
    Problem,
    json_type_name,
    prepare_image_file,
    refuse_non_utf8_path,
)
from inspect_medreason.core.log_paths import path_for_log
from inspect_medreason.core.splits import canonical_split, split_named_by
from inspect_medreason.core.user_files import (
    MAX_DATA_BYTES,
    UserFileError,
    read_user_bytes,
    refuse_deep_json,
)

DATA_FILE_SUFFIXES = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".arrow": "arrow"}
# Files a snapshot holds beside the data that are never rows.
NOT_DATA_FILES = frozenset({"dataset_info.json", "dataset_dict.json", "state.json"})
COMMIT_ID = re.compile(r"^[0-9a-f]{40}$")
logger = logging.getLogger(__name__)
MAX_CARD_CHARS = 1_000_000
# Rows read from a data file at a time: with the images they carry (PathVQA's average
# about 40 KB), a batch is a few MB, whatever the size of the split.
ROW_BATCH = 64


@dataclass(frozen=True)
class UnreadImage:
    """An image cell left unread: the blind control (``images=false``) neither opens nor
    stores an image, but the row still has one."""

    where: str
    # The digest of the stored bytes (hashed, never decoded): what a row is joined by
    # (VQA-RAD's release labels) without opening its image.
    source_sha256: str | None = None


@dataclass(frozen=True)
class HubSource:
    """Where a benchmark lives on the hub: its id, the card's config, the split the
    benchmark reports, and the commit its numbers are pinned to (None where no commit id
    could be verified: then the user must give ``-T revision=``)."""

    path: str
    split: str
    # The splits the dataset publishes (its card's names); another is refused up front.
    splits: tuple[str, ...] = ("train", "validation", "test")
    name: str | None = None
    revision: str | None = None
    # Where the pinned commit id was checked, named in the docs and the log.
    revision_source: str | None = None
    # File name patterns that sit beside a split's data but are not its rows (an answer
    # key, for one).
    exclude: tuple[str, ...] = ()
    # On the hub, the one file of each split to read (GEMeX-VQA has no card; CMB's splits
    # differ in their columns, which ``datasets`` refuses to build as one config).
    data_files: dict[str, str] | str | None = None
    # The archive the repository keeps its images in, and the folder it unpacks to
    # (SLAKE: imgs.zip, imgs/; MedXpertQA: images.zip, images/).
    image_archive: tuple[str, str] | None = None
    # The published layout, named in the message when the hub cannot be reached.
    layout: str = "the dataset's published files (JSONL, JSON or parquet)"


@dataclass
class LoadedRows:
    """One split's rows, where each came from (file, row number within it), and the record
    of the load for the eval log."""

    rows: list[dict[str, Any]]
    origin: dict[str, Any]
    image_root: Path | None
    row_files: list[str] = field(default_factory=list)
    row_numbers: list[int] = field(default_factory=list)

    def where(self, index: int) -> tuple[str, str]:
        """(file, "row N") of row ``index``, for a problem's location."""
        if index < len(self.row_files):
            return self.row_files[index], f"row {self.row_numbers[index]}"
        return str(self.origin.get("path", "-")), f"row {index}"

    def row_problem(self, index: int, row_id: str, field_name: str, message: str) -> Problem:
        """A problem of row ``index`` (its id ``row_id``): its file, "row N (id)", the
        field and what is wrong with it."""
        file, where = self.where(index)
        return Problem(file, f"{where} ({row_id})", field_name, message)

    def subset(self, keep: Sequence[int]) -> LoadedRows:
        """The rows at ``keep`` (a language, a question type), each still naming its file
        and row."""
        if len(keep) == len(self.rows):
            return self
        return LoadedRows(
            [self.rows[i] for i in keep],
            self.origin,
            self.image_root,
            [self.where(i)[0] for i in keep],
            [self._number(i) for i in keep],
        )

    def _number(self, index: int) -> int:
        return self.row_numbers[index] if index < len(self.row_numbers) else index


# ---------------------------------------------------------------------------------------
# Splits: the names, and which files hold which


def card_configs(folder: Path) -> tuple[dict[str, dict[str, list[str]]], list[Problem]]:
    """The dataset card's ``configs`` (README.md's YAML header): config -> split -> file
    patterns. A card without configs gives none; a header that is not YAML is a problem."""
    card = folder / "README.md"
    if not card.is_file():
        return {}, []
    # The header is at the top: a card is read no further than MAX_CARD_CHARS.
    with card.open(encoding="utf-8", errors="replace") as handle:
        text = handle.read(MAX_CARD_CHARS)
    if not text.startswith("---"):
        return {}, []
    header = text[3:].split("\n---", 1)[0]
    try:
        meta = yaml.safe_load(header)
    except yaml.YAMLError as error:
        return {}, [
            Problem(
                str(card),
                "-",
                "configs",
                f"the card's YAML header cannot be read ({describe_error(error, 200)})",
            )
        ]
    configs: dict[str, dict[str, list[str]]] = {}
    entries = meta.get("configs") if isinstance(meta, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("config_name", "default"))
        data_files = entry.get("data_files")
        splits: dict[str, list[str]] = {}
        if isinstance(data_files, str):
            splits["train"] = [data_files]
        elif isinstance(data_files, list):
            for item in data_files:
                if isinstance(item, dict) and "split" in item:
                    paths = item.get("path")
                    splits[str(item["split"])] = (
                        [paths] if isinstance(paths, str) else [str(p) for p in paths or []]
                    )
                elif isinstance(item, str):
                    splits.setdefault("train", []).append(item)
        elif isinstance(data_files, dict):
            for split, paths in data_files.items():
                splits[str(split)] = [paths] if isinstance(paths, str) else list(paths)
        configs[name] = splits
    return configs, []


def _data_files(folder: Path, patterns: Iterable[str], exclude: Sequence[str]) -> list[Path]:
    """The data files under ``folder`` that match any of ``patterns`` (the hub's glob
    rules), hidden files and non-data files left out."""
    from datasets.data_files import resolve_pattern

    found: set[Path] = set()
    for pattern in patterns:
        try:
            matches = resolve_pattern(pattern, str(folder))
        except FileNotFoundError:
            continue
        found.update(Path(match) for match in matches)
    inside = Path(os.path.normpath(folder.absolute()))
    return sorted(
        path
        for path in found
        # A card's pattern may not reach outside the folder (``../``), and only regular
        # files are read (a FIFO would block the load for ever).
        if Path(os.path.normpath(path.absolute())).is_relative_to(inside)
        and path.is_file()
        and path.suffix.lower() in DATA_FILE_SUFFIXES
        and path.name not in NOT_DATA_FILES
        and not any(fnmatch.fnmatch(path.name, pattern) for pattern in exclude)
    )


def _relative(paths: Iterable[Path], folder: Path) -> list[str]:
    return [
        str(path.relative_to(folder)) if path.is_relative_to(folder) else path_for_log(path)
        for path in paths
    ]


def _pick_config(
    configs: dict[str, Any], wanted: str | None, where: Path
) -> tuple[str | None, Problem | None]:
    if wanted is None:
        return (next(iter(configs)) if len(configs) == 1 else None), None
    for name in configs:
        if name == wanted or name.lower() == wanted.lower():
            return name, None
    return None, Problem(
        str(where / "README.md"),
        "-",
        "config",
        (
            f"the dataset card has no config {wanted!r} (it has {', '.join(configs)}); pass the "
            "dataset's own snapshot, or the file of the split to evaluate"
        ),
    )


def split_files(folder: Path, hub: HubSource, split: str) -> tuple[list[Path], dict[str, Any]]:
    """The files of ``folder`` that hold ``split`` of the benchmark's config, and how they
    were told apart; a folder whose files cannot be told apart is refused with the files
    named."""
    configs, problems = card_configs(folder)
    if problems:
        raise DatasetError(problems)
    wanted = canonical_split(split)
    if configs:
        config, problem = _pick_config(configs, hub.name, folder)
        if problem is not None:
            raise DatasetError([problem])
        if config is None:
            raise DatasetError(
                [
                    Problem(
                        str(folder / "README.md"),
                        "-",
                        "config",
                        (
                            f"the dataset card has several configs ({', '.join(configs)}) and the task names "
                            "none"
                        ),
                    )
                ]
            )
        splits = configs[config]
        matching = [name for name in splits if canonical_split(name) == wanted]
        if not matching:
            raise DatasetError(
                [
                    Problem(
                        str(folder / "README.md"),
                        "-",
                        "split",
                        (
                            f"config {config!r} has no split {split!r} (it has {', '.join(splits)}); "
                            "pass -T split=NAME"
                        ),
                    )
                ]
            )
        files = _data_files(folder, splits[matching[0]], hub.exclude)
        if not files:
            raise DatasetError(
                [
                    Problem(
                        str(folder),
                        "-",
                        "data",
                        (
                            f"the dataset card puts split {matching[0]!r} of config {config!r} in "
                            f"{', '.join(splits[matching[0]])}, and no such file is here: download it "
                            "(or the whole snapshot) again"
                        ),
                    )
                ]
            )
        return files, {"config": config, "split_from": "the dataset card's configs"}
    return _files_by_name(folder, hub, split, wanted)


_SHARD = re.compile(r"-\d{5}-of-(\d{5})")


def _one_set_of_shards(files: list[Path]) -> bool:
    """Several files are one split's parts when they are numbered shards of one count
    (``test-00000-of-00003-<hash>.parquet``) or the hub's export (``test/0000.parquet``)."""
    counts = {match.group(1) if (match := _SHARD.search(f.name)) else None for f in files}
    if None not in counts and len(counts) == 1:
        return True
    return len({f.parent for f in files}) == 1 and all(
        re.fullmatch(r"\d+\.\w+", f.name) for f in files
    )


def _config_folder(folder: Path, config: str | None) -> Path:
    """A snapshot without a card keeps each config in a folder of its name (``MM/``,
    ``CMB-Exam/``): read that one."""
    if config is None:
        return folder
    for sub in sorted(folder.iterdir()):
        if sub.is_dir() and sub.name.lower() == config.lower():
            return sub
    return folder


def _files_by_name(
    folder: Path, hub: HubSource, split: str, wanted: str
) -> tuple[list[Path], dict[str, Any]]:
    from datasets.data_files import get_data_patterns

    base = _config_folder(folder, hub.name)
    every = _data_files(base, ["**"], hub.exclude)
    if not every:
        raise DatasetError(
            [
                Problem(
                    str(base),
                    "-",
                    "data",
                    (f"no {', '.join(DATA_FILE_SUFFIXES)} file: expected {hub.layout}"),
                )
            ]
        )
    how: dict[str, Any] = {"split_from": "the files' names (the hub's naming rules)"}
    if base != folder:
        how["config_folder"] = base.name
    patterns = {str(name): list(found) for name, found in get_data_patterns(str(base)).items()}
    by_split = {name: _data_files(base, found, hub.exclude) for name, found in patterns.items()}
    by_split = {name: files for name, files in by_split.items() if files}
    named = {path for files in by_split.values() for path in files}
    # Names the hub's rules miss but the publisher uses (SLAKE's validate.json).
    for path in every:
        if path not in named:
            for name in split_named_by(path.name):
                by_split.setdefault(name, []).append(path)
                named.add(path)
    if not any(split_named_by(str(path.relative_to(base))) for path in every):
        # No file names a split: one file is the split asked for; several cannot be told apart.
        if len(every) == 1:
            return every, {**how, "split_from": "the only data file (its name names no split)"}
        raise DatasetError(
            [
                Problem(
                    str(base),
                    "-",
                    "split",
                    (
                        f"{len(every)} data files and none names its split, so the {split!r} split cannot "
                        f"be told apart: {first_few(_relative(every, base), 8)}. Pass the one file to "
                        "evaluate, or name the files the hub's way (test.jsonl, "
                        "data/test-00000-of-00001.parquet)"
                    ),
                )
            ]
        )
    claimed = [path for path in named if sum(path in files for files in by_split.values()) > 1]
    if claimed:
        raise DatasetError(
            [
                Problem(
                    str(base),
                    "-",
                    "split",
                    (
                        f"file names that name more than one split: {first_few(_relative(claimed, base), 8)};"
                        " rename them or pass the one file to evaluate"
                    ),
                )
            ]
        )
    matching = [name for name in by_split if canonical_split(name) == wanted]
    if (
        matching
        and len(by_split[matching[0]]) > 1
        and not _one_set_of_shards(by_split[matching[0]])
    ):
        raise DatasetError(
            [
                Problem(
                    str(base),
                    "-",
                    "split",
                    (
                        f"several files of the {split!r} split that are not shards of one set "
                        f"({first_few(_relative(by_split[matching[0]], base), 8)}): they would be read "
                        "as one. Keep one, or pass the one file to evaluate"
                    ),
                )
            ]
        )
    if not matching:
        found = "; ".join(
            f"{name}: {first_few(_relative(files, base), 3)}" for name, files in by_split.items()
        )
        raise DatasetError(
            [
                Problem(
                    str(base),
                    "-",
                    "split",
                    (
                        f"no file of the {split!r} split (by the hub's file naming) here; found {found}. "
                        "Pass -T split=NAME or the folder that holds the split"
                    ),
                )
            ]
        )
    unnamed = [path for path in every if path not in named]
    if unnamed:
        how["not_read"] = _relative(unnamed, base)
        logger.warning(
            "%s: read the %s split's files; not read, as their names name no split: %s",
            base,
            split,
            first_few(how["not_read"], 8),
        )
    return by_split[matching[0]], how


# ---------------------------------------------------------------------------------------
# Revisions


def resolve_revision(repo_id: str, requested: str | None) -> str:
    """The commit a hub dataset is read at: a commit id as given, or a branch or tag
    resolved to its commit by the hub, so that the log names exactly what was used."""
    if requested and COMMIT_ID.match(requested):
        return requested
    from huggingface_hub import HfApi

    info = HfApi().dataset_info(repo_id, revision=requested or "main")
    if not info.sha:
        raise DatasetError([Problem(repo_id, "-", "revision", f"{requested!r} has no commit id")])
    return info.sha


def revision_record(hub: HubSource, requested: str | None, pinned: str) -> dict[str, Any]:
    """What the log says about the revision used."""
    return {
        "revision_requested": requested,
        "revision": pinned,
        "revision_pinned_by_task": hub.revision,
        "revision_source": hub.revision_source if requested == hub.revision else "-T revision",
    }


def require_revision(hub: HubSource, revision: str | None) -> str:
    """The revision to read the hub at: ``-T revision`` or the task's verified pin; with
    neither, a refusal (never a guess at ``main``)."""
    requested = revision or hub.revision
    if not requested:
        raise DatasetError(
            [
                Problem(
                    hub.path,
                    "-",
                    "revision",
                    (
                        f"no commit of {hub.path} could be verified when this task was written, so the task "
                        "does not pick one: pass -T revision=<commit id> (the dataset page's 'Files and "
                        f"versions' history lists them), or download the dataset and pass -T data=PATH: "
                        f"{hub.layout}"
                    ),
                )
            ]
        )
    return requested


# ---------------------------------------------------------------------------------------
# Reading


def _library_problem(path: Path | str, error: BaseException, advice: str = "") -> Problem:
    text = describe_error(error, 300)
    return Problem(str(path), "-", "data", f"cannot be read ({text}){advice}")


def _image_columns(features: Any) -> dict[str, bool]:
    """The columns ``datasets`` decodes as images: column -> whether it holds a list."""
    import datasets

    found: dict[str, bool] = {}
    for name, feature in (features or {}).items():
        if isinstance(feature, datasets.Image):
            found[name] = False
        else:
            inner = getattr(feature, "feature", None)
            if isinstance(feature, list) and feature:
                inner = feature[0]
            if isinstance(inner, datasets.Image):
                found[name] = True
    return found


def _mixed_type_columns(features: Any) -> Any:
    """The columns ``datasets`` keeps as JSON text because the file gives them values of
    more than one type (its ``Json`` feature, ``datasets`` 4 and later), as ``Features`` to
    decode them with; None when there are none. Read as stored, such a column is JSON text
    in every row (an answer ``yes`` becomes ``"yes"`` with its quotes, a list of the
    wrong type a string of the right one), so each row is given back the value its file
    holds and its type is checked like any other."""
    import datasets

    json_feature = getattr(datasets, "Json", None)
    if json_feature is None:
        return None

    def holds_json(feature: Any) -> bool:
        if isinstance(feature, json_feature):
            return True
        if isinstance(feature, dict):
            return any(holds_json(inner) for inner in feature.values())
        if isinstance(feature, list | tuple):
            return any(holds_json(inner) for inner in feature)
        inner = getattr(feature, "feature", None)
        return inner is not None and holds_json(inner)

    found = {name: f for name, f in (features or {}).items() if holds_json(f)}
    return datasets.Features(found) if found else None


def _stored_image(
    cell: Any, store: ImageStore | None, where: str
) -> PreparedImage | ImagePathError | UnreadImage | Any:
    """An image cell as stored (``{"bytes", "path"}``) made into the file that is sent, or
    the problem with it; a cell that names a file (no bytes) is left for the image folder.
    Without a store (the blind control) nothing is decoded or written."""
    if isinstance(cell, PreparedImage | ImagePathError):
        return cell  # prepared with its batch
    if not isinstance(cell, dict) or not cell.get("bytes"):
        return cell.get("path") if isinstance(cell, dict) and cell.get("path") else cell
    if store is None:
        return UnreadImage(where, hashlib.sha256(bytes(cell["bytes"])).hexdigest())
    try:
        return store.prepare(bytes(cell["bytes"]), f"the image of {where}")
    except ImagePathError as error:
        return error


def _store_batch(
    batch: list[tuple[int, dict[str, Any]]], images: dict[str, bool], store: ImageStore, file: str
) -> None:
    """Prepare a batch's image cells together (decoded on two threads), each replaced by
    what it became; cells without bytes are left for ``_stored_image``."""
    cells: list[tuple[dict[str, Any], str, int | None, str]] = []
    for number, row in batch:
        for column, is_list in images.items():
            value = row.get(column)
            values = value if is_list and isinstance(value, list) else [value]
            for index, cell in enumerate(values):
                if isinstance(cell, dict) and cell.get("bytes"):
                    where = f"the image of row {number} of {file} ({column})"
                    cells.append((row, column, index if is_list else None, where))
    if not cells:
        return
    outcomes = store.prepare_many(
        [
            (
                bytes((row[column][position] if position is not None else row[column])["bytes"]),
                where,
            )
            for row, column, position, where in cells
        ]
    )
    for (row, column, position, _), outcome in zip(cells, outcomes, strict=True):
        if position is None:
            row[column] = outcome
        else:
            row[column][position] = outcome


def _rows_of(
    dataset: Any,
    file: str,
    rows: LoadedRows,
    problems: list[Problem],
    store: ImageStore | None,
) -> None:
    """Append a ``datasets.Dataset``'s rows, ``ROW_BATCH`` at a time as stored (images as
    their encoded bytes, never decoded by ``datasets``): each image is made into the file
    that is sent (``store``) as its row is read, so memory holds one batch's images, not
    the split's. A batch that cannot be read is read again row by row to name the row."""
    images = _image_columns(getattr(dataset, "features", None))
    mixed = _mixed_type_columns(getattr(dataset, "features", None))
    table = dataset.with_format("arrow")
    for start in range(0, len(dataset), ROW_BATCH):
        try:
            batch: list[tuple[int, dict[str, Any]]] = list(
                enumerate(table[start : start + ROW_BATCH].to_pylist(), start)
            )
        except Exception:  # pyarrow: the row at fault is found below
            batch = []
            for number in range(start, min(start + ROW_BATCH, len(dataset))):
                try:
                    batch.append((number, table[number : number + 1].to_pylist()[0]))
                except Exception as error:  # every failure names its row
                    problems.append(
                        Problem(
                            file,
                            f"row {number}",
                            "row",
                            f"cannot be read ({describe_error(error, 200)})",
                        )
                    )
        if store is not None and images:
            _store_batch(batch, images, store, Path(file).name)
        for number, row in batch:
            if mixed is not None:
                try:
                    row.update(mixed.decode_example({name: row.get(name) for name in mixed}))
                except Exception as error:  # a saved copy's JSON text edited by hand
                    problems.append(
                        Problem(
                            file,
                            f"row {number}",
                            "row",
                            f"cannot be read ({describe_error(error, 200)})",
                        )
                    )
                    continue
            for column, is_list in images.items():
                where = f"row {number} of {Path(file).name} ({column})"
                if is_list and isinstance(row.get(column), list):
                    row[column] = [_stored_image(c, store, where) for c in row[column]]
                elif column in row:
                    row[column] = _stored_image(row[column], store, where)
            rows.rows.append(row)
            rows.row_files.append(file)
            rows.row_numbers.append(number)


def _read_file(
    path: Path, rows: LoadedRows, problems: list[Problem], store: ImageStore | None
) -> None:
    import datasets

    builder = DATA_FILE_SUFFIXES[path.suffix.lower()]
    if builder == "json":
        # pyarrow's JSON reader has no depth limit: deep nesting crashed the process.
        try:
            refuse_deep_json(read_user_bytes(path, MAX_DATA_BYTES, "data file"), path, "data file")
        except UserFileError as error:
            problems.append(
                Problem(str(path), "-", "data", str(error).removeprefix(f"data file {path}: "))
            )
            return
    try:
        dataset = datasets.load_dataset(builder, data_files=[str(path)], split="train")
    except Exception as error:  # datasets, pyarrow and json errors all name this file
        problems.append(
            _library_problem(
                path,
                error,
                (
                    ": check that it is the dataset's published file, whole (every row of a JSON/JSONL "
                    "file an object with the same fields)"
                ),
            )
        )
        return
    _rows_of(dataset, str(path), rows, problems, store)


def _single_file_split(path: Path, split: str) -> dict[str, Any]:
    named = split_named_by(path.name)
    if named and canonical_split(split) not in named:
        raise DatasetError(
            [
                Problem(
                    str(path),
                    "-",
                    "split",
                    (
                        f"by its name this file holds the {', '.join(sorted(named))} split, and the task "
                        f"evaluates {split!r}: pass that split's file, or -T split=NAME"
                    ),
                )
            ]
        )
    return {"split_from": "the file given" + (" (its name agrees)" if named else "")}


def _read_saved(
    path: Path, split: str, rows: LoadedRows, problems: list[Problem], store: ImageStore | None
) -> dict[str, Any]:
    import datasets

    try:
        saved = datasets.load_from_disk(str(path))
    except Exception as error:  # a damaged save_to_disk folder, in any of its files
        problems.append(_library_problem(path, error, ": save it again with save_to_disk"))
        return {}
    if isinstance(saved, datasets.DatasetDict):
        names = {canonical_split(name): name for name in saved}
        chosen = names.get(canonical_split(split))
        if chosen is None:
            raise DatasetError(
                [
                    Problem(
                        str(path),
                        "-",
                        "split",
                        (
                            f"the saved dataset has no split {split!r} (it has {', '.join(saved)}); pass "
                            "-T split=NAME"
                        ),
                    )
                ]
            )
        dataset, how = saved[chosen], {"split_from": "the saved DatasetDict", "split_name": chosen}
    else:
        dataset, how = saved, {"split_from": "the saved dataset (one split)"}
        recorded = getattr(saved, "split", None)
        if recorded and canonical_split(str(recorded)) != canonical_split(split):
            raise DatasetError(
                [
                    Problem(
                        str(path),
                        "-",
                        "split",
                        (
                            f"the saved dataset is the {recorded} split and the task evaluates {split!r}: "
                            "pass -T split=NAME or the right folder"
                        ),
                    )
                ]
            )
    _rows_of(dataset, str(path), rows, problems, store)
    return how


def _read_local(path: Path, hub: HubSource, split: str, store: ImageStore | None) -> LoadedRows:
    rows = LoadedRows([], {}, path if path.is_dir() else path.parent)
    problems: list[Problem] = []
    if path.is_dir() and any((path / n).is_file() for n in ("dataset_dict.json", "state.json")):
        how = _read_saved(path, split, rows, problems, store)
        origin: dict[str, Any] = {"kind": "datasets folder", "path": path_for_log(path), **how}
        files = [path]
    else:
        if path.is_dir():
            files, how = split_files(path, hub, split)
        else:
            if path.suffix.lower() not in DATA_FILE_SUFFIXES:
                raise DatasetError(
                    [
                        Problem(
                            str(path),
                            "-",
                            "data",
                            (f"not a {', '.join(DATA_FILE_SUFFIXES)} file: expected {hub.layout}"),
                        )
                    ]
                )
            files, how = [path], _single_file_split(path, split)
        for file in files:
            _read_file(file, rows, problems, store)
        kinds = sorted({DATA_FILE_SUFFIXES[file.suffix.lower()] for file in files})
        origin = {"kind": f"local {'/'.join(kinds)}", "path": path_for_log(path), **how}
    if problems:
        raise DatasetError(problems)
    # the data by its own name and its files relative to it, never their local paths
    origin.update(
        split=canonical_split(split),
        files=[path_for_log(file, path if path.is_dir() else None) for file in files],
        rows=len(rows.rows),
    )
    rows.origin = origin
    return rows


def _hub_split_files(hub: HubSource, split: str) -> dict[str, str] | None:
    if hub.data_files is None:
        return None
    if isinstance(hub.data_files, str):
        return {split: hub.data_files}
    for name, path in hub.data_files.items():
        if canonical_split(name) == canonical_split(split):
            return {split: path}
    raise DatasetError(
        [
            Problem(
                hub.path,
                "-",
                "split",
                (
                    f"{hub.path} ({hub.name}) has no split {split!r}; it has "
                    f"{', '.join(hub.data_files)}"
                ),
            )
        ]
    )


def _read_hub(
    hub: HubSource, split: str, revision: str | None, store: ImageStore | None
) -> LoadedRows:
    import datasets

    requested = require_revision(hub, revision)
    try:
        pinned = resolve_revision(hub.path, requested)
        dataset = datasets.load_dataset(
            hub.path,
            name=None if hub.data_files else hub.name,
            split=split,
            revision=pinned,
            data_files=_hub_split_files(hub, split),
        )
    except DatasetError:
        raise
    except Exception as error:  # the hub's many failure types all need the same advice
        raise DatasetError(
            [
                Problem(
                    hub.path,
                    "-",
                    "data",
                    (
                        f"could not load {hub.path} (config {hub.name}, split {split}, revision "
                        f"{requested}) from the Hugging Face hub ({describe_error(error, 200)}). Without "
                        f"network access, or for a dataset the hub no longer serves, download it and pass "
                        f"-T data=PATH: {hub.layout}."
                    ),
                )
            ]
        ) from error
    rows = LoadedRows([], {}, None)
    problems: list[Problem] = []
    _rows_of(dataset, hub.path, rows, problems, store)
    if problems:
        raise DatasetError(problems)
    rows.origin = {
        "kind": "huggingface",
        "path": hub.path,
        "name": hub.name,
        "split": canonical_split(split),
        "rows": len(rows.rows),
        **revision_record(hub, requested, pinned),
    }
    return rows


def load_rows(
    data: str | None,
    hub: HubSource,
    revision: str | None = None,
    split: str | None = None,
    read_images: bool = True,
) -> LoadedRows:
    """One split of the benchmark (``split``, default the one it reports) from ``data``
    (local, any published layout) or the hub at a pinned commit, with where every row came
    from. The images the rows carry are made into the files that are sent as the rows are
    read; with ``read_images=False`` (the blind control) none is decoded or stored, and the
    record says so."""
    with ImageStore() as store:
        loaded = _load_rows(data, hub, revision, split, store if read_images else None)
    if not read_images:
        loaded.origin["images"] = "not read (images=false: the blind control shows none)"
    return loaded


def _load_rows(
    data: str | None,
    hub: HubSource,
    revision: str | None,
    split: str | None,
    store: ImageStore | None,
) -> LoadedRows:
    chosen = str(split or hub.split).strip()
    published = [name for name in hub.splits if canonical_split(name) == canonical_split(chosen)]
    if not published:
        raise TaskArgumentError(
            f"-T split={chosen!r}: {hub.path}{f' ({hub.name})' if hub.name else ''} publishes "
            f"{', '.join(hub.splits)}"
        )
    if data is not None and str(data).strip():
        # Absolute (links kept): the hub's pattern matching returns absolute paths.
        path = Path(os.path.abspath(Path(str(data)).expanduser()))
        refuse_non_utf8_path(path)
        if not path.exists():
            raise DatasetError([Problem(str(path), "-", "data", "no such file or folder")])
        if not (path.is_dir() or path.is_file()):
            raise DatasetError(
                [
                    Problem(
                        str(path),
                        "-",
                        "data",
                        ("not a regular file or folder (a pipe or a device is never read)"),
                    )
                ]
            )
        loaded = _read_local(path, hub, chosen, store)
        if revision:
            loaded.origin["revision_ignored"] = f"{revision} (local data is read as it is)"
        return loaded
    # the hub is asked for the split by the name its card gives it ("dev", not "validation")
    return _read_hub(hub, published[0], revision, store)


def hub_image_root(hub: HubSource, loaded: LoadedRows) -> Path | None:
    """For rows read from the hub that name their images: the repository's image archive,
    downloaded at the same commit and unpacked into the cache once; recorded in the log."""
    if loaded.origin.get("kind") != "huggingface" or hub.image_archive is None:
        return loaded.image_root
    from huggingface_hub import hf_hub_download

    from inspect_medreason.core.archives import unpack_archive

    archive_name, folder = hub.image_archive
    commit = str(loaded.origin["revision"])
    try:
        archive = Path(
            hf_hub_download(hub.path, archive_name, repo_type="dataset", revision=commit)
        )
    except Exception as error:  # the hub's many failure types all need the same advice
        raise DatasetError(
            [
                Problem(
                    f"{hub.path}/{archive_name}",
                    "-",
                    "images",
                    (
                        f"could not be downloaded ({describe_error(error, 200)}): download it, unpack it "
                        f"and pass -T image_root=<the {folder}/ folder>"
                    ),
                )
            ]
        ) from error
    root = unpack_archive(archive, "hub_images") / folder
    loaded.origin["images"] = {"archive": archive_name, "revision": commit, "folder": str(root)}
    return root


# ---------------------------------------------------------------------------------------
# Fields


def is_empty(value: Any) -> bool:
    """A value the schema has but that carries nothing: None, blank text, an empty list or
    mapping."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict):
        return len(value) == 0
    return False


def missing_fields(
    loaded: LoadedRows,
    fields: Sequence[str],
    id_of: Callable[[dict[str, Any], int], str],
    rows: Sequence[int] | None = None,
) -> list[Problem]:
    """A problem for each required field that is missing or empty in a row (file, row,
    field named), never passed on as an empty string."""
    problems: list[Problem] = []
    for index in rows if rows is not None else range(len(loaded.rows)):
        row = loaded.rows[index]
        for name in fields:
            if row.get(name) is None:  # ``datasets`` fills a key a row lacks with None
                why = "missing (the published schema has it)"
            elif is_empty(row[name]):
                why = "empty (the published schema has it)"
            else:
                continue
            problems.append(loaded.row_problem(index, id_of(row, index), name, why))
    return problems


def duplicate_ids(loaded: LoadedRows, id_of: Callable[[dict[str, Any], int], str]) -> list[Problem]:
    """A problem for each row whose id an earlier row already has (file and row of both):
    two samples with one id would share an answer, or stop Inspect without saying where."""
    first: dict[str, int] = {}
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        sample_id = id_of(row, index)
        if sample_id in first:
            other_file, other = loaded.where(first[sample_id])
            problems.append(
                loaded.row_problem(
                    index, sample_id, "id", f"duplicate id: {other} of {other_file} has it too"
                )
            )
        else:
            first[sample_id] = index
    return problems


def unexpected_values(
    loaded: LoadedRows,
    allowed: dict[str, tuple[str, ...]],
    id_of: Callable[[dict[str, Any], int], str],
) -> list[Problem]:
    """A problem for each field whose value is outside the closed set the schema publishes
    (compared without case or surrounding space)."""
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        for name, values in allowed.items():
            value = row.get(name)
            if value is None or str(value).strip().lower() in {v.lower() for v in values}:
                continue
            problems.append(
                loaded.row_problem(
                    index,
                    id_of(row, index),
                    name,
                    f"{value!r} is not one of {', '.join(values)}",
                )
            )
    return problems


def wrong_types(
    loaded: LoadedRows,
    expected: dict[str, tuple[tuple[type, ...], str]],
    id_of: Callable[[dict[str, Any], int], str],
) -> list[Problem]:
    """A problem for each field whose value is not of the published type (field ->
    (accepted Python types, what the schema says)), with file, row and field: a value of
    the wrong type is refused, never passed to code that expects another (a string of
    options read letter by letter, an object as a question)."""
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        for name, (types, described) in expected.items():
            value = row.get(name)
            if value is None or (isinstance(value, types) and not isinstance(value, bool)):
                continue
            if isinstance(value, bool) and bool in types:
                continue
            problems.append(
                loaded.row_problem(
                    index,
                    id_of(row, index),
                    name,
                    f"expected {described}, got {json_type_name(value)} ({str(value)[:40]!r})",
                )
            )
    return problems


def id_text(value: Any) -> str | None:
    """A row's id as text: text, or a whole number (a column of numbers is widened to
    floats by pyarrow when one row holds a fraction; the others keep their whole-number
    names); None for any other value."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else None


def wrong_ids(
    loaded: LoadedRows, names: Sequence[str], id_of: Callable[[dict[str, Any], int], str]
) -> list[Problem]:
    """A problem for each id field holding neither text nor a whole number (a list, an
    object, true/false, a fraction), with file, row and field: such a value would name
    the sample by its printed form."""
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        for name in names:
            value = row.get(name)
            if value is None or id_text(value) is not None:
                continue
            problems.append(
                loaded.row_problem(
                    index,
                    id_of(row, index),
                    name,
                    f"expected a whole number or text, got {json_type_name(value)} "
                    f"({str(value)[:40]!r})",
                )
            )
    return problems


def wrong_items(
    loaded: LoadedRows,
    expected: dict[str, tuple[Callable[[Any], bool], str]],
    id_of: Callable[[dict[str, Any], int], str],
) -> list[Problem]:
    """A problem for each list field with an item not of the published form (field ->
    (test of an item, what the schema says)), naming the first such item as
    ``field[i]``: a list of numbers where the schema has text would otherwise be printed
    into the prompt, a box of three numbers silently dropped."""
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        for name, (fits, described) in expected.items():
            value = row.get(name)
            if not isinstance(value, list):
                continue
            for position, item in enumerate(value):
                if fits(item):
                    continue
                problems.append(
                    loaded.row_problem(
                        index,
                        id_of(row, index),
                        f"{name}[{position}]",
                        f"expected {described}, got {json_type_name(item)} ({str(item)[:40]!r})",
                    )
                )
                break
    return problems


def is_text(value: Any) -> bool:
    return isinstance(value, str)


def first_present(row: dict[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    """The first of ``names`` (a field and its known aliases) that the row has non-empty."""
    for name in names:
        if name in row and not is_empty(row[name]):
            return name, row[name]
    return None, None


# ---------------------------------------------------------------------------------------
# Images


def image_file(
    value: Any, image_root: Path | None, store: ImageStore, frame: object = None
) -> PreparedImage:
    """The image to send for an image cell: one made as its row was read, a
    ``{"bytes"|"path"}`` record, or a file name under ``image_root`` (read once through the
    bounded reader; never opened again)."""
    if isinstance(value, PreparedImage):
        return value
    if isinstance(value, ImagePathError):
        raise value
    if isinstance(value, UnreadImage):
        raise ImagePathError(f"the image of {value.where} was not read (images=false)")
    if isinstance(value, dict) and value.get("bytes"):
        return store.prepare(bytes(value["bytes"]), "the image")
    if isinstance(value, dict) and value.get("path"):
        value = value["path"]
    if isinstance(value, str) and value:
        if image_root is None:
            raise ImagePathError(
                f"{value!r} is a file name but no image folder is known: pass -T image_root=DIR"
            )
        try:
            return prepare_image_file(image_root, value, store, frame)
        except ImagePathError as error:
            raise ImagePathError(f"{error}{_image_root_hint(image_root, value)}") from error
    raise ImagePathError(f"no image in {type(value).__name__} value")


def default_image_root(
    loaded: LoadedRows, image_of: Callable[[dict[str, Any]], list[Any]], folder: str
) -> Path | None:
    """Where the rows' image file names are, when the user names no folder: the data folder,
    or the ``folder`` that the dataset's image archive unpacks to, inside it or beside the
    split's file (``imgs/`` for SLAKE, ``images/`` for MedXpertQA), whichever holds the
    first named image. Rows that carry their images need none."""
    base = loaded.image_root
    names = (
        value for row in loaded.rows for value in _listed(image_of, row) if isinstance(value, str)
    )
    first = next(names, None)
    if base is None or first is None:
        return base
    for candidate in (base, base / folder, base.parent / folder):
        if (candidate / first).is_file():
            return candidate
    return base


def _image_root_hint(image_root: Path, name: str) -> str:
    """Where a missing image file is after all (one or two folders down, as an unpacked
    ``imgs.zip`` or ``images.zip`` leaves it), or which archive to unpack."""
    if (image_root / name).exists() or not image_root.is_dir():
        return ""
    for sub in sorted(image_root.iterdir()):
        if not sub.is_dir():
            continue
        for candidate in (sub, *sorted(s for s in sub.iterdir() if s.is_dir())):
            if (candidate / name).is_file():
                return f"; it is under {candidate}: pass -T image_root={candidate}"
    archives = sorted(p.name for p in image_root.iterdir() if p.suffix.lower() == ".zip")
    if archives:
        return (
            f"; the images may still be in {', '.join(archives)}: unpack it and pass "
            "-T image_root=<the folder the image names are relative to>"
        )
    return ""


def collect_images(
    loaded: LoadedRows,
    image_of: Callable[[dict[str, Any]], list[Any]],
    image_root: Path | None,
    id_of: Callable[[dict[str, Any], int], str],
) -> list[list[PreparedImage]]:
    """The images to send for every row, each file read once and stored by the digest of
    what is sent; all problems are reported together before anything runs (each with its
    file, row and id)."""
    problems: list[Problem] = []
    files: list[list[PreparedImage]] = []
    with ImageStore() as store:
        for index, row in enumerate(loaded.rows):
            row_files: list[PreparedImage] = []
            for value in _listed(image_of, row):
                try:
                    row_files.append(image_file(value, image_root, store))
                except ImagePathError as error:
                    problems.append(
                        loaded.row_problem(index, id_of(row, index), "image", str(error))
                    )
            files.append(row_files)
    if problems:
        raise DatasetError(problems)
    return files


def _listed(image_of: Callable[[dict[str, Any]], list[Any]], row: dict[str, Any]) -> list[Any]:
    """A row's image cells (a value of the wrong type is one cell, for its problem to be
    named rather than iterated character by character)."""
    try:
        found = image_of(row)
    except (KeyError, TypeError):
        return []
    return found if isinstance(found, list) else [found]
