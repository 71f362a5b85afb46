"""Matplotlib for the analyses' figures: drawn off-screen (no display is needed, none is
opened), at the size they are printed (a journal's double column, 7 inches) with no text
under 8 points there, and a finished figure as PNG bytes, closed so that a long notebook
session or a command drawing many figures holds none of them. A figure's caption is text
beside it (each analysis has a ``..._caption`` function), never drawn into the image: a
paper sets its own captions."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

__all__ = [
    "DOUBLE_COLUMN",
    "METRIC_LABELS",
    "MIN_FONT_POINTS",
    "SINGLE_COLUMN",
    "display_names",
    "metric_label",
    "png_bytes",
    "print_style",
    "pyplot",
]

SINGLE_COLUMN = 3.5  # inches: a journal's single column
DOUBLE_COLUMN = 7.0  # inches: its full text width
MIN_FONT_POINTS = 8  # the smallest text a figure prints at its own size
PRINT_DPI = 200

# Every text size a figure uses, at its print size: none under MIN_FONT_POINTS.
PRINT_FONTS = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.titlesize": 10,
}


# Each metric as a figure names it (the judges' component names, as the protocol does).
METRIC_LABELS = {
    "MCQ Accuracy": "MCQ accuracy",
    "VQA closed accuracy": "VQA closed accuracy",
    "VQA open accuracy": "VQA open accuracy",
    "GEMeX accuracy": "GEMeX accuracy",
    "Open-ended GT": "GT_final (0-4)",
    "Open-ended VA": "VA_final (0-4)",
    "VA_answer": "VA_answer (0-4)",
    "RVF_trace": "RVF_trace (0-4)",
}


def metric_label(metric: str) -> str:
    """A metric's name in a figure; a calibrated one keeps its ``(calibrated)``."""
    base, calibrated, _ = metric.partition(" (calibrated)")
    return METRIC_LABELS.get(base, base) + (" (calibrated)" if calibrated else "")


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg back end. Imported on first use: matplotlib takes
    about a second to import, and most commands draw nothing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def print_style() -> Iterator[ModuleType]:
    """``pyplot`` with the print fonts (``PRINT_FONTS``) for the figures drawn inside."""
    plt = pyplot()
    with plt.rc_context(PRINT_FONTS):
        yield plt


def png_bytes(figure: Any, dpi: int = PRINT_DPI) -> bytes:
    """``figure`` as PNG bytes at ``dpi``; the figure is closed."""
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.05)
    finally:
        pyplot().close(figure)
    return buffer.getvalue()


def display_names(models: Sequence[str]) -> dict[str, str]:
    """Each model's name for a legend: without its provider (``openai/gpt-4o`` is
    ``gpt-4o``) unless two models would then read the same, where both keep it."""
    short = {model: model.split("/", 1)[-1] for model in models}
    counts: dict[str, int] = {}
    for name in short.values():
        counts[name] = counts.get(name, 0) + 1
    return {model: name if counts[name] == 1 else model for model, name in short.items()}
