"""How CMB-Exam and CMB-Clin rows become samples."""

from __future__ import annotations

import ast
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.core.files import file_sha256
from inspect_medreason.core.hub import (
    HubSource,
    LoadedRows,
    duplicate_ids,
    first_present,
    id_text,
    is_empty,
    load_rows,
    missing_fields,
    wrong_ids,
    wrong_types,
)
from inspect_medreason.core.loaders import (
    DatasetError,
    Problem,
    json_type_name,
    parse_json_text,
    read_text_file,
)
from inspect_medreason.core.log_paths import data_location, path_for_log

CMB_HUB_ID = "FreedomIntelligence/CMB"
# The hub's file tree at this commit (main, "Update README.md"): the card's configs CMB-Exam
# and CMB-Clin, and the files below.
CMB_REVISION = "935fbc09edf1303d89872b21265ff597f426ac0d"
CMB_REVISION_SOURCE = "the hub's file tree at this commit"
# The card's configs, and each split's one file (the splits' columns differ: the test
# questions have no answer, the validation ones an explanation).
CMB_EXAM_FILES = {
    "test": "CMB-Exam/CMB-test/CMB-test-choice-question-merge.json",
    "val": "CMB-Exam/CMB-val/CMB-val-merge.json",
    "train": "CMB-Exam/CMB-train/CMB-train-merge.json",
}
CMB_CLIN_FILE = "CMB-Clin/CMB-Clin-qa.json"
# Beside each split's questions the hub keeps a category file that is not rows.
NOT_ROWS = ("*hierarchy*", "*answer*")
# The test answers are published apart from the questions, in the GitHub repository only.
ANSWER_KEY_NAME = "CMB-test-choice-answer.json"
ANSWER_KEY_WHERE = (
    f"data/{ANSWER_KEY_NAME} in the GitHub repository FreedomIntelligence/CMB (11,200 rows of "
    "id, exam_type, exam_class, exam_subject, question_type, answer)"
)

CMB_EXAM_HUB = HubSource(
    CMB_HUB_ID,
    name="CMB-Exam",
    split="test",
    splits=("test", "val", "train"),
    revision=CMB_REVISION,
    revision_source=CMB_REVISION_SOURCE,
    data_files=CMB_EXAM_FILES,
    exclude=NOT_ROWS,
    layout=f"the hub snapshot (CMB-Exam/CMB-test/CMB-test-choice-question-merge.json, CMB-Exam/CMB-val/CMB-val-merge.json: JSON arrays of id, exam_type, exam_class, exam_subject, question, question_type, option {{A..}}; answer and explanation in val only), or one of those files; the test answers from {ANSWER_KEY_WHERE} as -T answers=PATH",
)


CMB_VAL_HUB = HubSource(
    CMB_HUB_ID,
    name="CMB-Exam",
    split="val",
    splits=("test", "val", "train"),
    revision=CMB_REVISION,
    revision_source=CMB_REVISION_SOURCE,
    data_files=CMB_EXAM_FILES,
    exclude=NOT_ROWS,
    layout="CMB-Exam/CMB-val/CMB-val-merge.json (as test, plus answer and explanation), or the snapshot; pass it as -T fewshot_data=PATH",
)


CMB_CLIN_HUB = HubSource(
    CMB_HUB_ID,
    name="CMB-Clin",
    split="test",
    splits=("test",),
    revision=CMB_REVISION,
    revision_source=CMB_REVISION_SOURCE,
    data_files=CMB_CLIN_FILE,
    layout="CMB-Clin/CMB-Clin-qa.json (a JSON array of id, title, description, QA_pairs [{question, answer}]), or the snapshot",
)

# Fields of the published schemas every row carries non-empty.
EXAM_FIELDS = ("exam_type", "exam_class", "exam_subject", "question", "question_type", "option")
CLIN_FIELDS = ("id", "description", "QA_pairs")
# CMB-Clin's reference answer: the published file names it ``answer``; the README's example
# and the upstream worker ``solution``.
CLIN_REFERENCE_KEYS = ("answer", "solution")


def read_answer_key(path: Path) -> tuple[dict[str, str], list[Problem]]:
    """The published test answer key as id -> answer letters."""
    problems: list[Problem] = []
    # Read as every data file is: bounded, and refused before parsing when nested deeper
    # than any data file.
    text, unreadable = read_text_file(path)
    rows, error = parse_json_text(text) if text is not None else (None, None)
    reason = unreadable.message if unreadable is not None else error
    if reason is not None:
        return {}, [
            Problem(
                str(path),
                "-",
                "answers",
                f"cannot be read ({reason[:200]}): expected {ANSWER_KEY_WHERE}",
            )
        ]
    if not isinstance(rows, list):
        return {}, [
            Problem(str(path), "-", "answers", f"expected a JSON array: {ANSWER_KEY_WHERE}")
        ]
    key: dict[str, str] = {}
    for number, row in enumerate(rows):
        if not isinstance(row, dict) or is_empty(row.get("id")) or is_empty(row.get("answer")):
            problems.append(
                Problem(str(path), f"row {number}", "answer", "needs an id and an answer")
            )
            continue
        row_id = id_text(row["id"])
        wrong = [
            (name, described)
            for name, ok, described in (
                ("id", row_id is not None, "a whole number or text"),
                ("answer", isinstance(row["answer"], str), "text (the option letters)"),
            )
            if not ok
        ]
        for name, described in wrong:
            value = row[name]
            problems.append(
                Problem(
                    str(path),
                    f"row {number}",
                    name,
                    f"expected {described}, got {json_type_name(value)} ({str(value)[:40]!r})",
                )
            )
        if row_id is None or wrong:
            continue
        if row_id in key:
            problems.append(Problem(str(path), f"row {number} ({row_id})", "id", "duplicate id"))
        key[row_id] = str(row["answer"]).strip()
    return key, problems


def find_answer_key(data: str | None) -> Path | None:
    """The answer key saved inside the data folder (beside the questions or anywhere below)."""
    if not data:
        return None
    path = Path(data).expanduser()
    folder = path if path.is_dir() else path.parent
    found = sorted(folder.rglob(ANSWER_KEY_NAME))
    return found[0] if len(found) == 1 else None


def join_answer_key(
    loaded: LoadedRows, answers: str | None, data: str | None
) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Put the published key's answer on each test question that has none; the record of
    the key for the log. Questions that carry their answer (val, or a test file with
    answers merged in) need no key."""
    unanswered = [i for i, row in enumerate(loaded.rows) if is_empty(row.get("answer"))]
    if not unanswered:
        return None, []
    key_path = Path(answers).expanduser() if answers else find_answer_key(data)
    if key_path is None:
        file, _ = loaded.where(unanswered[0])
        return None, [
            Problem(
                file,
                "-",
                "answer",
                (
                    f"{len(unanswered)} question(s) without an answer: the CMB-Exam test questions are "
                    f"published without them. Download {ANSWER_KEY_WHERE} and pass -T answers=PATH"
                ),
            )
        ]
    if not key_path.is_file():
        return None, [Problem(str(key_path), "-", "answers", "no such file")]
    key, problems = read_answer_key(key_path)
    if problems:
        return None, problems
    seen: set[str] = set()
    for index in unanswered:
        row = loaded.rows[index]
        row_id = id_text(row.get("id")) or ""
        if row_id not in key:
            file, where = loaded.where(index)
            problems.append(
                Problem(
                    file,
                    f"{where} ({row_id or 'no id'})",
                    "answer",
                    f"no answer for this id in {key_path}",
                )
            )
            continue
        row["answer"] = key[row_id]
        seen.add(row_id)
    unused = len(set(key) - seen - {id_text(row.get("id")) or "" for row in loaded.rows})
    record = {
        "path": path_for_log(key_path),
        "sha256": file_sha256(key_path),
        "answers_joined": len(seen),
        "key_rows_for_no_question": unused,
    }
    return record, problems


def exam_options(row: dict[str, Any]) -> list[tuple[str, str]]:
    """``option`` as a dict {"A": text}, the HF list of {key, value}, or a dict's text."""
    raw = row.get("option") or {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            # Python's own dict syntax ({'A': '...'}, as some CMB exports write it); anything
            # else is no options, which the caller reports for the row.
            try:
                raw = ast.literal_eval(raw) if raw.strip().startswith("{") else {}
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raw = {}
    if isinstance(raw, list):
        raw = {item.get("key"): item.get("value") for item in raw if isinstance(item, dict)}
    if not isinstance(raw, dict):
        return []
    options = sorted(((str(k), v) for k, v in raw.items()), key=lambda option: option[0])
    return [(label, str(text)) for label, text in options if text not in (None, "")]


def exam_record_to_sample(row: dict[str, Any], index: int, source: str) -> Sample | Problem:
    """One CMB-Exam question as a sample: the question as input, the option texts as
    ``choices``, the answer letters as target; the exam facts the upstream prompt names
    (type, class, question type) and the options in metadata, for ``cmb_exam_prompt``."""
    case_id = exam_id(row, index)
    options = exam_options(row)
    answer = str(row.get("answer", "")).strip()
    if not options or not answer or not set(answer) <= {label for label, _ in options}:
        return Problem(source, case_id, "answer", f"{answer!r} is not made of option labels")
    return Sample(
        id=case_id,
        input=str(row.get("question", "")),
        choices=[text for _, text in options],
        target=answer,
        metadata={
            "question": str(row.get("question", "")),
            "exam_type": str(row.get("exam_type") or "unknown"),
            "exam_class": str(row.get("exam_class") or "unknown"),
            "exam_subject": str(row.get("exam_subject") or "unknown"),
            "question_type": str(row.get("question_type") or ""),
            "options": [list(o) for o in options],
        },
    )


def clin_record_to_sample(
    row: dict[str, Any], index: int, source: str
) -> tuple[Sample | list[Problem], str | None]:
    """One CMB-Clin case as a sample: the description and first question as input, every
    question and reference answer in metadata (``clinical_conversation`` asks the rest);
    and which key held the references (``answer`` as published, or ``solution``)."""
    case_id = clin_id(row, index)
    pairs = row.get("QA_pairs")
    problems: list[Problem] = []
    found: set[str] = set()
    questions: list[str] = []
    references: list[str] = []
    if not isinstance(pairs, list) or not pairs:
        return [Problem(source, case_id, "QA_pairs", "expected a list of {question, answer}")], None
    for turn, pair in enumerate(pairs):
        where = f"QA_pairs[{turn}]"
        if not isinstance(pair, dict):
            problems.append(Problem(source, case_id, where, "expected an object"))
            continue
        key, reference = first_present(pair, CLIN_REFERENCE_KEYS)
        wrong = [
            (name, pair[name])
            for name in ("question", *CLIN_REFERENCE_KEYS)
            if pair.get(name) is not None and not isinstance(pair[name], str)
        ]
        for name, value in wrong:
            problems.append(
                Problem(
                    source,
                    case_id,
                    f"{where}.{name}",
                    f"expected text, got {json_type_name(value)} ({str(value)[:40]!r})",
                )
            )
        if wrong:
            continue
        if is_empty(pair.get("question")):
            problems.append(Problem(source, case_id, f"{where}.question", "missing or empty"))
        if key is None:
            problems.append(
                Problem(
                    source,
                    case_id,
                    f"{where}.answer",
                    "missing or empty (nor is there a 'solution')",
                )
            )
            continue
        found.add(key)
        questions.append(str(pair.get("question", "")))
        references.append(str(reference))
    if len(found) > 1:
        problems.append(Problem(source, case_id, "QA_pairs", "mixes 'answer' and 'solution' keys"))
    if problems:
        return problems, None
    description = str(row["description"]).strip()
    sample = Sample(
        id=f"cmb_clin_{case_id}",
        input=f"{description}\n\n{questions[0]}",
        metadata={
            "title": str(row.get("title", "")),
            "description": description,
            "questions": questions,
            "solutions": references,
        },
    )
    return sample, next(iter(found))


def load_exam_dataset(
    data: str | None, answers: str | None, revision: str | None, split: str
) -> tuple[MemoryDataset, dict[str, Any], dict[str, Any] | None]:
    """One CMB-Exam split as samples, the test questions joined to the published answer key
    (every problem reported at once); where it came from; the record of the key."""
    loaded = load_rows(data, CMB_EXAM_HUB, revision, split)

    problems = exam_row_problems(loaded, require_answer=False)
    problems += duplicate_ids(loaded, exam_id)
    key_record, key_problems = join_answer_key(loaded, answers, data)
    problems += key_problems
    if problems:
        raise DatasetError(problems)
    samples = collect_samples(loaded, exam_record_to_sample)
    return (
        MemoryDataset(samples, name="cmb_exam", location=data_location(data, CMB_EXAM_HUB.path)),
        loaded.origin,
        key_record,
    )


# The published types (a value of another type is refused with file, row and field).
EXAM_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "question": ((str,), "text"),
    "answer": ((str,), "text (the option letters)"),
    "option": ((dict, list, str), 'an object {"A": "..."}'),
    "exam_type": ((str,), "text"),
    "exam_class": ((str,), "text"),
    "exam_subject": ((str,), "text"),
    "question_type": ((str,), "text"),
}
CLIN_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "title": ((str,), "text"),
    "description": ((str,), "text"),
    "QA_pairs": ((list,), "a list of {question, answer}"),
}


EXPLANATION_TYPE: dict[str, tuple[tuple[type, ...], str]] = {"explanation": ((str,), "text")}


def exam_id(row: dict[str, Any], index: int) -> str:
    return id_text(row.get("id")) or f"cmb_exam_{index:05d}"


def clin_id(row: dict[str, Any], index: int) -> str:
    return id_text(row.get("id")) or str(index)


def option_problems(loaded: LoadedRows) -> list[Problem]:
    """A problem for each ``option`` whose options are not text: an object's value
    (``option.B``) or an item of the hub's list that is not {"key": text, "value": text}
    (``option[1]``). A value another row's keys add as null is no option, as before."""
    problems: list[Problem] = []
    for index, row in enumerate(loaded.rows):
        raw = row.get("option")
        found: tuple[str, Any, str] | None = None
        if isinstance(raw, dict):
            found = next(
                (
                    (f"option.{key}", value, "text")
                    for key, value in raw.items()
                    if value is not None and not isinstance(value, str)
                ),
                None,
            )
        elif isinstance(raw, list):
            found = next(
                (
                    (f"option[{position}]", item, '{"key": text, "value": text}')
                    for position, item in enumerate(raw)
                    if not (
                        isinstance(item, dict)
                        and isinstance(item.get("key"), str)
                        and isinstance(item.get("value"), str | None)
                    )
                ),
                None,
            )
        if found is not None:
            name, value, described = found
            file, where = loaded.where(index)
            problems.append(
                Problem(
                    file,
                    f"{where} ({exam_id(row, index)})",
                    name,
                    f"expected {described}, got {json_type_name(value)} ({str(value)[:40]!r})",
                )
            )
    return problems


def exam_row_problems(loaded: LoadedRows, require_answer: bool) -> list[Problem]:
    """Every field of the wrong type and every required field missing in CMB-Exam rows
    (the questions, or the validation pool the few-shot examples come from, which must
    carry their answers)."""
    required = EXAM_FIELDS + (("answer",) if require_answer else ())
    return (
        wrong_types(loaded, {**EXAM_TYPES, **EXPLANATION_TYPE}, exam_id)
        + wrong_ids(loaded, ("id",), exam_id)
        + option_problems(loaded)
        + missing_fields(loaded, required, exam_id)
    )


def load_clin_dataset(
    data: str | None, revision: str | None, split: str
) -> tuple[MemoryDataset, dict[str, Any], dict[str, int]]:
    """CMB-Clin's cases as samples (every problem reported at once); where they came from;
    how many cases held their references under each key (``answer``, ``solution``)."""
    loaded = load_rows(data, CMB_CLIN_HUB, revision, split)
    problems = wrong_types(loaded, CLIN_TYPES, clin_id)
    problems += wrong_ids(loaded, ("id",), clin_id)
    problems += missing_fields(loaded, CLIN_FIELDS, clin_id)
    problems += duplicate_ids(loaded, clin_id)
    samples: list[Sample] = []
    reference_keys: Counter[str] = Counter()
    for index, row in enumerate(loaded.rows):
        if not isinstance(row.get("QA_pairs"), list) or not row["QA_pairs"]:
            continue  # named above; each pair of every other case is checked, all at once
        file, where = loaded.where(index)
        sample, key = clin_record_to_sample(row, index, f"{file} {where}")
        if isinstance(sample, list):
            problems.extend(sample)
            continue
        samples.append(sample)
        reference_keys[str(key)] += 1
    if problems:
        raise DatasetError(problems)
    return (
        MemoryDataset(samples, name="cmb_clin", location=data_location(data, CMB_CLIN_HUB.path)),
        loaded.origin,
        dict(reference_keys),
    )


def collect_samples(
    loaded: LoadedRows,
    record_to_sample: Callable[[dict[str, Any], int, str], Sample | Problem],
) -> list[Sample]:
    """Every row as a sample, or one error listing every row that is not one (its file and
    row named)."""
    converted = [
        record_to_sample(row, index, " ".join(loaded.where(index)))
        for index, row in enumerate(loaded.rows)
    ]
    problems = [item for item in converted if isinstance(item, Problem)]
    if problems:
        raise DatasetError(problems)
    return [item for item in converted if isinstance(item, Sample)]
