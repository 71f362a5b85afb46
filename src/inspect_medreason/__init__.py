"""Inspect AI evaluations for medical visual question answering (MedReason 2026 protocol)."""

from inspect_medreason.benchmarks.cmb import cmb_clin, cmb_exam
from inspect_medreason.benchmarks.gemex import gemex
from inspect_medreason.benchmarks.medxpertqa import medxpertqa_mm
from inspect_medreason.benchmarks.vqa import path_vqa, slake, vqa_rad
from inspect_medreason.scorers import mcq_scorer, open_ended_scorer
from inspect_medreason.solvers import medreason_prompt, template_prompt
from inspect_medreason.tasks import mcq, medreason, open_ended

__version__ = "0.1.0"

__all__ = [
    "cmb_clin",
    "cmb_exam",
    "gemex",
    "mcq",
    "mcq_scorer",
    "medreason",
    "medreason_prompt",
    "medxpertqa_mm",
    "open_ended",
    "open_ended_scorer",
    "path_vqa",
    "slake",
    "template_prompt",
    "vqa_rad",
]
