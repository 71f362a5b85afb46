"""The challenge's aggregation rule for the open-ended track: VA_final, the visual answer
score gated by the faithfulness of the reasoning trace (``compute_va_final`` in the official
scoring.py). Used wherever a VA_final is made: the scorer, ``medreason score`` (the official
scorer re-implemented), ``agreement`` and ``calibrate``."""

from __future__ import annotations


def gate_visual_accuracy(va_answer: float, rvf_trace: float) -> float:
    """The official gate, expression for expression (``compute_va_final`` in the official
    scoring.py): an unfaithful trace caps the final visual score. ``min(va, 1)`` is the int
    1 when ``va > 1``, which the official output writes as ``1``; a fractional RVF such as
    1.5 is not capped, as there (panels reduce to an integer RVF before the gate)."""
    if rvf_trace <= 1:
        return min(va_answer, 1)
    if rvf_trace == 2:
        return min(va_answer, 3)
    return va_answer
