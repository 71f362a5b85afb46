"""Entry point for Inspect: every task, scorer and model provider the plugin offers."""

from inspect_ai.model import modelapi

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.gemex.scorer import gemex_scorer
from inspect_medreason.medreason.medreason import mcq, medreason, open_ended
from inspect_medreason.medreason.scorer import mcq_scorer, open_ended_scorer
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.solvers import medreason_prompt, template_prompt
from inspect_medreason.vqa.scorer import vqa_scorer
from inspect_medreason.vqa.vqa import path_vqa, slake, vqa_rad


@modelapi(name="medreason")
def medreason_pipeline_check() -> type:
    from inspect_medreason.offline_model import PipelineCheckModel

    return PipelineCheckModel


__all__ = [
    "cmb_clin",
    "cmb_clin_scorer",
    "cmb_exam",
    "cmb_exam_scorer",
    "gemex",
    "gemex_scorer",
    "mcq",
    "mcq_scorer",
    "medreason",
    "medreason_pipeline_check",
    "medreason_prompt",
    "medxpertqa_mm",
    "open_ended",
    "open_ended_scorer",
    "path_vqa",
    "slake",
    "template_prompt",
    "vqa_rad",
    "vqa_scorer",
]
