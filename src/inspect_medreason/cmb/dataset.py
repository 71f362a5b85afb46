"""How CMB-Exam and CMB-Clin rows become samples.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from inspect_ai.dataset import Sample

from inspect_medreason.hub import HubSource
from inspect_medreason.loaders import Problem

CMB_EXAM_HUB = HubSource(
    "FreedomIntelligence/CMB",
    name="exam",
    split="test",
    layout="CMB-Exam test as JSON/JSONL rows with exam_type, exam_class, exam_subject, question, answer, question_type, option {A..E}",
)


CMB_VAL_HUB = HubSource(
    "FreedomIntelligence/CMB",
    name="exam",
    split="val",
    layout="CMB-Exam val as JSON/JSONL rows (as test, plus explanation); pass it as -T fewshot_data=PATH",
)


CMB_CLIN_HUB = HubSource(
    "FreedomIntelligence/CMB",
    name="clin",
    split="test",
    layout="CMB-Clin as JSON rows with id, title, description, QA_pairs [{question, solution}]",
)


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
    case_id = str(row.get("id", f"cmb_exam_{index:05d}"))
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


def clin_record_to_sample(row: dict[str, Any], index: int, source: str) -> Sample | Problem:
    """One CMB-Clin case as a sample: the description and first question as input, every
    question and reference solution in metadata (``clinical_conversation`` asks the rest)."""
    case_id = str(row.get("id", index))
    pairs = row.get("QA_pairs") or []
    description = str(row.get("description", "")).strip()
    if not pairs or not description:
        return Problem(source, case_id, "QA_pairs", "a case needs a description and questions")
    questions = [str(p["question"]) for p in pairs]
    return Sample(
        id=f"cmb_clin_{case_id}",
        input=f"{description}\n\n{questions[0]}",
        metadata={
            "title": str(row.get("title", "")),
            "description": description,
            "questions": questions,
            "solutions": [str(p.get("solution", "")) for p in pairs],
        },
    )
