"""How a typed result shows itself in Jupyter (and anywhere IPython's display is used):
its table as HTML (``_repr_html_``, with its figure and the figure's caption where it has
one), its figure as PNG (``_repr_png_``, for a front end that shows no HTML), and a bare
result's ``repr`` as one line that says what it holds, not every field of the dataclass."""

from __future__ import annotations

import base64
import html
import math
from typing import TYPE_CHECKING, Any

from inspect_medreason.analysis.markdown import html_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MAX_ROWS",
    "NotebookDisplay",
    "cell",
]

MAX_ROWS = 60  # rows a notebook shows of a table; to_pandas() has them all
MAX_NOTES = 10


def cell(value: Any) -> str:
    """A table cell as a person reads it: a fraction to three places, nothing for a
    missing value, "—" for one that could not be computed (NaN)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.3f}"
    return str(value)


class NotebookDisplay:
    """Mix-in of the analyses' results. A result says what it holds in one line
    (:meth:`display_summary`), gives its table (:meth:`display_table`: ``to_pandas()``
    unless it says otherwise) and, where it has a figure, ``plot_png()`` and
    ``plot_caption()``. Its dataclass is declared ``repr=False`` so this ``repr`` is used."""

    def display_summary(self) -> str:
        """What the result holds, in one line."""
        raise NotImplementedError

    def display_notes(self) -> list[str]:
        """The warnings and notes a reader must see beside the table."""
        return []

    def display_table(self) -> pd.DataFrame | None:
        to_pandas = getattr(self, "to_pandas", None)
        return to_pandas() if callable(to_pandas) else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.display_summary()}>"

    def _repr_png_(self) -> bytes | None:
        plot_png = getattr(self, "plot_png", None)
        return plot_png() if callable(plot_png) else None

    def _repr_html_(self) -> str:
        parts = [
            f"<div class='medreason-result'><p><strong>{html.escape(type(self).__name__)}"
            f"</strong>: {html.escape(self.display_summary())}</p>"
        ]
        notes = self.display_notes()
        if notes:
            shown = "".join(f"<li>{html.escape(note)}</li>" for note in notes[:MAX_NOTES])
            more = len(notes) - MAX_NOTES
            if more > 0:
                shown += f"<li>… and {more} more</li>"
            parts.append(f"<ul class='notes'>{shown}</ul>")
        table = self.display_table()
        if table is not None:
            rows = [[cell(v) for v in row] for row in table.head(MAX_ROWS).itertuples(False)]
            parts.append(html_table([str(c) for c in table.columns], rows))
            if len(table) > MAX_ROWS:
                parts.append(
                    f"<p>{len(table) - MAX_ROWS} more rows: all are in <code>to_pandas()</code></p>"
                )
        image = self._repr_png_()
        if image is not None:
            caption = getattr(self, "plot_caption", None)
            text = caption() if callable(caption) else ""
            encoded = base64.b64encode(image).decode("ascii")
            parts.append(
                f"<figure><img alt='{html.escape(type(self).__name__)} figure' "
                f"style='max-width:100%' src='data:image/png;base64,{encoded}'>"
                + (f"<figcaption>{html.escape(text)}</figcaption>" if text else "")
                + "</figure>"
            )
        parts.append("</div>")
        return "\n".join(parts)
