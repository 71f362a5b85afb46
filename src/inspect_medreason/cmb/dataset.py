"""How CMB-Exam and CMB-Clin rows become samples.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from inspect_medreason.hub import HubSource

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
        except json.JSONDecodeError:
            raw = ast.literal_eval(raw) if raw.strip().startswith("{") else {}
    if isinstance(raw, list):
        raw = {item.get("key"): item.get("value") for item in raw if isinstance(item, dict)}
    return [(str(k), str(v)) for k, v in sorted(raw.items()) if v not in (None, "")]
