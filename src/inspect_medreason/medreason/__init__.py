"""MedReason 2026: the MCQ and open-ended tracks, alone or together."""

from inspect_medreason.medreason.medreason import mcq, medreason, open_ended
from inspect_medreason.medreason.scorer import mcq_scorer, open_ended_scorer

__all__ = ["mcq", "mcq_scorer", "medreason", "open_ended", "open_ended_scorer"]
