"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA."""

from inspect_medreason.vqa.scorer import vqa_scorer
from inspect_medreason.vqa.vqa import path_vqa, slake, vqa_rad

__all__ = ["path_vqa", "slake", "vqa_rad", "vqa_scorer"]
