"""Inspect AI evaluations for medical visual question answering (MedReason 2026 protocol)."""

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.medreason.medreason import mcq, medreason, open_ended
from inspect_medreason.medreason.scorer import mcq_scorer, open_ended_scorer
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.solvers import medreason_prompt, template_prompt
from inspect_medreason.vqa.vqa import path_vqa, slake, vqa_rad

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
