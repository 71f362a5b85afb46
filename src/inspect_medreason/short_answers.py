"""Reading short free-text answers: the final answer line, normalisation, yes/no polarity.
"""

from __future__ import annotations

import re

from inspect_medreason.extraction import parse_reply, readable_text

# The marker within one line, the answer greedy to the end of its line: ``\s*`` at every
# line start, or a lazy group before ``\s*$``, rescanned runs of blank lines or of spaces
# (quadratic: a reply of blank lines took seconds).
_ANSWER_LINE = re.compile(
    r"^[^\S\n]*(?:\*\*)?(?:final[^\S\n]+)?answer(?:\*\*)?[^\S\n]*[:：]\s*(.*\S)",
    re.IGNORECASE | re.MULTILINE,
)


_YES = {"yes", "y", "true", "present", "是", "是的", "有", "对", "正确"}


_NO = {"no", "n", "false", "absent", "not present", "否", "不是", "没有", "无", "不", "错", "错误"}


def final_answer(completion: str) -> tuple[str, str]:
    """The answer a free-text reply commits to, and how it was found."""
    lines = list(_ANSWER_LINE.finditer(completion))
    if lines:
        return lines[-1].group(1).strip().strip("*$`").strip(), "answer_line"
    reply = parse_reply(completion)
    if reply.answer_field is not None:
        return reply.answer_field.strip(), "json_answer_field"
    stripped = completion.strip()
    if stripped and "\n" not in stripped and len(stripped) <= 100:
        return stripped, "bare_reply"
    return "", "unparsed"


def normalise_answer(text: str) -> str:
    text = readable_text(text).casefold().strip()
    text = re.sub(r"[\s.。!！,，;；:：\"'`*]+$", "", text)
    return re.sub(r"^[\s\"'`*]+", "", text)


_BOTH_POLARITIES = re.compile(
    r"^\s*(?P<first>yes|no|是|否|有|无)(?:\s*(?:,|/|\||&|\band\b|\bor\b|或者?|和|与|还是)\s*)*\s*"
    r"(?P<second>yes|no|是|否|有|无)(?![a-z])"
)


def yes_no(text: str) -> str | None:
    """``yes``/``no`` for an English or Chinese yes/no answer; None when neither or both
    ("yes and no", "yes or no", "是或否")."""
    normalised = normalise_answer(text)
    both = _BOTH_POLARITIES.match(normalised)
    if both and _polarity(both.group("first")) != _polarity(both.group("second")):
        return None
    if normalised in _YES:
        return "yes"
    if normalised in _NO:
        return "no"
    first = re.split(r"[\s,，.。;；]", normalised, maxsplit=1)[0]
    if first in _YES and first not in _NO:
        return "yes"
    if first in _NO:
        return "no"
    return None


def _polarity(word: str) -> str:
    return "yes" if word in _YES else "no"


def is_yes_no_reference(answer: str) -> bool:
    """A closed-ended question, as the VQA-RAD paper defines it: the reference is yes or no
    (not "no fracture", "present" or "true")."""
    return normalise_answer(answer) in {"yes", "no"}
