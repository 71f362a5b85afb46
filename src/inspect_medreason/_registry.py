"""Entry point for Inspect: every task, scorer and model provider the plugin offers."""

from inspect_ai.model import modelapi

from inspect_medreason.benchmarks.cmb import cmb_clin, cmb_clin_scorer, cmb_exam, cmb_exam_scorer
from inspect_medreason.benchmarks.gemex import gemex, gemex_scorer
from inspect_medreason.benchmarks.medxpertqa import medxpertqa_mm
from inspect_medreason.benchmarks.vqa import path_vqa, slake, vqa_rad, vqa_scorer
from inspect_medreason.scorers import mcq_scorer, open_ended_scorer
from inspect_medreason.solvers import medreason_prompt, template_prompt
from inspect_medreason.tasks import mcq, medreason, open_ended


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
