"""What every rating holds to, wherever it is given or kept (the page, the server, its store,
a ratings file): the longest rater's name and note, the longest time on a case, the characters
no rater types, and how two raters' names are compared. The lowest module of the rating
round's reading and storing: it imports none of them.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "MAX_NOTE_CHARS",
    "MAX_RATER_CHARS",
    "MAX_SECONDS",
    "UNTYPED",
    "rater_key",
    "text_problem",
]

MAX_RATER_CHARS = 200
# A reason or a comment: a sentence or a paragraph, not a document.
MAX_NOTE_CHARS = 2000
# A day on one case is a tab left open, not time spent; kept as given, but bounded.
MAX_SECONDS = 7 * 24 * 3600
# Characters no rater types: C0 and C1 controls (tab and line breaks aside) and lone
# surrogates (half of a broken character: UTF-8 cannot hold one, so no store or file can).
# The rating page removes the same ones from what is typed or pasted (cleanText).
UNTYPED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def text_problem(text: Any, limit: int) -> str | None:
    """Why a name, reason or comment cannot be kept (None: it can): not a text, longer than
    ``limit`` characters, or holding a character no rater types."""
    if not isinstance(text, str):
        return "not a text"
    if len(text) > limit:
        return f"{len(text)} characters, more than {limit}"
    found = UNTYPED.search(text)
    if found:
        return (
            f"character {len(text[: found.start()]) + 1} is U+{ord(found.group()):04X}, "
            "a control character or half of a broken one"
        )
    return None


def rater_key(name: str) -> str:
    """A rater's name as names are compared: trimmed and case-folded ("Alice " is alice)."""
    return " ".join(name.split()).casefold()
