"""Matplotlib for the analyses' figures: drawn off-screen (no display is needed, none is
opened), and a finished figure as PNG bytes, closed so that a long notebook session or a
command drawing many figures holds none of them."""

from __future__ import annotations

import io
from types import ModuleType
from typing import Any

__all__ = [
    "png_bytes",
    "pyplot",
]


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg back end. Imported on first use: matplotlib takes
    about a second to import, and most commands draw nothing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_bytes(figure: Any, dpi: int) -> bytes:
    """``figure`` as PNG bytes at ``dpi``; the figure is closed."""
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=dpi)
    finally:
        pyplot().close(figure)
    return buffer.getvalue()
