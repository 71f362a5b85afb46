"""The Markdown escaping of user text, for the reports the command renders itself
(``cli/check_data.py``): it lives in ``analysis/markdown.py``, where the analyses' reports use
it too, and is named here so that the command's modules keep importing it from beside them."""

from __future__ import annotations

from inspect_medreason.analysis.markdown import markdown_row, markdown_text

__all__ = ["markdown_row", "markdown_text"]
