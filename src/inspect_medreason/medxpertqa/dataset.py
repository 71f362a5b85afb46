"""How MedXpertQA-MM rows become samples.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_medreason.hub import HubSource

MEDXPERTQA_HUB = HubSource(
    "TsinghuaC3I/MedXpertQA",
    name="MM",
    split="test",
    layout="the MM test split as JSONL or parquet with id, question, options {A..E}, label, images (file names under -T image_root), medical_task, body_system, question_type",
)


# The dataset's question text repeats the options after this marker; the prompt lists them.
_ANSWER_CHOICES = re.compile(r"\s*Answer Choices:.*$", re.DOTALL)


def record_options(row: dict[str, Any]) -> list[dict[str, str]]:
    """``options`` as published: a dict {"A": text, ...} (or a list of {key, value})."""
    raw = row.get("options") or {}
    if isinstance(raw, list):
        raw = {item.get("key"): item.get("value") for item in raw if isinstance(item, dict)}
    return [
        {"label": str(k), "text": str(v)} for k, v in sorted(raw.items()) if v not in (None, "")
    ]
