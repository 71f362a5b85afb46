"""Reading short free-text answers: the answer a reply states, normalisation, yes/no polarity.

The answer statements are the label reader's (``extraction.free_text_statements``): a JSON
answer field, ``ANSWER: X`` (English or Chinese, ``答案是X``, ``答：X``), "the answer is X",
``<answer>X</answer>`` and ``\\boxed{X}``; the last one is authoritative, a broken or nested
``<answer>`` tag is no answer, and a ``<think>`` block is trace, never the answer. With no
statement, a reply that opens with yes or no and a separator ("No, this is not a fracture.")
states that line, and a one-line reply states itself.

Yes/no polarity follows each dataset's own vocabulary (``YES_NO_VOCABULARIES``).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.extraction import (
    DESCRIBES_THE_ANSWER,
    answer_headings,
    free_text_statements,
    parse_reply,
    readable_text,
    strip_thinking,
)

# A one-line reply up to this long is taken as the answer when it states none.
MAX_BARE_REPLY_CHARS = 100


@dataclass(frozen=True)
class ShortAnswer:
    """The answer a reply states (empty when none), how it was found, and why not."""

    text: str
    method: str
    detail: str = ""
    # The visible reply after the answer's line: a later "Wait, actually yes." corrects it.
    after: str = ""


# A reply that opens with yes or no followed by a separator: "No, this is not ...",
# "Yes. The cortex is broken.", "是的，..." (the reply is read NFKC-normalised: "，" is ",").
_YES_NO_WORD = r"(?:yes|no|true|false|是的|不是|是|否|有|没有|无|对|不对)"
# "Yes and no, ..." is read too, so that it is refused as stating both.
_OPENING_YES_NO = re.compile(
    rf"\s*(?:\*\*)?{_YES_NO_WORD}(?:\s*(?:\band\b|\bor\b|/|或|和)\s*{_YES_NO_WORD})?(?:\*\*)?"
    r"(?=\s*(?:[,.!;:。！；]|$)|\s+[-–—]\s)",
    re.IGNORECASE,
)


def _next_line(text: str, start: int) -> str:
    """The first non-blank line after the one ``start`` is on ("Answer:\\nyes")."""
    end = text.find("\n", start)
    while end >= 0:
        following = text.find("\n", end + 1)
        line = text[end + 1 : following if following >= 0 else len(text)]
        if line.strip():
            return line
        end = following
    return ""


def _clean(segment: str) -> str:
    return segment.strip().strip("*$`").strip()


def _after(text: str, answer: str, start: int) -> str:
    """The reply after the answer (found from ``start``): the rest of its line ("</answer>
    wait, actually yes") and the lines below."""
    found = text.find(answer, start)
    return text[found + len(answer) :] if found >= 0 else ""


def read_short_answer(completion: str) -> ShortAnswer:
    """The answer a free-text reply commits to; see the module docstring for the rules."""
    visible = strip_thinking(completion)
    reply = parse_reply(visible.text)
    if reply.answer_field is not None:
        return ShortAnswer(reply.answer_field.strip(), "json_answer_field")
    text = readable_text(visible.text)
    if not text.strip():
        if visible.unclosed_thinking:
            return ShortAnswer(
                "", "thinking_only", "the reply is all reasoning: its <think> block never closes"
            )
        return ShortAnswer("", "unparsed", "the reply is empty")
    # "the answer is supported by ..." after the answer describes it: not a statement
    statements = [
        statement
        for statement in free_text_statements(text)
        if statement.content is not None or not DESCRIBES_THE_ANSWER.match(statement.segment(text))
    ]
    headings = answer_headings(text)
    if headings and (not statements or headings[-1][0] > statements[-1].position):
        # "## Final Response\nThe left lung": the line under the last heading
        line = _clean(text[headings[-1][1] :].split("\n", 1)[0])
        if line:
            return ShortAnswer(line, "answer_heading", after=_after(text, line, headings[-1][1]))
    if statements:
        last = statements[-1]
        method = "answer_line" if last.colon and last.method == "answer_statement" else last.method
        if last.verdict is not None:
            return ShortAnswer("", "broken_tag", last.reason)
        # the whole line: a short answer may be long, and one statement is read, not all
        answer = _clean(last.segment(text, limit=None))
        if not answer and last.colon:
            answer = _clean(_next_line(text, last.start))
        if not answer:
            return ShortAnswer("", "empty_statement", "the last answer statement states nothing")
        return ShortAnswer(answer, method, after=_after(text, answer, last.start))
    stripped = text.strip()
    if "\n" not in stripped and len(stripped) <= MAX_BARE_REPLY_CHARS:
        return ShortAnswer(stripped, "bare_reply")
    if _OPENING_YES_NO.match(stripped):
        first_line, _, rest = stripped.partition("\n")
        return ShortAnswer(_clean(first_line), "opening_yes_no", after="\n" + rest)
    return ShortAnswer(
        "", "unparsed", "no answer statement, no opening yes or no, and not a one-line reply"
    )


def final_answer(completion: str) -> tuple[str, str]:
    """The answer a free-text reply commits to, and how it was found."""
    answer = read_short_answer(completion)
    return answer.text, answer.method


def normalise_answer(text: str) -> str:
    text = readable_text(text).casefold().strip()
    text = re.sub(r"[\s.。!！,，;；:：\"'`*]+$", "", text)
    return re.sub(r"^[\s\"'`*]+", "", text)


@dataclass(frozen=True)
class YesNoVocabulary:
    """The words a dataset's own scoring counts as yes and as no, and where that rule is from."""

    name: str
    yes: frozenset[str]
    no: frozenset[str]
    rule: str
    # 正常/异常 read as yes or no where the question asks whether it is (ab)normal
    normality_by_question: bool = False

    def as_record(self) -> dict[str, object]:
        return {
            "name": self.name,
            "yes": sorted(self.yes),
            "no": sorted(self.no),
            "rule": self.rule,
            "normality_by_question": self.normality_by_question,
        }


_ENGLISH_ONLY = (
    "yes and no only, by exact match after normalisation (no true/false, no present/absent)"
)
_BROAD_YES = frozenset({"yes", "y", "true", "present", "是", "是的", "有", "对", "正确", "存在"})
_BROAD_NO = frozenset(
    {
        "no",
        "n",
        "false",
        "absent",
        "not present",
        "否",
        "不是",
        "没有",
        "无",
        "不",
        "错",
        "错误",
        "不存在",
    }
)
# Normal and abnormal are yes or no only by the question: "图像正常吗？" makes 正常 yes, "是否
# 存在异常？" makes 异常 yes. Read only under a vocabulary that counts Chinese synonyms, and only
# when the question names one of the two (not both: "正常还是异常" is not a yes/no question).
_NORMAL_WORDS = frozenset({"正常"})
_ABNORMAL_WORDS = frozenset({"异常", "不正常", "非正常"})

YES_NO_VOCABULARIES: dict[str, YesNoVocabulary] = {
    # The project's table before per-dataset rules; kept for callers that name no dataset.
    "default": YesNoVocabulary(
        "default",
        _BROAD_YES,
        _BROAD_NO,
        "English and Chinese yes/no with true/false and present/absent",
        normality_by_question=True,
    ),
    # VQA-RAD's closed questions are those whose reference is yes or no; its peers
    # (inspect_evals) score them by exact match, so true/false are not yes/no.
    "vqa_rad": YesNoVocabulary("vqa_rad", frozenset({"yes"}), frozenset({"no"}), _ENGLISH_ONLY),
    "path_vqa": YesNoVocabulary("path_vqa", frozenset({"yes"}), frozenset({"no"}), _ENGLISH_ONLY),
    # SLAKE is bilingual (是/否 references); its public scorers (lmms-eval's
    # tasks/slake/utils.py EN_YES/EN_NO/ZH_YES/ZH_NO, evalscope's alike) count these synonyms.
    "slake": YesNoVocabulary(
        "slake",
        frozenset(
            {"yes", "yeah", "yep", "true", "是", "是的", "有", "包含", "可以", "能", "会", "存在"}
        ),
        frozenset(
            {
                "no",
                "nope",
                "false",
                "否",
                "不是",
                "没有",
                "无",
                "不包含",
                "不能",
                "不会",
                "不可以",
                "不存在",
            }
        ),
        "SLAKE's public scorers' synonym table (lmms-eval tasks/slake/utils.py): yes/yeah/yep/"
        "true, no/nope/false, and their Chinese synonyms, with 存在/不存在; 正常/异常 only "
        "where the question asks whether it is normal (or abnormal)",
        normality_by_question=True,
    ),
}


def yes_no_vocabulary(name: str) -> YesNoVocabulary:
    """The vocabulary of that name; a clear error for an unknown one."""
    try:
        return YES_NO_VOCABULARIES[str(name)]
    except KeyError:
        raise TaskArgumentError(
            f"yes_no_vocabulary={name!r}: choose one of {sorted(YES_NO_VOCABULARIES)}"
        ) from None


_BOTH_POLARITIES = re.compile(
    r"^\s*(?P<first>yes|no|true|false|是|否|有|无)(?:\s*(?:,|/|\||&|\band\b|\bor\b|或者?|和|与|还是)\s*)*\s*"
    r"(?P<second>yes|no|true|false|是|否|有|无)(?![a-z])"
)


# Replies that open with "no" without answering no: "No doubt, ...", "No idea.".
_NO_IDIOM = re.compile(
    r"no\s+(?:doubt|idea|way|answer|clue|comment|question|matter|telling|wonder)\b|not\s+sure\b"
)


def _normality_asked(question: str | None) -> str | None:
    """ "normal" when the question asks whether something is normal, "abnormal" when it asks
    whether it is abnormal, None when it asks neither or both."""
    if not question:
        return None
    abnormal = any(word in question for word in _ABNORMAL_WORDS)
    normal = "正常" in question.replace("不正常", "").replace("非正常", "")
    if normal == abnormal:
        return None
    return "normal" if normal else "abnormal"


def _read_normality(first: str, question: str | None) -> tuple[str | None, str]:
    """正常/异常 as yes or no by the question, or None with the reason."""
    said = "normal" if first in _NORMAL_WORDS else "abnormal"
    asked = _normality_asked(question)
    if asked is None:
        return None, (
            f"{first!r} is yes or no only where the question asks whether it is normal or "
            "abnormal, and this one does not say which"
        )
    return ("yes" if said == asked else "no"), ""


def read_yes_no(
    text: str, vocabulary: str = "default", question: str | None = None
) -> tuple[str | None, str]:
    """``yes``/``no`` for a yes/no answer under the dataset's vocabulary, or None with the
    reason: neither, both ("yes and no", "yes or no", "是或否"), or a word the dataset's
    rule does not count ("true" for VQA-RAD). ``question`` decides 正常/异常 (normal is yes
    to "is it normal?", no to "is it abnormal?")."""
    words = yes_no_vocabulary(vocabulary)
    normalised = normalise_answer(text)
    if not normalised:
        return None, "no answer"
    if words.normality_by_question and normalised in _NORMAL_WORDS | _ABNORMAL_WORDS:
        return _read_normality(normalised, question)
    both = _BOTH_POLARITIES.match(normalised)
    if both and _polarity(both.group("first")) != _polarity(both.group("second")):
        return None, f"{text.strip()[:60]!r} states both yes and no"
    if normalised in words.yes:
        return "yes", ""
    if normalised in words.no:
        return "no", ""
    idiom = _NO_IDIOM.match(normalised)
    if idiom:
        return None, f"{idiom.group(0)!r} is an idiom, not a yes or no"
    first = re.split(r"[\s,，.。;；]", normalised, maxsplit=1)[0]
    if words.normality_by_question and first in _NORMAL_WORDS | _ABNORMAL_WORDS:
        return _read_normality(first, question)
    if first in words.yes and first not in words.no:
        return "yes", ""
    if first in words.no:
        return "no", ""
    if first in _BROAD_YES | _BROAD_NO:
        return None, f"{first!r} is not a yes or no under {words.name}'s rule ({words.rule})"
    return None, f"{text.strip()[:60]!r} is neither yes nor no"


def yes_no(text: str, vocabulary: str = "default", question: str | None = None) -> str | None:
    """``yes``/``no`` for a yes/no answer under the vocabulary; None when neither or both."""
    return read_yes_no(text, vocabulary, question)[0]


# The final committed yes/no of a reply (``read_committed_yes_no``). A polarity word counts
# as a commitment only where a person reads one: opening a sentence or line and followed
# by a separator ("No.", "Yes, ..."), or right after a self-correction ("Wait, actually
# yes", "on second thought, no", "不对，应该是否", "其实是的"), or after a hedge ("probably
# yes", "可能是"), where it is hedged. Inside a sentence ("there is no fracture", "yes, no
# mass") a word is content, never a commitment.
_POLARITY_WORD = (
    r"(?:\*\*)?(?P<word>yes|no|true|false|是的|不是|否|是|没有|有|无|不对|对)(?:\*\*)?"
    r"(?=\s*(?:[,.!;:。！；，)）]|\n|$)|\s+[-–—]\s)"
)
# a semicolon joins clauses of one sentence ("There is no fracture; no, nothing else.")
# A line may open with a label ("Explanation: yes, there is ...").
_SENTENCE_START = r"(?:^|(?<=[.!?。！？\n]))[\s*>#-]*(?:[a-z][a-z ]{0,24}[:：][\s*]*)?"
_CORRECTION = (
    r"(?:wait|hold on|hmm+|actually|on (?:second|further) (?:thought|reflection|review)|"
    r"on reflection|upon (?:further )?(?:reflection|review)|correction|scratch that|"
    r"i mean|rather|i was wrong|let me correct (?:that|myself)|i take (?:that|it) back|"
    r"(?:i )?change my answer(?: to)?|revised answer|reconsidering|"
    r"其实|实际上|不对|等等|等一下|更正|纠正|修正|改为|应改为|我错了|再想想|重新考虑)"
)
_HEDGE = (
    r"(?:maybe|perhaps|possibly|probably|likely|most likely|might be|could be|i guess|"
    r"not sure|unsure|uncertain|可能|也许|大概|或许|不确定|不太确定)"
)
# Words between the marker and the polarity that do not change it: "actually, the answer
# is yes", "应该是否", "其实是的" (是 before 的 is the answer itself, so no filler there).
_FILLER = (
    r"(?:(?:the (?:final |correct )?answer (?:is|should be)|it(?:'s| is| should be)|"
    r"i (?:think|believe)|i'd say|make that|答案(?:应该)?是|应该是|应为)[\s:：]*)?"
)
_SEP = r"[\s,，:：;；.。!！—–-]*"
_AHEAD = _POLARITY_WORD.replace("?P<word>", "?:")
_COMMITMENTS = re.compile(
    rf"(?P<corrected>(?<![a-z]){_CORRECTION}(?:{_SEP}{_CORRECTION})*{_SEP}{_FILLER})"
    rf"(?={_AHEAD})"
    rf"|(?P<hedged>(?<![a-z]){_HEDGE}{_SEP}{_FILLER})(?={_AHEAD})"
    rf"|(?P<plain>{_SENTENCE_START})(?={_AHEAD})",
    re.IGNORECASE,
)
_WORD_AT = re.compile(_POLARITY_WORD, re.IGNORECASE)
# A yes/no closing its sentence ("Wait, looking again at the apex, yes.", "I'd say
# yes."): a commitment, a correction where a correction comes before it in its sentence.
_CLAUSE_FINAL = re.compile(
    r"(?<=[\s,，—–-])(?:\*\*)?(?P<word>yes|no|是的|不是|否|是)(?:\*\*)?\s*(?=[.!。！)）]|\n|$)",
    re.IGNORECASE,
)
_LABEL_CORRECTS = re.compile(rf"(?<![a-z]){_CORRECTION}", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?。！？\n]")
# "Yes. Actually, I'm not sure.": a correction that takes the answer back without another.
_WITHDRAWN = re.compile(
    rf"(?<![a-z]){_CORRECTION}{_SEP}(?:i'm |i am )?(?:not sure|unsure|uncertain|"
    r"can(?:no|')t (?:tell|say|be sure)|不确定|不好说|说不准)",
    re.IGNORECASE,
)
# "Yes, probably not." hedges a no after the yes: a hedged commitment to no.
_HEDGED_NOT = re.compile(rf"(?<![a-z]){_HEDGE}\s+not\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Commitment:
    word: str
    position: int
    kind: str  # "plain", "corrected" or "hedged"


def _commitments(text: str) -> list[_Commitment]:
    """Each yes/no the text commits to, in order, and how (see ``_COMMITMENTS``)."""
    found: dict[int, _Commitment] = {}
    markers: list[tuple[int, int]] = []
    for match in _COMMITMENTS.finditer(text):
        word = _WORD_AT.match(text, match.end())
        if word is None:
            continue
        kind = str(match.lastgroup)
        if kind == "plain" and _LABEL_CORRECTS.search(match.group(0)):
            kind = "corrected"  # "Correction: yes", "On second thought: no"
        position = word.start("word")
        if kind == "corrected":
            markers.append(match.span())
        # one word, one commitment: a correction or a hedge says more than a sentence start
        if position not in found or found[position].kind == "plain":
            found[position] = _Commitment(word.group("word").casefold(), position, kind)
    # sorted once: each sentence's start is found by bisection (linear in long replies)
    ends = [end.end() for end in _SENTENCE_END.finditer(text)]
    for match in _CLAUSE_FINAL.finditer(text):
        position = match.start("word")
        before = bisect.bisect_right(ends, position) - 1
        corrects = _LABEL_CORRECTS.search(text, ends[before] if before >= 0 else 0, position)
        kind = "corrected" if corrects else "plain"
        if position not in found or (kind == "corrected" and found[position].kind == "plain"):
            found[position] = _Commitment(match.group("word").casefold(), position, kind)
    for match in _HEDGED_NOT.finditer(text):
        found.setdefault(match.end() - 3, _Commitment("no", match.end() - 3, "hedged"))
    # 不对 opening "不对，应该是否" is the correction, not a no (the marker spans do not
    # overlap: finditer's matches never do)
    starts = [start for start, _ in markers]

    def in_marker(position: int) -> bool:
        index = bisect.bisect_right(starts, position) - 1
        return index >= 0 and position < markers[index][1]

    return [found[position] for position in sorted(found) if not in_marker(position)]


def read_committed_yes_no(
    answer: ShortAnswer, vocabulary: str = "default", question: str | None = None
) -> tuple[str | None, str]:
    """The final yes/no a reply commits to (``read_yes_no`` of it under the vocabulary), or
    None with the reason. A later yes/no replaces an earlier one only through a
    self-correction ("No. Wait, actually yes." is yes; "否。不对，应该是。" is yes); two
    opposite commitments with no correction between ("Yes.\nNo.") are no answer, as is
    a final one that is hedged ("Probably yes."). Without two commitments, the stated
    answer is read as ``read_yes_no`` reads it."""
    if not answer.text:
        return None, answer.detail or "no answer"
    text = answer.text + "\n" + answer.after
    commitments = _commitments(text)
    if (
        len(commitments) < 2
        and all(c.kind == "plain" for c in commitments)
        and not (commitments and _WITHDRAWN.search(text, commitments[0].position))
    ):
        return read_yes_no(answer.text, vocabulary, question)
    current: _Commitment | None = None
    for commitment in commitments:
        if current is None or commitment.kind == "corrected":
            current = commitment
        elif _polarity(commitment.word) != _polarity(current.word):
            return None, (
                f"commits to {current.word!r} and then to {commitment.word!r} with no "
                "correction between: no final answer"
            )
        elif current.kind == "hedged":
            current = commitment  # "Probably yes. Yes." commits
    if current is None:
        return read_yes_no(answer.text, vocabulary, question)
    withdrawn = [m for m in _WITHDRAWN.finditer(text) if m.start() > current.position]
    if withdrawn:
        return None, f"{current.word!r} is taken back ({withdrawn[-1].group(0)!r}): no answer"
    if current.kind == "hedged":
        return None, f"{current.word!r} is hedged (probably, maybe, 可能): no committed answer"
    said, reason = read_yes_no(current.word, vocabulary, question)
    if said is None:
        return None, reason
    how = "the last self-correction" if current.kind == "corrected" else "the answer"
    return said, f"read from {how} ({current.word!r})"


_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def closed_form(text: str) -> str:
    """A closed answer as it is compared with its reference: normalised, without a leading
    article and with each word's plural -s dropped ("The lungs" is "lung", as "Lung" is);
    -ss, -us and -is endings are left ("Pelvis", "Stenosis")."""
    words = _ARTICLE.sub("", normalise_answer(text)).split()
    return " ".join(
        word[:-1]
        if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
        else word
        for word in words
    )


def _polarity(word: str) -> str:
    return "yes" if word in _BROAD_YES else "no"


def is_yes_no_reference(answer: str) -> bool:
    """A closed-ended question, as the VQA-RAD paper defines it: the reference is yes or no
    (not "no fracture", "present" or "true")."""
    return normalise_answer(answer) in {"yes", "no"}
