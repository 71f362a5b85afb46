"""User text (model names, experiment labels, rater names, case ids, answer labels) in the
Markdown reports, escaped so that it stays the text it is: a ``|`` does not split a table
cell, a newline does not end a row, and nothing becomes markup, a link or raw HTML when
the report is rendered. What the reports write themselves (numbers, intervals, names of
metrics) passes through unchanged, so every cell and note can go through here."""

from __future__ import annotations

import html
import re

__all__ = ["html_table", "markdown_row", "markdown_text"]

# The characters Markdown (CommonMark with GitHub's tables) gives a meaning inside a line;
# "[" and "]" only where they make a link ("](" or "]["), so that intervals like [0.1, 0.3]
# read as written. "<" and ">" become entities: raw HTML is rendered, not escaped, by "\".
_SPECIAL = re.compile(r"[\\`*|~]|\](?=[(\[])|&(?=#?\w+;)|[<>]")
_REPLACEMENT = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_LINE_BREAKS = re.compile(r"[\r\n\t\v\f\x85\u2028\u2029]+")


def markdown_text(text: object) -> str:
    """``text`` for a Markdown table cell or line: on one line, every special character
    escaped."""
    flat = _LINE_BREAKS.sub(" ", str(text))
    return _SPECIAL.sub(lambda m: _REPLACEMENT.get(m.group(), "\\" + m.group()), flat)


def markdown_row(cells: list[str] | tuple[str, ...]) -> str:
    """One Markdown table row of escaped cells."""
    return "| " + " | ".join(markdown_text(cell) for cell in cells) + " |"


def html_table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table of escaped cells, for the reports written as HTML."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"
