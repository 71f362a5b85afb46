"""Inspect AI evaluations for medical visual question answering (MedReason 2026 protocol)."""

from inspect_medreason.scorers import mcq_scorer, open_ended_scorer
from inspect_medreason.solvers import medreason_prompt
from inspect_medreason.tasks import mcq, medreason, open_ended

__version__ = "0.1.0"

__all__ = [
    "mcq",
    "mcq_scorer",
    "medreason",
    "medreason_prompt",
    "open_ended",
    "open_ended_scorer",
]
