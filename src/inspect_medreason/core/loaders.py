"""Loading MedReason-style cases from disk into validated cases and Inspect samples.

Three layouts are understood: the official ``cases.json`` contract (optionally merged with
an official ``ground_truth.json``), the raw released training layout (``"question type"``,
option keys ``"A"``..``"E"``, inline answers) and JSONL with one case per line in either.
Every problem in the input is collected first and reported together, so that nothing runs
on half-valid data.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageUser, Content, ContentImage, ContentText
from pydantic import ValidationError

from inspect_medreason.core.dicom import (
    DICOM_MAGIC_OFFSET,
    DICOM_SUFFIXES,
    DISPLAY_KEY,
    dicom_as_png,
    dicom_bytes_as_png,
    display_record,
    is_dicom,
    remember_conversion,
)
from inspect_medreason.core.errors import UserInputError
from inspect_medreason.core.images import (
    ImagePathError,
    ImageStore,
    PreparedImage,
    check_image_decodes,
    read_image_bytes,
    resolve_image_path,
)
from inspect_medreason.core.lazy_dataset import collection_paused, next_message_id
from inspect_medreason.core.log_paths import path_for_log
from inspect_medreason.core.schema import (
    Case,
    GroundTruthEntry,
    normalised_case_id,
)
from inspect_medreason.core.splits import split_named_by
from inspect_medreason.core.user_files import (
    MAX_DATA_BYTES,
    UserFileError,
    deep_json_problem,
    read_user_bytes,
)

logger = logging.getLogger(__name__)

CASES_FILE_NAME = "cases.json"
GROUND_TRUTH_FILE_NAME = "ground_truth.json"
UNKNOWN_GROUP = "unknown"
# Metadata fields every sample carries (as UNKNOWN_GROUP when absent) so grouped metrics
# never meet a sample without its key.
GROUP_FIELDS = ("modality", "organ_system", "task", "subtype", "category", "language", "source")

RAW_OPTION_KEYS = ("A", "B", "C", "D", "E")
RAW_OPTION_KEY_SET = frozenset(RAW_OPTION_KEYS)
# "A) text", "A. text", "(A) text", "A: text": the raw layout repeats the label in the value.
RAW_OPTION_PREFIX = re.compile(r"^\s*\(?([A-Za-z])\s*[).:：]\s*")
OFFICIAL_KEYS = {
    "case_id",
    "task_type",
    "question",
    "image_path",
    "image_paths",
    "options",
    "metadata",
    "context",
    "answer",
    "reference_reasoning",
    "visual_description",
}
METADATA_ALIASES = {
    "primary_modality": "modality",
    "organ system": "organ_system",
    "organ": "organ_system",
    "body_system": "organ_system",
    "lang": "language",
}
# Every name a group field goes by in a record.
GROUP_FIELD_SPELLINGS = frozenset(GROUP_FIELDS) | frozenset(METADATA_ALIASES)
# Keys the loaders read (or fold into metadata as grouping fields) in either layout.
KNOWN_RECORD_KEYS = frozenset(
    {
        *OFFICIAL_KEYS,
        *RAW_OPTION_KEYS,
        *GROUP_FIELDS,
        *METADATA_ALIASES,
        "question type",
        "index",
        "split_order",
        "frame",
    }
)
KNOWN_GROUND_TRUTH_KEYS = frozenset({"case_id", "task_type", "answer"})
# Other names people give a known field: refused with the right name, never ignored.
KEY_SUGGESTIONS = {
    "image": "image_path",
    "img": "image_path",
    "image_file": "image_path",
    "images": "image_paths",
    "imgs": "image_paths",
    "image_files": "image_paths",
    "choices": "options",
    "option": "options",
    "ans": "answer",
    "gt": "answer",
    "question_type": "task_type",
    "type": "task_type",
}
NEAR_MISS_CUTOFF = 0.8


def _key_form(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def near_miss(key: str, known: frozenset[str]) -> str | None:
    """The known key an unknown key most likely misspells (``img_path``, ``imagepath``,
    ``optoins``, ``anwser``), or None for a key that is simply new (``question_id``)."""
    if key in KEY_SUGGESTIONS and KEY_SUGGESTIONS[key] in known:
        return KEY_SUGGESTIONS[key]
    form = _key_form(key)
    best, best_ratio = None, (0.0, 0.0)
    for candidate in sorted(known):
        candidate_form = _key_form(candidate)
        if (
            candidate_form
            and form.startswith(candidate_form)
            and len(form) - len(candidate_form) >= 2
        ):
            continue  # a longer name built on a known one ("question_id") is its own field
        # Ties on the normalised form ("organ system", "organ_system") go to the spelling
        # closest to the key as written.
        ratio = (
            difflib.SequenceMatcher(None, form, candidate_form).ratio(),
            difflib.SequenceMatcher(None, key.lower(), candidate.lower()).ratio(),
        )
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
    return best if best_ratio[0] >= NEAR_MISS_CUTOFF else None


@dataclass(frozen=True)
class Problem:
    """One defect in the input, located precisely enough to fix it."""

    file: str
    case_id: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: case {self.case_id!r}: {self.field}: {self.message}"


# A message lists this many problems, then counts the rest: 2,852 lines about one cause
# flood a terminal and hide it (the full list stays on the exception's ``problems``).
SHOWN_PROBLEMS = 20


class DatasetError(UserInputError):
    """Every problem found in a dataset, raised before any sample is evaluated."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {problem}" for problem in problems[:SHOWN_PROBLEMS])
        rest = len(problems) - SHOWN_PROBLEMS
        if rest > 0:
            fields = Counter(problem.field for problem in problems[SHOWN_PROBLEMS:])
            lines += (
                f"\n  ... and {rest:,} more problem(s) ("
                + ", ".join(f"{name}: {count:,}" for name, count in fields.most_common(5))
                + ")"
            )
        super().__init__(
            f"{len(problems)} problem(s) in the input data; nothing was evaluated. Fix them "
            f"and run again:\n{lines}"
        )


@dataclass
class LoadedCases:
    """Validated cases with the folder their image paths are relative to."""

    cases: list[Case]
    data_dir: Path
    cases_file: Path
    ground_truth_file: Path | None
    resolved_images: dict[str, list[Path]] = field(default_factory=dict)
    # Keys the loader does not know, kept as metadata: key -> number of records.
    unknown_keys: dict[str, int] = field(default_factory=dict)
    # Every file the cases were read from (a release may split them over several).
    record_files: list[Path] = field(default_factory=list)
    # What each case's images in resolved_images are: the digest of the bytes sent, of the
    # bytes read, the file read and the conversion made (for the samples' metadata).
    prepared_images: dict[str, list[PreparedImage]] = field(default_factory=dict)


def refuse_non_utf8_path(data: str | Path) -> None:
    """Refuse a data path whose name (or a folder above it) is not UTF-8: the report, the
    decode record and the eval log all hold paths as UTF-8 text, so such a name would fail
    half-way with an encoding traceback instead."""
    real = os.path.realpath(data)
    try:
        real.encode("utf-8")
    except UnicodeEncodeError:
        # Shown with the bytes escaped, which any terminal can print.
        shown = os.fsencode(real).decode("utf-8", "backslashreplace")
        raise DatasetError(
            [
                Problem(
                    shown,
                    "-",
                    "data",
                    "the path is not UTF-8 text; rename the folder (or copy the data to one) "
                    "with a UTF-8 name and run again",
                )
            ]
        ) from None


def sample_data_dir() -> Path:
    """The demo dataset shipped inside the package."""
    return Path(str(files("inspect_medreason") / "sample_data"))


# Files in a data folder that hold something other than cases.
NOT_CASE_FILES = frozenset({GROUND_TRUTH_FILE_NAME, "results.json", "judge_scores.json"})


def _record_files_in(folder: Path) -> list[Path]:
    return sorted(
        path
        for path in folder.iterdir()
        if path.is_file()
        and path.suffix.lower() in {".json", ".jsonl"}
        and path.name not in NOT_CASE_FILES
    )


def locate_record_files(data: str | Path | None) -> list[Path]:
    """Turn ``-T data=`` into the files to read: a JSON/JSONL file, or a folder holding
    ``cases.json``, else its JSON/JSONL record files (read together, as a release split
    into MCQ and open files is), else those of its one subfolder that has any (an unzipped
    release archive)."""
    if data is None or str(data).strip() == "":
        return [sample_data_dir() / CASES_FILE_NAME]
    path = Path(data).expanduser()
    if path.is_dir():
        if (path / CASES_FILE_NAME).is_file():
            return [path / CASES_FILE_NAME]
        found = _record_files_in(path)
        if not found:
            nested = [
                sub for sub in sorted(path.iterdir()) if sub.is_dir() and _record_files_in(sub)
            ]
            if len(nested) == 1:
                found = _record_files_in(nested[0])
        if found:
            _refuse_mixed_splits(found, path)
            return found
        raise DatasetError(
            [
                Problem(
                    str(path),
                    "-",
                    "data",
                    f"folder holds no {CASES_FILE_NAME} and no .json/.jsonl record "
                    "file (nor does a single subfolder)",
                )
            ]
        )
    if not path.exists():
        raise DatasetError([Problem(str(path), "-", "data", "no such file or folder")])
    if not path.is_file():
        # a FIFO or a device (or a link to one): refused here, never opened
        raise DatasetError(
            [Problem(str(path), "-", "data", "not a file or folder (a FIFO or a device?)")]
        )
    return [path]


def _refuse_mixed_splits(files: list[Path], folder: Path) -> None:
    """Record files read together must be one split's (an MCQ and an open file): a folder
    whose files' names name different splits (``train.json`` beside ``validation.json``) is
    refused with the files named, never evaluated as one."""
    named = {path: split_named_by(path.name) for path in files}
    splits = {split for found in named.values() for split in found}
    if len(splits) < 2:
        return
    listed = "; ".join(
        f"{split}: {', '.join(p.name for p, found in named.items() if split in found)}"
        for split in sorted(splits)
    )
    raise DatasetError(
        [
            Problem(
                str(folder),
                "-",
                "data",
                (
                    f"the folder holds files of several splits ({listed}); pass the file (or a folder) "
                    "of the one split to evaluate"
                ),
            )
        ]
    )


def locate_cases_file(data: str | Path | None) -> Path:
    """The first file ``-T data=`` names (see ``locate_record_files``)."""
    return locate_record_files(data)[0]


def read_text_file(path: Path) -> tuple[str | None, Problem | None]:
    """A data file's text, or a problem naming the file (unreadable, not UTF-8, not a
    regular file, over the size limit: a FIFO named as a cases file would block forever)."""
    try:
        return read_user_bytes(path, MAX_DATA_BYTES, "data file").decode("utf-8"), None
    except UserFileError as error:
        return None, Problem(str(path), "-", "file", str(error).removeprefix(f"data file {path}: "))
    except UnicodeDecodeError as error:
        return None, Problem(
            str(path),
            "-",
            "encoding",
            f"not UTF-8 text ({error.reason} at byte {error.start}); save it as UTF-8",
        )


def parse_json_text(text: str) -> tuple[Any, str | None]:
    """``json.loads`` with its failures as a message. JSON nested deeper than any data file
    is refused before it is parsed, by a bounded scan (Python's parser would stop at its
    recursion limit, a parser without one would exhaust the stack)."""
    too_deep = deep_json_problem(text)
    if too_deep is not None:
        return None, too_deep
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, str(error)
    except RecursionError:
        return None, "nested too deeply to read"


def _read_records(path: Path) -> tuple[list[Any], list[Problem]]:
    """Read raw records from JSON (object with ``cases`` or a bare list) or JSONL."""
    problems: list[Problem] = []
    text, problem = read_text_file(path)
    if text is None:
        return [], [problem] if problem else []
    if path.suffix.lower() == ".jsonl":
        records: list[Any] = []
        # Lines end at "\n" only: str.splitlines() would also split at U+2028 and other
        # separators that are valid inside a JSON string.
        for line_number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            value, error = parse_json_text(line)
            if error is not None:
                problems.append(Problem(str(path), f"line {line_number}", "json", error))
            else:
                records.append(value)
        return records, problems
    document, error = parse_json_text(text)
    if error is not None:
        return [], [Problem(str(path), "-", "json", error)]
    if isinstance(document, dict) and isinstance(document.get("cases"), list):
        return document["cases"], problems
    if isinstance(document, list):
        return document, problems
    return [], [Problem(str(path), "-", "cases", "expected a list of cases or {'cases': [...]}")]


def record_case_id(record: dict[str, Any]) -> str | None:
    """A record's case id: ``case_id``, else the Med-CMR release's ``index`` (as a string;
    ``7`` and ``"7"`` are the same case)."""
    for key in ("case_id", "index"):
        value = record.get(key)
        if value is None or value == "" or isinstance(value, bool | dict | list):
            continue
        return str(value)
    return None


def _with_index_as_case_id(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its ``index`` as ``case_id`` when it has no ``case_id`` (a value
    that is no id is passed on as is, for the validation to name)."""
    if "case_id" in record or "index" not in record:
        return record
    renamed = {key: value for key, value in record.items() if key != "index"}
    renamed["case_id"] = record_case_id(record) or record["index"]
    return renamed


def _is_raw_layout(record: dict[str, Any]) -> bool:
    return "question type" in record or not RAW_OPTION_KEY_SET.isdisjoint(record)


def _normalise_metadata(values: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for key, value in values.items():
        metadata[METADATA_ALIASES.get(key, key)] = value
    return metadata


def _strip_option_prefix(label: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    match = RAW_OPTION_PREFIX.match(value)
    if match and match.group(1).upper() == label:
        return value[match.end() :]
    return value


def normalise_raw_record(record: dict[str, Any]) -> dict[str, Any]:
    """Convert one record of the released training layout to the official case layout."""
    record = _with_index_as_case_id(record)
    canonical: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    options = [
        {"label": key, "text": _strip_option_prefix(key, record[key])}
        for key in RAW_OPTION_KEYS
        if key in record and record[key] not in (None, "")
    ]
    for key, value in record.items():
        if key in RAW_OPTION_KEYS:
            continue
        if key == "question type" or (key == "task_type" and "question type" not in record):
            canonical["task_type"] = value
        elif key == "visual_description":
            canonical["reference_reasoning"] = value
        elif key in {"case_id", "question", "image_path", "image_paths", "answer", "context"}:
            canonical[key] = value
        elif key == "metadata" and isinstance(value, dict):
            metadata.update(value)
        else:
            metadata[key] = value
    if options:
        canonical["options"] = options
    canonical["metadata"] = _normalise_metadata(metadata)
    return canonical


def normalise_official_record(record: dict[str, Any]) -> dict[str, Any]:
    """Keep official keys; fold anything else into metadata so no field is lost."""
    record = _with_index_as_case_id(record)
    canonical = {key: value for key, value in record.items() if key in OFFICIAL_KEYS}
    metadata = (
        dict(record.get("metadata") or {}) if isinstance(record.get("metadata"), dict) else {}
    )
    for key, value in record.items():
        if key not in OFFICIAL_KEYS:
            metadata[key] = value
    if "visual_description" in canonical:
        described = canonical.pop("visual_description")
        if "reference_reasoning" in canonical:
            metadata["visual_description"] = described  # kept, not dropped
        else:
            canonical["reference_reasoning"] = described
    canonical["metadata"] = _normalise_metadata(metadata)
    return canonical


def _untyped_fields(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for what the case model does not itself check: the official
    layout's ``visual_description`` beside a ``reference_reasoning`` (text, kept in the
    metadata), an ``options`` list beside option keys A-E (one would be dropped unread) and
    the DICOM ``frame`` (a whole number)."""
    found: list[tuple[str, str]] = []
    described = record.get("visual_description")
    beside = "reference_reasoning" in record and not _is_raw_layout(record)
    if beside and described is not None and not isinstance(described, str):
        found.append(("visual_description", f"expected text, got {json_type_name(described)}"))
    if _is_raw_layout(record) and "options" in record:
        found.append(
            (
                "options",
                "given beside option keys (A-E): a case gives its options one way, as a list "
                "in 'options' or as keys A-E",
            )
        )
    found.extend(_conflicting_spellings(record))
    inner = record.get("metadata")
    for name, frame in (
        ("frame", record.get("frame")),
        ("metadata.frame", inner.get("frame") if isinstance(inner, dict) else None),
    ):
        if frame is not None and not (
            (isinstance(frame, int) and not isinstance(frame, bool))
            or (isinstance(frame, str) and frame.strip().isdigit())
        ):
            found.append(
                (
                    name,
                    f"expected a whole number (the DICOM frame to show), got "
                    f"{json_type_name(frame)}: {str(frame)[:40]!r}",
                )
            )
    return found


def _conflicting_spellings(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each spelling of a group field given with another value under
    another spelling (``modality`` and ``primary_modality``, or ``metadata.modality``):
    one would silently replace the other."""
    inner = record.get("metadata")
    nested: dict[str, Any] = inner if isinstance(inner, dict) else {}
    # Set operations decide the common case (no group field named twice) without a loop
    # in Python: it ran for every case of a 100,000-case load.
    top = record.keys() & GROUP_FIELD_SPELLINGS
    inside = nested.keys() & GROUP_FIELD_SPELLINGS
    names = [METADATA_ALIASES.get(key, key) for key in (*top, *inside)]
    if len(set(names)) == len(names):
        return []
    given: dict[str, list[tuple[str, Any]]] = {}
    for prefix, keys in (("metadata.", nested), ("", record)):
        for key, value in keys.items():
            name = METADATA_ALIASES.get(key, key)
            if name in GROUP_FIELDS:
                given.setdefault(name, []).append((f"{prefix}{key}", value))
    found: list[tuple[str, str]] = []
    for spellings in given.values():
        if len(spellings) > 1 and any(value != spellings[0][1] for _, value in spellings):
            listed = ", ".join(f"{key}={value!r}"[:60] for key, value in spellings)
            found.extend(
                (key, f"given with different values under several names ({listed}); keep one")
                for key, _ in spellings
            )
    return found


def _collect_image_paths(record: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Merge ``image_path`` and ``image_paths``; return (paths, type errors)."""
    errors: list[str] = []
    paths: list[str] = []
    single = record.pop("image_path", None)
    many = record.pop("image_paths", None)
    if single is not None:
        if isinstance(single, str):
            paths.append(single)
        else:
            errors.append(f"image_path must be a string, got {type(single).__name__}")
    if many is not None:
        if isinstance(many, list) and all(isinstance(item, str) for item in many):
            paths.extend(many)
        else:
            errors.append("image_paths must be a list of strings")
    return list(dict.fromkeys(paths)), errors


def json_type_name(value: Any) -> str:
    """What a JSON value is, in the words a data file's author uses."""
    return {
        "str": "text",
        "int": "a number",
        "float": "a number",
        "bool": "true/false",
        "list": "a list",
        "dict": "an object",
        "NoneType": "null",
    }.get(type(value).__name__, type(value).__name__)


def _format_validation_error(error: ValidationError) -> list[tuple[str, str]]:
    """(field, message) pairs from pydantic, splitting our combined track-rule messages; a
    value of the wrong type says what it was."""
    located: list[tuple[str, str]] = []
    for detail in error.errors():
        location = ".".join(str(part) for part in detail["loc"]) or "case"
        message = str(detail["msg"]).removeprefix("Value error, ")
        if str(detail["type"]).endswith("_type") and "input" in detail:
            got = detail["input"]
            located.append((location, f"{message} (got {json_type_name(got)}: {str(got)[:40]!r})"))
        elif location == "case" and ": " in message:
            for part in message.split("; "):
                field_name, _, text = part.partition(": ")
                located.append((field_name, text))
        else:
            located.append((location, message))
    return located


def field_in_file(location: str, record: dict[str, Any]) -> str:
    """The name in the record of the field a validation ``location`` names: the key as
    the file spells it (``organ system``, ``question type``, ``visual_description``,
    ``index``, an option key ``D``), so the user can find it."""
    head, _, rest = location.partition(".")
    if head == "metadata" and rest:
        name, _, deeper = rest.partition(".")
        inner = record.get("metadata")
        nested: dict[str, Any] = inner if isinstance(inner, dict) else {}
        # The record's own keys are folded in after its metadata's: the last one wins.
        spellings = [f"metadata.{key}" for key in nested] + [
            key for key in record if key != "metadata"
        ]
        found = [
            key
            for key in spellings
            if METADATA_ALIASES.get(key.removeprefix("metadata."), key.removeprefix("metadata."))
            == name
        ]
        return found[-1] + (f".{deeper}" if deeper else "") if found else location
    if _is_raw_layout(record) and head == "options" and rest:
        position, _, deeper = rest.partition(".")
        option_keys = [k for k in RAW_OPTION_KEYS if record.get(k) not in (None, "")]
        if position.isdigit() and int(position) < len(option_keys):
            return option_keys[int(position)]
        return location
    spelled = {
        "task_type": ("question type",),
        "reference_reasoning": ("visual_description",),
        "case_id": ("index",),
    }
    if head in spelled and head not in record:
        for key in spelled[head]:
            if key in record:
                return key + location[len(head) :]
    return location


def _misspelled_keys(
    record: dict[str, Any], known: frozenset[str], file: str, where: str, unknown: Counter[str]
) -> list[Problem]:
    """Problems for keys that misspell a known one; other unknown keys are counted."""
    problems: list[Problem] = []
    for key in record:
        if key in known:
            continue
        suggestion = near_miss(str(key), known)
        if suggestion is not None:
            problems.append(
                Problem(
                    file,
                    where,
                    str(key),
                    f"unknown key; did you mean {suggestion!r}? (rename it: a "
                    "misspelt key would silently change the run)",
                )
            )
        else:
            unknown[str(key)] += 1
    return problems


def _read_ground_truth(
    path: Path, unknown: Counter[str]
) -> tuple[dict[str, GroundTruthEntry], list[Problem]]:
    problems: list[Problem] = []
    entries: dict[str, GroundTruthEntry] = {}
    text, problem = read_text_file(path)
    if text is None:
        return {}, [problem] if problem else []
    document, json_error = parse_json_text(text)
    if json_error is not None:
        return {}, [Problem(str(path), "-", "json", json_error)]
    rows = document.get("cases") if isinstance(document, dict) else document
    if not isinstance(rows, list):
        return {}, [Problem(str(path), "-", "cases", "expected {'cases': [...]}")]
    for index, row in enumerate(rows):
        row_id = str(row.get("case_id", f"#{index}")) if isinstance(row, dict) else f"#{index}"
        if isinstance(row, dict):
            problems.extend(
                _misspelled_keys(row, KNOWN_GROUND_TRUTH_KEYS, str(path), row_id, unknown)
            )
        try:
            entry = GroundTruthEntry.model_validate(row)
        except ValidationError as error:
            for field_name, message in _format_validation_error(error):
                problems.append(Problem(str(path), row_id, field_name, message))
            continue
        if entry.task_type == "mcq" and (entry.answer is None or not entry.answer.strip()):
            problems.append(
                Problem(
                    str(path),
                    entry.case_id,
                    "answer",
                    "an MCQ ground-truth entry needs an answer (the official "
                    "scorer refuses one without)",
                )
            )
        if entry.case_id in entries:  # its validator refused untrimmed ids already
            problems.append(Problem(str(path), entry.case_id, "case_id", "duplicate case id"))
        entries[entry.case_id] = entry
    return entries, problems


def _image_folder(record_folder: Path, data: str | Path | None, records: list[Any]) -> Path:
    """The folder image paths are relative to: the record files' own, or, for a release
    unpacked with its records one folder down (Med-CMR's ``dataset/...json`` naming
    ``dataset/imgs/...png``), the folder the user named, when the first image path is found
    there and not beside the records."""
    named = Path(str(data)).expanduser() if data is not None and str(data).strip() else None
    if named is None or not named.is_dir() or named == record_folder:
        return record_folder
    first = next(
        (
            str(path)
            for record in records
            if isinstance(record, dict)
            for path in [
                record.get("image_path"),
                *(record["image_paths"] if isinstance(record.get("image_paths"), list) else []),
            ]
            if isinstance(path, str) and path
        ),
        None,
    )
    if first is None or (record_folder / first).exists() or not (named / first).is_file():
        return record_folder
    return named


def prepare_image(
    data_dir: Path,
    relative: str,
    frame: object = None,
    check_decodes: bool = True,
    real_root: Path | None = None,
) -> Path:
    """A safe, decodable image file for a case path: DICOM becomes a cached PNG.
    ``check_decodes=False`` leaves the full decode of a raster file to the caller (who
    checks many files at once with ``check_images_decode``); ``real_root`` as in
    ``resolve_image_path``."""
    path = resolve_image_path(data_dir, relative, real_root)
    if is_dicom(path):
        try:
            frame_index = None if frame is None else int(str(frame))
        except ValueError as error:
            raise ImagePathError(f"frame {frame!r} is not a whole number") from error
        return dicom_as_png(path, frame_index)
    if check_decodes:
        check_image_decodes(path)
    return path


def prepare_image_file(
    data_dir: Path,
    relative: str,
    store: ImageStore,
    frame: object = None,
    real_root: Path | None = None,
) -> PreparedImage:
    """The image to send for a case path: the path confined to ``data_dir``, the file read
    once through the bounded reader, DICOM windowed into a PNG, and what is sent made from
    those bytes (decoded whole, converted once when providers would not take it) into the
    cache under its digest. The file is never opened again: a file swapped after the load
    changes nothing that is sent."""
    path = resolve_image_path(data_dir, relative, real_root)
    data = read_image_bytes(path, relative)
    # the file read, as the log names it: relative to the real data folder it lies in
    source = path_for_log(path, real_root or os.path.realpath(data_dir))
    if (
        path.suffix.lower() in DICOM_SUFFIXES
        or data[DICOM_MAGIC_OFFSET : DICOM_MAGIC_OFFSET + 4] == b"DICM"
    ):
        try:
            frame_index = None if frame is None else int(str(frame))
        except ValueError as error:
            raise ImagePathError(f"frame {frame!r} is not a whole number") from error
        prepared = store.prepare(dicom_bytes_as_png(data, path, frame_index), relative)
        # an image shift degrades the DICOM's raw values, not this 8-bit picture
        remember_conversion(prepared.path, path, frame_index)
        return PreparedImage(
            prepared.path,
            prepared.sha256,
            hashlib.sha256(data).hexdigest(),
            "DICOM windowed to 8-bit PNG",
            source,
            display_record(data, frame_index),
        )
    return dataclasses.replace(store.prepare(data, relative), source=source)


def prepare_case_images(
    data_dir: Path, relatives: Sequence[str], frame: object = None
) -> list[PreparedImage]:
    """A case's images read again from ``data_dir`` after its run (re-scoring, contact
    sheets), prepared as the loader prepared them when the run loaded the case (a DICOM
    windowed into the same PNG), so each digest compares with the run's ``image_sha256``
    and the file checked is the file used."""
    with ImageStore() as store:
        return [prepare_image_file(data_dir, relative, store, frame) for relative in relatives]


def load_cases(
    data: str | Path | None = None,
    ground_truth: str | Path | None = None,
    check_images: bool = True,
) -> LoadedCases:
    """Read, normalise and validate every case; raise DatasetError listing all problems.

    ``check_images=False`` skips the images entirely (neither resolved nor opened), for
    tools that need only ids, tracks and labels.
    """
    with collection_paused(), ImageStore() as store:
        return _load_cases(data, ground_truth, check_images, store)


def _load_cases(
    data: str | Path | None,
    ground_truth: str | Path | None,
    check_images: bool,
    store: ImageStore,
) -> LoadedCases:
    if data is not None and str(data).strip():
        refuse_non_utf8_path(data)
    if ground_truth is not None and str(ground_truth).strip():
        refuse_non_utf8_path(ground_truth)
    record_files = locate_record_files(data)
    cases_file = record_files[0]
    records: list[Any] = []
    record_file: list[str] = []  # the file each record came from, for the problems
    problems: list[Problem] = []
    for path in record_files:
        read, read_problems = _read_records(path)
        records.extend(read)
        record_file.extend([str(path)] * len(read))
        problems.extend(read_problems)
        # Emptied, not kept: each raw record is freed below once read, and a second list
        # holding them all would keep every one alive (+63 MiB at 100,000 cases).
        read.clear()

    data_dir = _image_folder(cases_file.parent, data, records)
    ground_truth_file: Path | None = None
    if ground_truth is not None and str(ground_truth).strip():
        ground_truth_file = Path(ground_truth).expanduser()
        if not ground_truth_file.is_file():
            problems.append(Problem(str(ground_truth_file), "-", "ground_truth", "no such file"))
            ground_truth_file = None
    elif (data_dir / GROUND_TRUTH_FILE_NAME).is_file() and cases_file.name == CASES_FILE_NAME:
        ground_truth_file = data_dir / GROUND_TRUTH_FILE_NAME
    truth: dict[str, GroundTruthEntry] = {}
    truth_unknown: Counter[str] = Counter()
    if ground_truth_file is not None:
        truth, truth_problems = _read_ground_truth(ground_truth_file, truth_unknown)
        problems.extend(truth_problems)

    # Each record's id, read once; duplicates as the official validator sees them: after
    # its trimming (" c1" is "c1").
    record_ids = [
        record_case_id(record) if isinstance(record, dict) else None for record in records
    ]
    ids = Counter(
        normalised_case_id(case_id)
        for case_id, record in zip(record_ids, records, strict=True)
        if isinstance(record, dict)
    )
    # Unknown ground-truth keys are reported beside the cases' own, under their file's name.
    unknown: Counter[str] = Counter({f"ground_truth.{k}": n for k, n in truth_unknown.items()})
    cases: list[Case] = []
    resolved: dict[str, list[Path]] = {}
    case_images: dict[str, list[PreparedImage]] = {}
    interned: dict[tuple[int, ...], tuple[list[Path], list[PreparedImage]]] = {}
    prepared: dict[tuple[str, str | None], PreparedImage | ImagePathError] = {}
    # Resolved once for the load: every image is confined to this same folder.
    real_root = Path(os.path.realpath(data_dir))
    for index, record in enumerate(records):
        # The raw record is dropped once read, so its memory holds the next cases.
        records[index] = None
        file_name = record_file[index]
        where = record_ids[index] or f"#{index}"
        if not isinstance(record, dict):
            problems.append(Problem(file_name, where, "case", "expected a JSON object"))
            continue
        problems.extend(_misspelled_keys(record, KNOWN_RECORD_KEYS, file_name, where, unknown))
        if "metadata" in record and not isinstance(record["metadata"], dict | None):
            problems.append(
                Problem(
                    file_name,
                    where,
                    "metadata",
                    f"expected an object, got {type(record['metadata']).__name__}",
                )
            )
        canonical = (
            normalise_raw_record(record)
            if _is_raw_layout(record)
            else normalise_official_record(record)
        )
        image_paths, type_errors = _collect_image_paths(canonical)
        problems.extend(Problem(file_name, where, "image_paths", err) for err in type_errors)
        canonical["image_paths"] = image_paths
        if ids[normalised_case_id(where)] > 1:
            problems.append(
                Problem(
                    file_name,
                    where,
                    "case_id",
                    f"duplicate case id ({ids[normalised_case_id(where)]}x, as the official "
                    "validator reads case ids: trimmed)",
                )
            )
        entry = truth.get(where)
        if entry is not None and entry.answer is not None:
            inline = canonical.get("answer")
            if inline is not None and str(inline).strip() != entry.answer.strip():
                problems.append(
                    Problem(
                        file_name,
                        where,
                        "answer",
                        f"inline answer {inline!r} disagrees with ground truth "
                        f"{entry.answer!r} in {ground_truth_file}",
                    )
                )
            canonical["answer"] = entry.answer
        problems.extend(
            Problem(file_name, where, name, message) for name, message in _untyped_fields(record)
        )
        try:
            case = Case.model_validate(canonical)
        except ValidationError as error:
            for field_name, message in _format_validation_error(error):
                problems.append(
                    Problem(file_name, where, field_in_file(field_name, record), message)
                )
            continue
        if entry is not None and entry.task_type != case.task_type:
            problems.append(
                Problem(
                    str(ground_truth_file),
                    where,
                    "task_type",
                    f"ground truth says {entry.task_type!r}, cases file says {case.task_type!r}",
                )
            )
        paths: list[Path] = []
        images: list[PreparedImage] = []
        frame = (case.metadata.model_extra or {}).get("frame")
        for relative in case.image_paths if check_images else []:
            # Each distinct (path, frame) is resolved, confined and converted once: data
            # sets reuse a few hundred files across many thousands of cases.
            key = (relative, None if frame is None else str(frame))
            if key not in prepared:
                try:
                    prepared[key] = prepare_image_file(
                        data_dir, relative, store, frame, real_root=real_root
                    )
                except ImagePathError as error:
                    prepared[key] = error
            outcome = prepared[key]
            if isinstance(outcome, ImagePathError):
                problems.append(Problem(file_name, where, "image_paths", str(outcome)))
            else:
                paths.append(outcome.path)
                images.append(outcome)
        # Cases that show the same images share one pair of lists (100,000 cases on a few
        # hundred files would otherwise hold 200,000 small lists).
        shared = interned.setdefault(tuple(map(id, images)), (paths, images))
        resolved[case.case_id], case_images[case.case_id] = shared
        cases.append(case)

    known_ids = set(ids)
    for case_id in truth:
        if case_id not in known_ids:
            problems.append(
                Problem(str(ground_truth_file), case_id, "case_id", "not a case in the cases file")
            )
    if not records and not problems:
        problems.append(
            Problem(", ".join(map(str, record_files)), "-", "cases", "the file holds no cases")
        )
    if problems:
        raise DatasetError(problems)
    if unknown:
        logger.warning(
            "%s: keys the loader does not know, kept as metadata: %s",
            cases_file,
            ", ".join(f"{key!r} ({count} cases)" for key, count in sorted(unknown.items())),
        )
    return LoadedCases(
        cases,
        data_dir,
        cases_file,
        ground_truth_file,
        resolved,
        dict(unknown),
        record_files,
        case_images,
    )


def case_turn(images: list[Path], text: str, show_images: bool) -> list[ChatMessage]:
    """The user turn a sample carries: the case's images (file paths; none in the blind
    control) and its question. The prompt around it is the solver's job."""
    if not (show_images and images):
        # Plain text, not a one-part list: text-only servers' chat templates (llama.cpp's
        # for SmolLM2, for one) fail on list content.
        return [ChatMessageUser(id=next_message_id(), content=text)]
    content: list[Content] = [ContentImage(image=str(path)) for path in images]
    content.append(ContentText(text=text))
    return [ChatMessageUser(id=next_message_id(), content=content)]


__all__ = [
    "DatasetError",
    "LoadedCases",
    "Problem",
    "build_sample",
    "case_turn",
    "load_cases",
    "locate_cases_file",
    "locate_record_files",
    "record_case_id",
]


def build_sample(
    sample_id: str,
    images: Sequence[Path | PreparedImage],
    question: str,
    prompt: dict[str, Any],
    target: str | list[str],
    metadata: dict[str, Any],
    show_images: bool = True,
    choices: list[str] | None = None,
) -> Sample:
    """A sample that carries the case: its images (the files sent, from the cache) and
    question as the user turn; ``prompt`` names the templates and values the task's solver
    renders. The digest of each image sent, and any conversion made, are in its metadata."""
    files = [image.path if isinstance(image, PreparedImage) else image for image in images]
    prepared = [image for image in images if isinstance(image, PreparedImage)]
    metadata = {
        **metadata,
        # No path of the files sent (they are in the plugin's cache, on this machine): the
        # log identifies each by its digest (image_sha256) and its source's relative name.
        # The blind control reads no image: the family says whether the row had one.
        "images_withheld": not show_images
        and (bool(images) or bool(metadata.get("images_withheld"))),
        "prompt": prompt,
    }
    if prepared:
        metadata["image_sha256"] = [image.sha256 for image in prepared]
        if any(image.source for image in prepared):
            metadata["image_sources"] = [image.source for image in prepared]
        if any(image.conversion for image in prepared):
            metadata["image_conversions"] = [image.conversion for image in prepared]
        if any(image.dicom for image in prepared):
            metadata[DISPLAY_KEY] = [image.dicom for image in prepared]
    return Sample(
        id=sample_id,
        input=case_turn(files, question, show_images),
        target=target,
        choices=choices,
        metadata=metadata,
    )
