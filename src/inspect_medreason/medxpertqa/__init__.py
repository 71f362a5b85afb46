"""MedXpertQA, multimodal subset: expert-level five-option MCQ on clinical images."""

from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm

__all__ = ["medxpertqa_mm"]
