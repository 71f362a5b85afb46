"""Reading a model's reply: the JSON object it was asked for, and the option label it chose.

The rules (extraction mode ``robust-v4``):

1. The reply is read after Unicode NFKC normalisation, so full-width letters and brackets
   (``Ｂ``, ``（B）``) read as their ASCII forms, and without invisible format characters
   (zero-width spaces and joiners, the byte-order mark, bidirectional controls, the soft
   hyphen), so ``Answer: B`` followed by a zero-width space reads as ``B``.
2. A JSON object (bare, in a code fence, or embedded in prose) with an ``answer`` (or
   ``final_answer``) field: that field is the model's answer and nothing else is read. A
   field that is not a label, an option's text or an answer statement is *no answer*.
3. Otherwise the reply's answer statements: ``ANSWER: X``, "the (final/correct) answer is
   X", ``<answer>X</answer>`` (an unclosed ``<answer> X`` too), ``\\boxed{X}``, "I choose
   X", "X is correct", "Option X is the best", ``答案是X``, ``选X``, ``故选X``, ``所以选X``,
   a line that holds nothing but a label (``**B**``, ``*B*``, ``_B_``, ``'B'``, ``$B$``,
   ``(B)``) and a last line that is a label with its option's text (``C) Consolidation``),
   unless such lines form a list (an echo of the options). The *last* statement is authoritative: when it names no
   option (a label the question does not have, "unknown", an empty ``\\boxed{}``, "A or
   B"), the result is no answer, never an earlier statement.
4. Otherwise a one-line reply that states exactly one option's text (and does not deny it).

A label stands alone: ``B``, ``(B)``, ``B.``, ``B) text``, or a lower-case ``b`` right after
an answer phrase ("the answer is b because"). The English article "a"/"A" and the pronoun
"I" before a word ("I think", "I don't know") are never labels, and a reply that merely
starts with a label ("B is not my selection.") does not choose it. Several labels at once
("A, B, and C", "A or B") are ambiguous. Ambiguity or silence yields no answer: never a
guess.

A case whose labels are not all single letters (``1``/``2``, ``i``/``ii``; cases.json may name
any labels) has them read wherever a letter would be, when the answer field, the stated
answer or the line is nothing but the label (``2``, ``(ii)``, ``3.``; case-insensitive when
that names one label): ``Answer: 2 mm`` is not the label ``2``.
"""

from __future__ import annotations

import bisect
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

EXTRACTION_MODE = "robust-v4"
ANSWER_KEYS = ("answer", "final_answer", "Answer", "final answer", "Final Answer")
REASONING_KEYS = ("reasoning_trace", "rationale", "reasoning", "explanation", "Reasoning")
# A reply longer than this is read from its tail only: answers are stated at the end, and
# the regular expressions stay fast on megabytes of text.
MAX_READ_CHARS = 200_000
# How many ``{`` positions the embedded-JSON scan tries, from the end of the reply.
MAX_JSON_STARTS = 200

SegmentStatus = Literal["label", "multiple", "invalid", "none"]

# Invisible format characters (Unicode category Cf) carry no answer: zero-width spaces and
# joiners, word joiners and invisible operators, the byte-order mark, bidirectional marks,
# embeddings, overrides and isolates, the soft hyphen, interlinear annotation marks and tag
# characters. Script-specific format marks that are part of a word or a number (Arabic
# number signs, Egyptian hieroglyph and Brahmi controls) are left alone.
INVISIBLE_FORMAT_CHARACTERS = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0001\U000e0020-\U000e007f]"
)

# Words that can follow an option label but never the article "A" or the pronoun "I".
_LABEL_CONNECTIVES = {
    "because", "since", "is", "as", "which", "would", "seems", "appears", "fits", "matches",
    "was", "for", "given", "due",
}  # fmt: skip

_NEGATIONS = {
    "no", "not", "without", "absent", "absence", "excluded", "exclude", "unlikely", "neither",
    "nor", "cannot", "isn", "doesn", "rather", "instead",
}  # fmt: skip

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_QUALIFIER = r"(?:final|correct|best|right|most\s+likely|only|true)"
# "Answer:", "Final answer is:", "ANSWER =", "Final answer - D", "correct option:" ...
_COLON_MARKER = re.compile(
    rf"(?:\b{_QUALIFIER}\s+)?\b(?:answer|option|choice)\b[\"']?\s*(?:is\s*|would\s+be\s*)?"
    r"(?:[:=]|(?<=\s)[-–—](?=\s))\s*",
    re.IGNORECASE,
)
# "the answer is", "my final answer would be", "the best option is", a line opening with
# "answer is" (otherwise a determiner or a qualifier is required: "this answer is
# consistent with..." states nothing).
_VERB_MARKER = re.compile(
    rf"(?:\b(?:the|my|our)\s+(?:{_QUALIFIER}\s+)?|\b{_QUALIFIER}\s+|(?m:^)[ \t*]*(?=answer))"
    r"(?:answer|option|choice)\s+"
    r"(?:is|would\s+be|should\s+be|will\s+be|must\s+be|remains)\b\s*",
    re.IGNORECASE,
)
_CHINESE_MARKER = re.compile(
    r"(?:最终答案|正确答案|正确选项|答案)\s*(?:应该是|应该为|应为|是|为|选)?\s*:?\s*"
    r"|(?:我|应|故|所以|因此|因而|则|宜)?选(?:择)?\s*:?\s*(?=[(\[]?[A-Za-z](?![A-Za-z]))"
)
_CHINESE_LABEL_IS_CORRECT = re.compile(r"选项\s*(?P<letter>[A-Za-z])\s*(?:是|为)?\s*(?:正确|对)")
_CHOICE_PHRASE = re.compile(
    r"\bI\s*(?:would\s+|will\s+|'d\s+|'ll\s+)?(?:choose|select|pick|go\s+with)\s+"
    r"(?:option\s+|choice\s+|answer\s+)?",
    re.IGNORECASE,
)
_LABEL_IS_CORRECT = re.compile(
    r"(?:(?i:\b(?:option|choice|answer))\s+\(?(?P<lower>[A-Za-z])\)?|\(?\b(?P<upper>[A-Z]))\)?\s+"
    r"(?i:is\s+(?:the\s+)?(?:correct|right|best|most\s+(?:likely|appropriate|accurate))\b"
    r"|is\s+(?:my|the)\s+(?:final\s+)?(?:answer|choice|selection)\b)",
)
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{(?:\\text(?:bf)?\{)?(?P<content>[^{}]*)\}?\}")
_LEADING_LABEL = re.compile(
    r"^(?P<open>[(\[{<]?)(?P<letter>[A-Za-z])(?P<close>[)\]}>]?)"
    r"(?=$|[\s.,:;!?)\]}>。，：；、])"
)
_MULTIPLE_LABELS = re.compile(
    r"^\s*(?:,|;|/|&|\+|、|，|和|或|\band\b|\bor\b|,\s*and\b|,\s*or\b)\s*[(\[]?"
    r"(?P<letter>[A-Za-z])[)\]]?(?=$|[\s.,;)\]、，])",
    re.IGNORECASE,
)
# Emphasis and wrapping a label may carry: **B**, *B*, _B_, 'B', "B", `B`, $B$, \text{B}.
_WRAPPING = re.compile(r"\*\*|__|\\text(?:bf)?\{|[`$\"“”‘’*_'{}]")
_SEGMENT_LEADING_WORDS = re.compile(r"^(?:(?:option|choice|letter|answer|选项)\s*)+", re.IGNORECASE)
_LABEL_AND_TEXT = re.compile(r"^\s*[-–—:.)]?\s*(?P<text>.*?)\s*[.。]?\s*$", re.DOTALL)


@dataclass(frozen=True)
class ParsedReply:
    """The JSON fields of a reply, when it has them."""

    json_found: bool
    answer_field: str | None
    reasoning_trace: str | None


@dataclass(frozen=True)
class LabelExtraction:
    """The label a reply chose (or None), how it was found, and the raw JSON fields."""

    label: str | None
    method: str
    detail: str
    answer_field: str | None
    reasoning_trace: str | None

    @property
    def parsed(self) -> bool:
        return self.label is not None


def _stringify(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def _first_key(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    for key in keys:
        if key in obj:
            return True, obj[key]
    return False, None


def _loads(text: str) -> Any:
    """``json.loads`` that answers None instead of raising (bad JSON, or nesting so deep
    that the decoder would recurse past Python's limit)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object the reply holds, most authoritative last."""
    text = text[-MAX_READ_CHARS:]
    found: list[dict[str, Any]] = []
    stripped = text.strip()
    for attempt in (stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))):
        value = _loads(attempt)
        if isinstance(value, dict):
            found.append(value)
    if found:
        return found
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        value = _loads(text[start : end + 1])
        if isinstance(value, dict):
            return [value]
    decoder = json.JSONDecoder()
    starts = [match.start() for match in re.finditer(r"\{", text)][-MAX_JSON_STARTS:]
    for position in starts:
        try:
            value, _ = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def parse_reply(text: str) -> ParsedReply:
    """Find the reply's JSON object (the last one with an answer field wins)."""
    candidates = json_objects(text)
    for candidate in reversed(candidates):
        has_answer, answer = _first_key(candidate, ANSWER_KEYS)
        if has_answer:
            _, reasoning = _first_key(candidate, REASONING_KEYS)
            return ParsedReply(True, _stringify(answer), _stringify(reasoning))
    if candidates:
        _, reasoning = _first_key(candidates[-1], REASONING_KEYS)
        return ParsedReply(True, None, _stringify(reasoning))
    return ParsedReply(False, None, None)


@dataclass(frozen=True)
class OpenReply:
    """The two fields an open-ended reply must carry, and how they were found."""

    answer: str
    reasoning_trace: str
    method: str


_PLAIN_ANSWER = re.compile(
    r"(?:^|\n)[ \t]*(?:\*\*)?(?:final[ \t]+answer|answer)(?:\*\*)?[ \t]*[:：][ \t]*", re.IGNORECASE
)
_PLAIN_TRACE = re.compile(
    r"^\s*(?:\*\*)?(?:reasoning(?:[ _]trace)?|rationale)(?:\*\*)?\s*[:：]\s*", re.IGNORECASE
)


def parse_open_reply(text: str) -> OpenReply:
    """Read ``reasoning_trace`` and ``answer`` from an open-ended reply.

    JSON (bare, fenced or embedded; ``final_answer``/``rationale`` accepted) first; then a
    plain-text ``Answer:`` line, the text before it being the trace; otherwise the whole
    reply is taken as the answer and the trace is missing.
    """
    reply = parse_reply(text)
    if reply.json_found and (reply.answer_field is not None or reply.reasoning_trace is not None):
        return OpenReply(
            (reply.answer_field or "").strip(), (reply.reasoning_trace or "").strip(), "json"
        )
    markers = list(_PLAIN_ANSWER.finditer(text))
    if markers:
        last = markers[-1]
        trace = _PLAIN_TRACE.sub("", text[: last.start()]).strip()
        return OpenReply(text[last.end() :].strip(), trace, "answer_line")
    return OpenReply(text.strip(), "", "plain_text")


def readable_text(text: str) -> str:
    """Text as the extraction reads it: NFKC-normalised, invisible format characters removed."""
    return INVISIBLE_FORMAT_CHARACTERS.sub("", unicodedata.normalize("NFKC", text))


def normalise_text(text: str) -> str:
    """Case-folded words only, for comparing free text with option texts."""
    text = readable_text(text).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _unwrap(segment: str) -> str:
    segment = _WRAPPING.sub("", segment).strip()
    return _SEGMENT_LEADING_WORDS.sub("", segment).strip()


def _match_option_text(segment: str, options: list[tuple[str, str]]) -> str | None:
    """The one option whose text the segment states; None when none or several."""
    wanted = normalise_text(segment)
    if not wanted:
        return None
    texts = [(label, normalise_text(text)) for label, text in options]
    exact = [label for label, text in texts if text == wanted]
    if len(exact) == 1:
        return exact[0]
    padded = f" {wanted} "
    contained = [(label, text) for label, text in texts if text and f" {text} " in padded]
    # "Left pleural effusion" also contains the option "pleural effusion": keep the longest.
    maximal = [
        (label, text)
        for label, text in contained
        if not any(text != other and text in other for _, other in contained)
    ]
    if len(maximal) == 1:
        label, text = maximal[0]
        # "No pleural effusion" names an option only to deny it.
        remainder = set(padded.replace(f" {text} ", " ").split())
        if remainder & _NEGATIONS:
            return None
        return label
    return None


def _is_word_not_label(letter: str, rest: str, wrapped: bool) -> bool:
    """The letter begins a word, an article or a pronoun rather than naming an option.

    "A large effusion" (article), "I think" (pronoun), "a bit unclear": a single letter
    followed by a lower-case word that is not a connective ("B because", "A is correct").
    Segments are what follows an answer phrase, so a lower-case "b" alone, before
    punctuation or before a connective is a label there.
    """
    if wrapped:
        return False
    following = rest.lstrip()
    word = re.match(r"[A-Za-z]+", following) if rest[:1].isspace() else None
    if letter.islower():
        if not following or not following[0].isalpha():
            return False
        return not (word is not None and word.group(0).lower() in _LABEL_CONNECTIVES)
    if letter in {"A", "I"} and word is not None and word.group(0)[0].islower():
        return word.group(0).lower() not in _LABEL_CONNECTIVES
    return False


def _names_another_label(letter: str, rest: str) -> bool:
    """ "A, B, and C", "A or B", "A/C": a second label right after the first. A lower-case
    "a" after "and" is the article ("B and a small effusion")."""
    other = _MULTIPLE_LABELS.match(rest)
    if other is None or other.group("letter").upper() == letter.upper():
        return False
    return other.group("letter").isupper() or letter.islower()


_LABEL_BRACKETS = "()[]{}<>"
_LABEL_TRAILING = ".,:;!?。，：；、"


def _exact_label(segment: str, labels: list[str]) -> str | None:
    """A segment that is nothing but one of the case's own labels when they are not all
    single letters (``2``, ``ii``, ``(iv)``, ``3.``): the letter rules below read one letter
    and would never see them. Case-insensitive only when that names one label."""
    if all(len(label) == 1 and label.isascii() and label.isalpha() for label in labels):
        return None
    # The reply is read NFKC-normalised (``Ⅳ`` as ``IV``): so are the labels it is held to.
    readable = {readable_text(label).strip(): label for label in labels}
    bare = segment.strip()
    if bare not in readable:
        bare = bare.strip(_LABEL_BRACKETS).rstrip(_LABEL_TRAILING).strip(_LABEL_BRACKETS).strip()
    if bare in readable:
        return readable[bare]
    folded = [label for read, label in readable.items() if read.casefold() == bare.casefold()]
    return folded[0] if len(folded) == 1 else None


def label_from_segment(
    segment: str, options: list[tuple[str, str]]
) -> tuple[SegmentStatus, str | None]:
    """Read the label a stated answer (the text after an answer phrase, a JSON answer
    field) begins with, or the option text it states."""
    labels = [label for label, _ in options]
    cleaned = _unwrap(segment)
    # the segment as written first: a label may be a word the unwrapping removes ("Answer")
    exact = _exact_label(segment, labels) or _exact_label(cleaned, labels)
    if exact is not None:
        return "label", exact
    match = _LEADING_LABEL.match(cleaned)
    if match:
        letter = match.group("letter")
        wrapped = bool(match.group("open") or match.group("close"))
        rest = cleaned[match.end() :]
        if _names_another_label(letter, rest):
            return "multiple", None
        if not _is_word_not_label(letter, rest, wrapped):
            if letter in labels:
                return "label", letter
            if letter.islower() and letter.upper() in labels:
                return "label", letter.upper()
            return "invalid", None
    option_label = _match_option_text(cleaned, options)
    if option_label is not None:
        return "label", option_label
    return "none", None


def _bare_label_line(line: str, options: list[tuple[str, str]]) -> tuple[SegmentStatus, str | None]:
    """A line that holds nothing but a label (maybe with its option's text): ``**B**``,
    ``(D)``, ``C) Consolidation``, ``A or B``; anything else is "none"."""
    cleaned = _unwrap(line)
    labels = [label for label, _ in options]
    exact = _exact_label(line, labels) or _exact_label(cleaned, labels)
    if exact is not None:
        return "label", exact
    match = _LEADING_LABEL.match(cleaned)
    if not match:
        return "none", None
    rest = cleaned[match.end() :]
    letter = match.group("letter")
    if _names_another_label(letter, rest):
        return "multiple", None
    tail = _LABEL_AND_TEXT.match(rest)
    text = tail.group("text") if tail else rest
    label = letter.upper() if letter.upper() in [lab for lab, _ in options] else None
    wrapped = bool(match.group("open") or match.group("close"))
    if not text:
        if label is None:
            return ("invalid", None) if letter.isupper() or wrapped else ("none", None)
        return "label", label
    if label is not None and letter.isupper():
        option_text = dict(options)[label]
        if normalise_text(text) == normalise_text(option_text):
            return "label", label
    return "none", None


# A stated answer is read from its first characters; a cap keeps many statements on one
# long line linear to read.
MAX_SEGMENT_CHARS = 400


def _segment_after(text: str, start: int) -> str:
    """The rest of the line from ``start`` (a quoted value ends at its closing quote)."""
    end = text.find("\n", start, start + MAX_SEGMENT_CHARS)
    line = text[start : end if end >= 0 else start + MAX_SEGMENT_CHARS]
    if line[:1] in {'"', "'"}:
        closing = line.find(line[0], 1)
        if closing > 0:
            return line[1:closing]
    return line


@dataclass(frozen=True)
class _Statement:
    position: int
    method: str
    segment: str
    bare_line: bool = False


def _answer_tags(text: str) -> list[_Statement]:
    """``<answer>X</answer>``, or an unclosed ``<answer> X`` (to the end of its line); found
    with one pass over the tags, so a reply of many tags stays linear to read."""
    opens = [match.end() for match in _ANSWER_OPEN.finditer(text)]
    closes = [match.start() for match in _ANSWER_CLOSE.finditer(text)]
    tags: list[_Statement] = []
    for index, start in enumerate(opens):
        following = opens[index + 1] if index + 1 < len(opens) else len(text)
        position = bisect.bisect_left(closes, start)
        close = closes[position] if position < len(closes) else -1
        if 0 <= close < following:
            content = text[start : min(close, start + MAX_SEGMENT_CHARS)]
        else:
            content = re.split(r"[\n<]", _segment_after(text, start), maxsplit=1)[0]
        tags.append(_Statement(start - len("<answer>"), "answer_tag", content.strip()))
    return tags


def _statements(text: str) -> list[_Statement]:
    """Every answer statement in the reply, in reading order."""
    found: list[_Statement] = []
    for match in _COLON_MARKER.finditer(text):
        found.append(
            _Statement(match.start(), "answer_statement", _segment_after(text, match.end()))
        )
    for match in _VERB_MARKER.finditer(text):
        found.append(
            _Statement(match.start(), "answer_statement", _segment_after(text, match.end()))
        )
    for match in _CHINESE_MARKER.finditer(text):
        found.append(
            _Statement(match.start(), "chinese_statement", _segment_after(text, match.end()))
        )
    for match in _CHINESE_LABEL_IS_CORRECT.finditer(text):
        found.append(_Statement(match.start(), "chinese_statement", match.group("letter")))
    for match in _CHOICE_PHRASE.finditer(text):
        found.append(_Statement(match.start(), "choice_phrase", _segment_after(text, match.end())))
    for match in _LABEL_IS_CORRECT.finditer(text):
        letter = match.group("lower") or match.group("upper")
        found.append(_Statement(match.start(), "label_is_correct", letter))
    found.extend(_answer_tags(text))
    for match in _BOXED.finditer(text):
        found.append(_Statement(match.start(), "boxed", match.group("content")))
    found.extend(_label_lines(text))
    return sorted(found, key=lambda statement: statement.position)


# The wrappers are single characters repeated (``**`` is ``*`` twice): an alternation of
# ``\*\*`` and ``\*`` would let a run of asterisks split in exponentially many ways, and a
# line of 40 of them took 9 s to refuse.
_LABEL_ONLY_LINE = re.compile(r"[ \t]*[*_'`$\"(\[]*[A-Za-z][*_'`$\")\].]*[ \t]*")


def _label_lines(text: str) -> list[_Statement]:
    """Lines that hold nothing but a label (``B``, ``**B**``, ``(B)``), and a last line that
    is a label with its option's text (``C) Consolidation``): each is a statement unless it
    stands in a list of such lines (an echo of the options, not a choice)."""
    lines: list[tuple[int, str]] = []
    position = 0
    for line in text.split("\n"):
        if line.strip():
            lines.append((position, line))
        position += len(line) + 1
    labelled = [bool(_LEADING_LABEL.match(_unwrap(line))) for _, line in lines]
    found: list[_Statement] = []
    for index, (start, line) in enumerate(lines):
        in_list = (index > 0 and labelled[index - 1]) or (
            index + 1 < len(lines) and labelled[index + 1]
        )
        if in_list:
            continue
        if _LABEL_ONLY_LINE.fullmatch(line):
            found.append(_Statement(start, "label_line", line, bare_line=True))
        elif index == len(lines) - 1:
            found.append(_Statement(start, "final_line", line, bare_line=True))
    return found


def _read_statements(
    text: str, options: list[tuple[str, str]]
) -> tuple[SegmentStatus, str | None, _Statement] | None:
    """The verdict of the last answer statement that is one, or None when there is none."""
    for statement in reversed(_statements(text)):
        if statement.bare_line:
            status, label = _bare_label_line(statement.segment, options)
            if status == "none":
                continue  # a last line that is not a bare label is not a statement
        else:
            status, label = label_from_segment(statement.segment, options)
        return status, label, statement
    return None


_VERDICT_METHOD = {"multiple": "ambiguous", "invalid": "invalid_label", "none": "no_option"}
# The methods that mean "no answer": the reply is counted, never given a guessed label.
NO_ANSWER_METHODS = frozenset({"empty", "unparsed", *_VERDICT_METHOD.values()})


def extract_label(text: str, options: list[tuple[str, str]]) -> LabelExtraction:
    """Find the option label a reply chose; see the module docstring for the rules."""
    reply = parse_reply(text)

    def result(label: str | None, method: str, detail: str) -> LabelExtraction:
        return LabelExtraction(label, method, detail, reply.answer_field, reply.reasoning_trace)

    if reply.answer_field is not None:
        field = readable_text(reply.answer_field)
        status, label = label_from_segment(field, options)
        method = "json_answer_field"
        if status == "none":
            stated = _read_statements(field, options)
            if stated is not None:
                status, label, _ = stated
        if status == "label":
            return result(label, method, f"answer field {reply.answer_field[:80]!r}")
        if not field.strip():
            return result(None, "empty", "the answer field is empty")
        return result(
            None,
            _VERDICT_METHOD[status],
            f"answer field {reply.answer_field[:80]!r} names no single option of {_labels(options)}",
        )

    normalised = readable_text(text[-MAX_READ_CHARS:])
    if not normalised.strip():
        return result(None, "empty", "the reply is empty")
    stated = _read_statements(normalised, options)
    if stated is not None:
        status, label, statement = stated
        quoted = f"{statement.segment.strip()[:80]!r}"
        if status == "label":
            return result(label, statement.method, f"last stated answer {quoted}")
        return result(
            None,
            _VERDICT_METHOD[status],
            f"the last stated answer {quoted} ({statement.method}) names no single option "
            f"of {_labels(options)}",
        )
    whole = normalised.strip()
    if "\n" not in whole and len(whole) <= 200:
        option_label = _match_option_text(whole, options)
        if option_label is not None:
            return result(
                option_label, "option_text", f"reply states the option's text {whole[:80]!r}"
            )
    return result(None, "unparsed", "no answer statement and no option's text")


def _labels(options: list[tuple[str, str]]) -> str:
    return "/".join(label for label, _ in options)
