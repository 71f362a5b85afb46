"""Entry point for Inspect: every task, scorer and model provider the plugin offers."""

from inspect_ai.model import modelapi

from inspect_medreason.cmb import (
    clinical_conversation,
    cmb_clin,
    cmb_clin_scorer,
    cmb_exam,
    cmb_exam_prompt,
    cmb_exam_scorer,
)
from inspect_medreason.core.solvers import medreason_prompt, template_prompt
from inspect_medreason.gemex import gemex, gemex_scorer
from inspect_medreason.judge_meta import extractor_meta, judge_meta, judge_meta_scorer
from inspect_medreason.med_cmr import med_cmr, med_cmr_scorer
from inspect_medreason.medreason import mcq, mcq_scorer, medreason, open_ended, open_ended_scorer
from inspect_medreason.medxpertqa import medxpertqa_mm
from inspect_medreason.vqa import medreason_vqa_rad, path_vqa, slake, vqa_scorer


@modelapi(name="medreason")
def medreason_pipeline_check() -> type:
    from inspect_medreason.core.offline_model import PipelineCheckModel

    return PipelineCheckModel


__all__ = [
    "clinical_conversation",
    "cmb_clin",
    "cmb_clin_scorer",
    "cmb_exam",
    "cmb_exam_prompt",
    "cmb_exam_scorer",
    "extractor_meta",
    "gemex",
    "gemex_scorer",
    "judge_meta",
    "judge_meta_scorer",
    "mcq",
    "mcq_scorer",
    "med_cmr",
    "med_cmr_scorer",
    "medreason",
    "medreason_pipeline_check",
    "medreason_prompt",
    "medreason_vqa_rad",
    "medxpertqa_mm",
    "open_ended",
    "open_ended_scorer",
    "path_vqa",
    "slake",
    "template_prompt",
    "vqa_scorer",
]
