"""CMB: the Chinese medical benchmark, CMB-Exam and CMB-Clin (text only)."""

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.cmb.solver import clinical_conversation, cmb_exam_prompt

__all__ = [
    "clinical_conversation",
    "cmb_clin",
    "cmb_clin_scorer",
    "cmb_exam",
    "cmb_exam_prompt",
    "cmb_exam_scorer",
]
