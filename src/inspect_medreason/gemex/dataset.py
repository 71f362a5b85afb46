"""How GEMeX-VQA rows become samples.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from typing import Any

from inspect_medreason.loaders import RAW_OPTION_PREFIX

_STANDALONE_LABEL = re.compile(r"(?<![A-Za-z])([A-H])(?![A-Za-z])")

GEMEX_HUB = "BoKelvin/GEMeX-VQA"


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
            try:
                value = json.loads(stripped)
            except json.JSONDecodeError:
                with contextlib.suppress(ValueError, SyntaxError):
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
