"""GEMeX-VQA: groundable, explainable chest X-ray VQA."""

from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.gemex.scorer import gemex_scorer

__all__ = ["gemex", "gemex_scorer"]
