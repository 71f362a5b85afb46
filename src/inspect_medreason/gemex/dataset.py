"""How GEMeX-VQA rows become samples."""

from __future__ import annotations

import ast
import contextlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.core.extraction import extract_label
from inspect_medreason.core.hub import (
    HubSource,
    LoadedRows,
    collect_images,
    duplicate_ids,
    id_text,
    is_text,
    load_rows,
    missing_fields,
    wrong_ids,
    wrong_items,
    wrong_types,
)
from inspect_medreason.core.images import PreparedImage
from inspect_medreason.core.loaders import RAW_OPTION_PREFIX, DatasetError, Problem, build_sample
from inspect_medreason.core.log_paths import data_location
from inspect_medreason.core.prompts import PromptTemplate
from inspect_medreason.core.short_answers import yes_no
from inspect_medreason.core.splits import canonical_split, split_named_by

_STANDALONE_LABEL = re.compile(r"(?<![A-Za-z])([A-H])(?![A-Za-z])")

GEMEX_HUB_ID = "BoKelvin/GEMeX-VQA"
# The hub's own record: the repository's only data commit ("Upload 4 files"), shown on its
# file tree and named in full by the dataset viewer's report on it.
GEMEX_REVISION = "9406e417a3a27ea434f9de512d93fd10119636bb"
GEMEX_LAYOUT = (
    "a folder with the four JSONL files closed_ended_question.jsonl, "
    "single_choice_question.jsonl, multi_choice_question.jsonl and open_ended_question.jsonl "
    "(as on the hub, or the GitHub release's data-v1-subset/test/), or one of them"
)
# GEMeX-VQA publishes its test subset only.
GEMEX_SPLIT = "test"


QUESTION_TYPES = {
    "closed": "closed_ended_question",
    "single": "single_choice_question",
    "multi": "multi_choice_question",
    "open": "open_ended_question",
}


ANSWER_INSTRUCTIONS = {
    "closed": '"answer" is "Yes." or "No.".',
    "single": '"answer" is the letter of the one correct choice, e.g. "B".',
    "multi": '"answer" is the list of the letters of every correct choice, e.g. ["A", "C"].',
    "open": '"answer" is a concise free-text answer.',
}


def gemex_source(kind: str) -> HubSource:
    """The hub file of one question type (the repository has no card: each file is read on
    its own, their columns differ)."""
    return HubSource(
        GEMEX_HUB_ID,
        split=GEMEX_SPLIT,
        splits=(GEMEX_SPLIT,),
        revision=GEMEX_REVISION,
        revision_source="the hub's commit history and dataset viewer",
        data_files=f"{QUESTION_TYPES[kind]}.jsonl",
        layout=GEMEX_LAYOUT,
    )


# The published types (a value of another type is refused with file, row and field:
# a string of choices would otherwise be read letter by letter, a list as a closed answer
# printed into the reference).
ROW_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "question": ((str,), "text"),
    "reason": ((str,), "text"),
    "choices": ((list,), "a list of options"),
    "image_path": ((str,), "an image file path"),
    "visual_locations": ((list,), "a list of boxes"),
    "visual_regions": ((list,), "a list of region names"),
    "type": ((str,), "text"),
}
# ``answer`` by question type: closed "Yes.", single "C", open text; multi ["A", "C"]
# (or the training target's text form "['A', 'C']").
ANSWER_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "closed": ((str,), 'text ("Yes." or "No.")'),
    "single": ((str,), 'text (the letter, "C")'),
    "multi": ((list, str), 'a list of letters (["A", "C"])'),
    "open": ((str,), "text"),
}
ID_FIELDS = ("q_id", "row_id")


def is_box(value: Any) -> bool:
    """One published box: [x1, y1, x2, y2], four numbers."""
    return (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    )


# What each item of a list field is.
ITEM_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "choices": (is_text, 'text ("A: ...")'),
    "visual_regions": (is_text, "text (a region name)"),
    "visual_locations": (is_box, "a box [x1, y1, x2, y2] of four numbers"),
}
MULTI_ANSWER_ITEMS = (is_text, 'text (a letter, "A")')
# Fields of the published schema that every row of a type carries non-empty.
REQUIRED_FIELDS = {
    "closed": ("question", "answer", "reason"),
    "single": ("question", "answer", "choices", "reason"),
    "multi": ("question", "answer", "choices", "reason"),
    "open": ("question", "answer", "reason"),
}


def question_type_files(folder: Path, kind: str, split: str) -> list[Path]:
    """The files of one question type under ``folder``: named ``*<type>*.jsonl``; where a
    path names a split (``test/``, ``train_...``), only the requested one's."""
    wanted = canonical_split(split)
    found = sorted(folder.rglob(f"*{QUESTION_TYPES[kind]}*.jsonl"))
    named = {path: split_named_by(str(path.relative_to(folder))) for path in found}
    return [path for path in found if not named[path] or wanted in named[path]]


def load_question_type(
    data: str | None, kind: str, revision: str | None, split: str
) -> tuple[LoadedRows | None, list[Problem]]:
    """One question type's rows (local: the one file of that type; else the hub file)."""
    if not data:
        return load_rows(None, gemex_source(kind), revision, split), []
    path = Path(data).expanduser()
    if path.is_file():
        if QUESTION_TYPES[kind] not in path.name:
            return None, []
        return load_rows(str(path), gemex_source(kind), revision, split), []
    if not path.is_dir():
        return None, [Problem(str(path), "-", "data", "no such file or folder")]
    files = question_type_files(path, kind, split)
    if not files:
        return None, [
            Problem(
                str(path),
                "-",
                kind,
                f"no *{QUESTION_TYPES[kind]}*.jsonl file "
                f"of the {split!r} split (expected {GEMEX_LAYOUT})",
            )
        ]
    if len(files) > 1:
        return None, [
            Problem(
                str(path),
                "-",
                kind,
                (
                    f"{len(files)} files of this question type: "
                    f"{', '.join(str(f.relative_to(path)) for f in files)}; pass the folder that "
                    "holds one of each"
                ),
            )
        ]
    return load_rows(str(files[0]), gemex_source(kind), revision, split), []


def parse_choices(choices: list[str]) -> list[tuple[str, str]]:
    """``["A: text", ...]`` as (label, text) pairs."""
    parsed = []
    for index, choice in enumerate(choices):
        match = RAW_OPTION_PREFIX.match(str(choice))
        parsed.append(
            (match.group(1).upper(), str(choice)[match.end() :].strip())
            if match
            else ("ABCDEFGH"[index], str(choice))
        )
    return parsed


def parse_label_set(value: Any, labels: set[str]) -> set[str]:
    """Labels named by a multi-choice answer: a list, "['A', 'C']", "A, B, and C", "A and C"."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            # A reply (or a data row) may nest brackets past the parsers' recursion limit:
            # that is text naming no list, read as text below, never a crashed sample.
            try:
                value = json.loads(stripped)
            except (json.JSONDecodeError, RecursionError):
                with contextlib.suppress(ValueError, SyntaxError, RecursionError, MemoryError):
                    value = ast.literal_eval(stripped)
    if isinstance(value, list | tuple | set):
        return {
            str(item).strip().strip("()").upper()[:1] for item in value if str(item).strip()
        } & labels
    return {label for label in _STANDALONE_LABEL.findall(str(value)) if label in labels}


def _reference_answer(kind: str, row: dict[str, Any], labels: set[str]) -> Any:
    answer = row.get("answer")
    if kind == "multi":
        return sorted(parse_label_set(answer, labels))
    if kind == "single":
        return str(answer).strip().strip("()").upper()[:1]
    return str(answer)


_BOX = re.compile(
    r"\[\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\]"
)


Box = tuple[float, float, float, float]


def parse_boxes(value: Any) -> list[Box]:
    """Boxes from a JSON list of [x1, y1, x2, y2] or from text holding such lists."""
    return [cast(Box, tuple(float(v) for v in match)) for match in _BOX.findall(str(value))]


def answer_as_text(kind: str, value: Any, choices: list[tuple[str, str]]) -> str:
    """One normalised text form of an answer, so that BLEU and ROUGE compare like with like:
    closed "Yes"/"No", single-choice the label, multi-choice the sorted labels ("A, C"),
    open the text; an answer that cannot be read in its type's form stays as written."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if kind == "closed":
        verdict = yes_no(text)
        return {"yes": "Yes", "no": "No"}[verdict] if verdict else text.strip()
    if kind == "single":
        # a text form for BLEU and ROUGE, not a scored label: a less-proven rule's reading
        # (an option's text, a boxed label) is the label's text form too
        return extract_label(text, choices).reading or text.strip()
    if kind == "multi":
        labels = parse_label_set(value, {label for label, _ in choices})
        return ", ".join(sorted(labels)) if labels else text.strip()
    return text.strip()


def record_to_sample(
    row: dict[str, Any],
    kind: str,
    sample_id: str,
    image_files: Sequence[Path | PreparedImage],
    templates: tuple[PromptTemplate, PromptTemplate],
    coordinate_size: int,
    show_images: bool,
) -> Sample:
    """One GEMeX row of question type ``kind`` as a sample: the question and image as input,
    the choices (single/multi) as ``choices``, the reference answer as target (multi: a JSON
    list of labels), the reference text and boxes in metadata for the scorer."""
    choices = parse_choices(list(row.get("choices") or []))
    labels = {label for label, _ in choices}
    reference = _reference_answer(kind, row, labels)
    reference_text = f"{answer_as_text(kind, row.get('answer'), choices)} {row.get('reason') or ''}"
    choices_block = (
        ("\n" + "\n".join(f"{label}. {text}" for label, text in choices)) if choices else ""
    )
    metadata = {
        "question": str(row["question"]),
        "question_type": kind,
        "category": str(row.get("type") or "unknown"),
        "choices": [list(c) for c in choices],
        "reference_answer": reference,
        "reference_text": reference_text,
        "reference_boxes": [
            list(b) for b in parse_boxes(json.dumps(row.get("visual_locations") or []))
        ],
        "visual_regions": row.get("visual_regions") or [],
        "images_withheld": not show_images and bool(row.get("image_path")),
    }
    system, user = templates
    prompt = {
        "family": "gemex",
        "system": system.name,
        "user": user.name,
        "values": {
            "question": str(row["question"]),
            "choices_block": choices_block,
            "answer_instruction": ANSWER_INSTRUCTIONS[kind],
            "coordinate_size": coordinate_size,
        },
    }
    return build_sample(
        sample_id,
        image_files,
        str(row["question"]),
        prompt,
        json.dumps(reference) if kind == "multi" else str(reference),
        metadata,
        show_images,
        choices=[text for _, text in choices] or None,
    )


def load_gemex_dataset(
    data: str | None,
    image_root: str | None,
    kinds: list[str],
    revision: str | None,
    split: str,
    show_images: bool,
    templates: tuple[PromptTemplate, PromptTemplate],
    size: int,
) -> tuple[MemoryDataset, dict[str, Any]]:
    """The samples of the chosen question types (every problem of every file reported at
    once), and the record of where each type came from."""
    system, user = templates
    samples = []
    origins: dict[str, Any] = {}
    problems: list[Problem] = []
    for kind in kinds:
        loaded, missing = load_question_type(data, kind, revision, split)
        problems.extend(missing)
        if loaded is None:
            continue
        origins[kind] = loaded.origin
        root = Path(image_root) if image_root else loaded.image_root

        def id_of(row: dict[str, Any], index: int, kind: str = kind) -> str:
            named = [id_text(row.get(name)) for name in ID_FIELDS if row.get(name) is not None]
            if not named:
                return f"{kind}_{index}"
            # an id of the wrong type (refused) is named by its position, never by its
            # printed form, nor as a duplicate of another row's
            return f"{kind}_{named[0] if named[0] is not None else f'#{index}'}"

        required = REQUIRED_FIELDS[kind] + (("image_path",) if show_images else ())
        empty = (
            wrong_types(loaded, {**ROW_TYPES, "answer": ANSWER_TYPES[kind]}, id_of)
            + wrong_ids(loaded, ID_FIELDS, id_of)
            + wrong_items(
                loaded,
                {**ITEM_TYPES, "answer": MULTI_ANSWER_ITEMS} if kind == "multi" else ITEM_TYPES,
                id_of,
            )
            + missing_fields(loaded, required, id_of)
            + duplicate_ids(loaded, id_of)
        )
        if empty:
            problems.extend(empty)
            continue
        # The blind control needs no image files (MIMIC-CXR is credentialed): none are read.
        files = (
            collect_images(loaded, lambda row: [row["image_path"]], root, id_of)
            if show_images
            else [[] for _ in loaded.rows]
        )
        for index, (row, row_files) in enumerate(zip(loaded.rows, files, strict=True)):
            samples.append(
                record_to_sample(
                    row, kind, id_of(row, index), row_files, (system, user), size, show_images
                )
            )
    if not origins and not problems:
        problems.append(
            Problem(
                str(data),
                "-",
                "data",
                f"no file of the question types {', '.join(kinds)}: expected {GEMEX_LAYOUT}",
            )
        )
    if problems:
        raise DatasetError(problems)
    return MemoryDataset(samples, name="gemex", location=data_location(data, GEMEX_HUB_ID)), origins
