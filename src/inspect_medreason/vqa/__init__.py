"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA."""

from inspect_medreason.vqa.scorer import vqa_scorer
from inspect_medreason.vqa.vqa import medreason_vqa_rad, path_vqa, slake

__all__ = ["medreason_vqa_rad", "path_vqa", "slake", "vqa_scorer"]
