"""What the challenge's own containers would have submitted for an MCQ reply.

The challenge publishes two reference containers (github.com/medreason26/
MedReason-Challenge-Docker), each with its own reply parser, and its scorer counts an MCQ
answer right only when ``answer.strip()`` equals the reference label. A team that ships
either container gets the number that parser yields, guesses included, so the MCQ scorer
reports both readings beside its own careful one (``official_template_accuracy``,
``official_baseline_accuracy``) and how many cases each reads differently.

This module re-states the documented behaviour of the two parsers; it is not their code.

``template`` (``MedReason-Docker``, ``parse_reasoning_and_answer`` then
``normalize_mcq_answer``):

1. The reply, stripped. The span from its first ``{`` to its last ``}`` is decoded as JSON;
   a dictionary gives the answer ``str(answer)`` (``final_answer`` when there is no
   ``answer`` key; ``None`` becomes ``"None"``), stripped.
2. Otherwise the text after the last occurrence of the first of ``Final answer:``,
   ``Answer:``, ``ANSWER:``, ``Final:`` that the reply holds (case-sensitive), else the
   whole reply.
3. The answer is a label when it is one exactly; otherwise, label by label in order of
   length then name, the first of these patterns that matches (case-insensitive) names it:
   the label alone with brackets and separators, the label opening the answer before a
   separator (``B. text``), ``option X``, and the label as a word anywhere: the English
   article "a" is option A, "I" is option I.
4. Otherwise the first option whose text contains the answer or is contained in it (an
   empty answer is contained in every text: the first option), else the answer as it is
   (not a label: wrong).

``baseline`` (``MedReason-Docker-Example-Qwen25VL``, ``parse_model_output`` then its own
``normalize_mcq_answer``; the organisers' Qwen2.5-VL baseline):

1. The reply, stripped; a code fence opening it and one closing it are removed; the rest
   decoded as JSON, else the span from its first ``{`` to its last ``}``. A dictionary gives
   ``str(answer)`` (``final_answer`` when there is no ``answer`` key), stripped.
2. An empty answer: the first line after the first ``final answer:``/``answer:`` (any case,
   ``：`` too) in the reply, else the whole reply.
3. The answer is a label when it is one, ignoring case; otherwise the *first letter* in it
   (after an optional "answer"/"option"/"choice" and bracket) when that is a label (so
   "The answer is C" reads T, not a label, and "A large effusion" reads A); otherwise the
   first option whose text the answer contains; otherwise the first option: a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Reader = Literal["template", "baseline"]
READERS: tuple[Reader, ...] = ("template", "baseline")


@dataclass(frozen=True)
class OfficialReading:
    """What a container would submit for one reply, and whether the official rule scores
    it right. ``submitted`` is None when the container would stop with an error."""

    reader: Reader
    submitted: str | None
    how: str

    def correct(self, target: str) -> bool:
        return self.submitted is not None and self.submitted.strip() == target.strip()


def _decode_dict(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """``json.loads`` of the text when it is a JSON object; the error when decoding
    recursed too deep (the template catches only decoding errors, so it would stop)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None, None
    except RecursionError:
        return None, "JSON nested too deeply to decode (the container would stop)"
    return (value if isinstance(value, dict) else None), None


def _field(obj: dict[str, Any]) -> str:
    # str() of whatever the key holds, as the containers do: null is "None", a list "['B']"
    return str(obj.get("answer", obj.get("final_answer", ""))).strip()


_TEMPLATE_MARKERS = ("Final answer:", "Answer:", "ANSWER:", "Final:")


def _template_answer(reply: str) -> tuple[str | None, str]:
    raw = reply.strip()
    first, last = raw.find("{"), raw.rfind("}")
    if first >= 0 and last > first:
        obj, error = _decode_dict(raw[first : last + 1])
        if error is not None:
            return None, error
        if obj is not None:
            return _field(obj), "JSON answer field"
    for marker in _TEMPLATE_MARKERS:
        if marker in raw:
            return raw.rsplit(marker, 1)[1].strip(), f"text after the last {marker!r}"
    return raw, "the whole reply"


def _template_label(answer: str, options: list[tuple[str, str]]) -> tuple[str, str]:
    labels = {label for label, _ in options}
    clean = answer.strip()
    if clean in labels:
        return clean, "the answer is a label"
    for label in sorted(labels, key=lambda name: (len(name), name)):
        escaped = re.escape(label)
        patterns = (
            rf"^\(?{escaped}\)?[\s.:\-)]*$",
            rf"^\(?{escaped}\)?[\s.:\-)]",
            rf"\boption\s+{escaped}\b",
            rf"\b{escaped}\b",
        )
        for pattern in patterns:
            if re.search(pattern, clean, flags=re.IGNORECASE):
                return label, f"label pattern {pattern!r}"
    lowered = clean.lower()
    for label, text in options:
        if text.lower() in lowered or lowered in text.lower():
            return label, "option text"
    return clean, "no label: the answer as written"


# After an optional answer word and bracket, the first letter of the answer (any case).
_BASELINE_LETTER = re.compile(
    r"(?:answer|option|choice)?\s*[:：(\[]?\s*([A-Z])\s*[)\].:]?", re.IGNORECASE
)
_BASELINE_FENCE_OPEN = re.compile(r"^```(?:json)?\s*", re.IGNORECASE)
_BASELINE_FENCE_CLOSE = re.compile(r"\s*```$")
_BASELINE_MARKER = re.compile(r"(?:final answer|answer)\s*[:：]\s*(.+)", re.IGNORECASE | re.DOTALL)


def _baseline_answer(reply: str) -> tuple[str | None, str]:
    raw = reply.strip()
    unfenced = _BASELINE_FENCE_CLOSE.sub("", _BASELINE_FENCE_OPEN.sub("", raw))
    # This container catches every decoding error, too deep nesting included: no JSON.
    obj, _ = _decode_dict(unfenced)
    if obj is None:
        first, last = unfenced.find("{"), unfenced.rfind("}")
        if first >= 0 and last > first:
            obj, _ = _decode_dict(unfenced[first : last + 1])
    answer = _field(obj) if obj is not None else ""
    if answer:
        return answer, "JSON answer field"
    marker = _BASELINE_MARKER.search(raw)
    if marker is not None:
        # the reply is stripped, so text follows the marker: its first line is never empty
        return marker.group(1).strip().splitlines()[0], "first line after the first 'answer:'"
    return raw, "the whole reply"


def _baseline_label(answer: str, options: list[tuple[str, str]]) -> tuple[str, str]:
    by_upper = {label.upper(): label for label, _ in options}
    text = answer.strip()
    if text.upper() in by_upper:
        return by_upper[text.upper()], "the answer is a label"
    letter = _BASELINE_LETTER.search(text)
    if letter is not None and letter.group(1).upper() in by_upper:
        return by_upper[letter.group(1).upper()], f"first letter {letter.group(1)!r}"
    lowered = text.lower()
    for label, option_text in options:
        if option_text and option_text.lower() in lowered:
            return label, "option text"
    return options[0][0], "nothing read: the first option (the container's fallback)"


_PARSERS: dict[
    Reader,
    tuple[
        Callable[[str], tuple[str | None, str]],
        Callable[[str, list[tuple[str, str]]], tuple[str, str]],
    ],
] = {
    "template": (_template_answer, _template_label),
    "baseline": (_baseline_answer, _baseline_label),
}


def official_reading(reply: str, options: list[tuple[str, str]], reader: Reader) -> OfficialReading:
    """What the named container would submit for this MCQ reply, and how it got there."""
    read_answer, to_label = _PARSERS[reader]
    answer, found = read_answer(reply)
    if answer is None:
        return OfficialReading(reader, None, found)
    if not options:
        return OfficialReading(reader, answer, f"{found}; the case has no options")
    label, how = to_label(answer, options)
    return OfficialReading(reader, label, f"{found} {answer[:60]!r}; {how}")
