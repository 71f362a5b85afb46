"""``medreason/reference-judge``: an offline stand-in for the open-ended track's judges whose
verdicts follow, deterministically, what it can measure.

It reads the real judge requests (the same ``judge_{gt,va,rvf}_user.txt`` prompt files the
real judges get, or the set given with ``-M prompts=DIR`` when the run uses ``-T
judge_prompts=DIR``): which judge it is asked to be is the template the user turn matches,
and the question, reference answer and candidate's text are read from that template's
places (the candidate between the markers carrying its own fence id, which is checked). A
request it cannot read gets a reply without a verdict, so the component is unscored and the
reason is in the log; it never guesses a score.

Text role (``grader``, ``GT_final``): the answer's agreement with the reference. Both are
normalised (Unicode NFKC, case-folded, punctuation dropped, a plural ``s`` dropped, English
function words left out; each CJK character is a word) and compared as bags of content
words:

- the same normalised text: 4;
- an answer that abstains ("cannot assess", "I don't know", "too blurred", ...): 1 (the
  rubric's "too non-committal to count"), or 4 when the reference abstains too;
- a contradiction: 0 (a yes/no reference answered the other way; or a content word one
  side asserts and the other negates within three words after "no", "not", "without",
  "absent", "negative for");
- otherwise the recall-weighted F-measure (beta 2: harmless extra detail costs little,
  missing the reference's content a lot) of the answer's content words against the
  reference's, in buckets: >= 0.8 -> 4, >= 0.6 -> 3, >= 0.35 -> 2, >= 0.15 -> 1, else 0.

Vision roles (``vision_grader``, ``VA_answer`` on the answer and ``RVF_trace`` on the trace):
what it can measure of the images it is sent and the claims made about them.

- **Sight** ``q``: the least, over the images, of the image-sensitive model's clarity
  (``core.image_quality``: Crété-Roffet blur and Immerkær noise) times a contrast factor
  ``min(1, RMS contrast / 0.15)`` (RMS contrast: the grey values' standard deviation on
  [0, 1]). It caps the score: q >= 0.30 -> 4, >= 0.20 -> 3, >= 0.12 -> 2, >= 0.06 -> 1,
  else 0 (a judge cannot confirm what it cannot see). No image: no verdict.
- **Claims**: the candidate's content words, less the words about images, quality, seeing
  and answering (``META_WORDS``). With no claim left and an abstention or a quality
  complaint, it is an abstention: 3 when the image is poor (its cap is 2 or less:
  justified uncertainty, "up to 3"), 1 when it is not (an abstention when the answer is
  plainly visible). A text with neither claims nor abstention: 0.
- **Support**: what the stand-in knows the image shows is the case's reference answer, given
  with ``-M cases=cases.json -M answers=ground_truth.json`` and found by the question's
  text (open cases only). A claim word is supported when it is in the reference or the
  question; the share supported (precision) is bucketed as above. Without that file, or
  when several open cases ask the same question with different references, the claims
  cannot be checked and count as 2 ("doubtful").
- The score is the smaller of the claims' score and the sight cap.

So a better answer scores higher, and a worse image or an unsupported claim lower, and the
``RVF_trace`` gate and ``VA_final`` move with them. Its numbers mean nothing about a real
judge's; they make an offline open-ended run show what the track detects.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage
from PIL import Image, UnidentifiedImageError

from inspect_medreason.core.errors import UserInputError
from inspect_medreason.core.image_quality import clarity, grey_values, measure
from inspect_medreason.core.judges import JUDGE_KINDS, JudgeKind, JudgeTemplates, fence_id

REFERENCE_JUDGE_NOTE = "Reference judge (offline stand-in, docs/open_ended.md)."

# Score buckets of an agreement or support share in [0, 1], best first.
SHARE_BUCKETS: tuple[tuple[float, int], ...] = ((0.8, 4), (0.6, 3), (0.35, 2), (0.15, 1))
# Sight caps of the measured image quality q, best first.
SIGHT_BUCKETS: tuple[tuple[float, int], ...] = ((0.30, 4), (0.20, 3), (0.12, 2), (0.06, 1))
# RMS contrast at and above which contrast costs nothing (the demo images: 0.17-0.33).
FULL_CONTRAST = 0.15
F_BETA = 2.0
# Claims the stand-in cannot check count as "doubtful".
UNCHECKED_CLAIMS_SCORE = 2
ABSTENTION_ON_POOR_IMAGE = 3
ABSTENTION_ON_CLEAR_IMAGE = 1
ABSTENTION_TEXT_SCORE = 1

_STOP_WORD_TEXT = """a an the and or but of in on at to for from by with within into onto over under as is are
    was were be been being am it its this that these those there here which what who whom whose
    where when how why than then also both either each every any some such same other another
    one two can could may might must should would will shall do does did done has have had
    having i you he she we they me him her us them my your his our their very more most much
    many few less least so too just only about above below between through during before after
    while if because until again further once all own s t"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
# Words about the image, its quality, seeing and answering: not claims about what it shows.
_META_WORD_TEXT = """image images picture pictures photo photograph view scan film clear clearly clarity
    sharp sharpness blur blurred blurry noise noisy grainy quality contrast resolution
    pixelated visible seen see seeing shows show shown showing appear appears looks look
    assess assessed assessment determine determined tell evaluate evaluated identify
    measured measure needed need answer answers answered question reasoning reference model
    sensitive finding asked cannot unable possible impossible know uncertain unclear poor
    low limited insufficient degraded diagnostic nondiagnostic"""
META_WORDS = frozenset(_META_WORD_TEXT.split())
NEGATIONS = frozenset({"no", "not", "without", "absent", "negative", "never", "nor", "none"})
NEGATION_REACH = 3
ABSTENTION = re.compile(
    r"\b(?:can ?not|can't|unable to|not possible to|impossible to)\s+(?:be\s+)?"
    r"(?:assess|assessed|determine|determined|tell|evaluate|evaluated|say|identify|identified|see)\b"
    r"|\bdon'?t know\b|\bdo not know\b|\bnot sure\b|\buncertain\b|\bindeterminate\b"
    r"|\btoo (?:blurred|blurry|noisy|dark|faint|grainy|small|low)\b"
    r"|\b(?:poor|low|insufficient|inadequate|limited|suboptimal|degraded) (?:image )?quality\b"
    r"|\bnon-?diagnostic\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def words(text: str) -> list[str]:
    """The normalised words of a text, in order (function words kept)."""
    flat = unicodedata.normalize("NFKC", text).casefold().replace("'", "")
    found: list[str] = []
    for word in _WORD.findall(flat):
        if _CJK.search(word):
            found.extend(word)  # each CJK character is a word
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            found.append(word[:-1])
        else:
            found.append(word)
    return found


def content_words(text: str) -> list[str]:
    return [word for word in words(text) if word not in STOP_WORDS and not word.isdigit()]


def negated_words(text: str) -> set[str]:
    """Content words within ``NEGATION_REACH`` words after a negation."""
    sequence = words(text)
    negated: set[str] = set()
    for index, word in enumerate(sequence):
        if word in NEGATIONS:
            negated.update(
                later
                for later in sequence[index + 1 : index + 1 + NEGATION_REACH]
                if later not in STOP_WORDS and later not in NEGATIONS
            )
    return negated


def abstains(text: str) -> bool:
    return ABSTENTION.search(unicodedata.normalize("NFKC", text)) is not None


def bucket(value: float, buckets: tuple[tuple[float, int], ...]) -> int:
    for threshold, score in buckets:
        if value >= threshold:
            return score
    return 0


def _bag_overlap(candidate: list[str], reference: list[str]) -> int:
    remaining = list(reference)
    shared = 0
    for word in candidate:
        if word in remaining:
            remaining.remove(word)
            shared += 1
    return shared


def contradiction(candidate: str, reference: str) -> str | None:
    """Why the candidate contradicts the reference, or None."""
    answer, truth = words(candidate), words(reference)
    if truth and truth[0] in {"yes", "no"} and answer and answer[0] in {"yes", "no"}:
        return None if truth[0] == answer[0] else f"answers {answer[0]!r} to {truth[0]!r}"
    denied, refused = negated_words(candidate), negated_words(reference)
    asserted_answer = set(content_words(candidate)) - denied - NEGATIONS
    asserted_truth = set(content_words(reference)) - refused - NEGATIONS
    clash = sorted((denied & asserted_truth) | (refused & asserted_answer))
    return f"negates what the other asserts: {', '.join(clash)}" if clash else None


def text_verdict(candidate: str, reference: str) -> tuple[int, str]:
    """GT_final of ``candidate`` against ``reference`` (module docstring)."""
    if " ".join(words(candidate)) == " ".join(words(reference)):
        return 4, "the same text as the reference once normalised"
    if abstains(candidate):
        if abstains(reference):
            return 4, "abstains, as the reference does"
        return ABSTENTION_TEXT_SCORE, "abstains where the reference is definite"
    clash = contradiction(candidate, reference)
    if clash:
        return 0, f"contradicts the reference ({clash})"
    answer, truth = content_words(candidate), content_words(reference)
    shared = _bag_overlap(answer, truth)
    precision = shared / len(answer) if answer else 0.0
    recall = shared / len(truth) if truth else 0.0
    beta2 = F_BETA**2
    f_beta = (1 + beta2) * precision * recall / (beta2 * precision + recall) if shared else 0.0
    score = bucket(f_beta, SHARE_BUCKETS)
    return score, (
        f"content-word F{F_BETA:g} {f_beta:.2f} with the reference (precision {precision:.2f}, "
        f"recall {recall:.2f}: {shared} of {len(truth)} reference words)"
    )


@dataclass(frozen=True)
class Sight:
    """What the stand-in measures of one image."""

    clarity: float
    contrast: float

    @property
    def quality(self) -> float:
        return self.clarity * min(1.0, self.contrast / FULL_CONTRAST)


def sight_of(picture: Image.Image) -> Sight:
    return Sight(clarity(measure(picture)), float(np.std(grey_values(picture))))


def vision_verdict(
    candidate: str, question: str, known: str | None, sights: list[Sight]
) -> tuple[int, str]:
    """VA_answer or RVF_trace of ``candidate`` (module docstring); ``known``: the reference
    answer standing for what the image shows, None when unknown."""
    quality = min(sight.quality for sight in sights)
    cap = bucket(quality, SIGHT_BUCKETS)
    seen = (
        f"image quality {quality:.3f} (clarity x contrast factor; least of {len(sights)}), "
        f"cap {cap}"
    )
    claims = [word for word in content_words(candidate) if word not in META_WORDS]
    if not claims:
        if not abstains(candidate):
            return 0, f"makes no claim about the image and does not abstain; {seen}"
        if cap <= 2:
            return ABSTENTION_ON_POOR_IMAGE, f"justified abstention: the image is poor; {seen}"
        return ABSTENTION_ON_CLEAR_IMAGE, f"abstains though the image is clear; {seen}"
    if known is None:
        claimed = UNCHECKED_CLAIMS_SCORE
        support = "its claims cannot be checked (no known content for this question)"
    else:
        allowed = set(content_words(known)) | set(content_words(question))
        supported = sum(1 for word in claims if word in allowed)
        share = supported / len(claims)
        claimed = bucket(share, SHARE_BUCKETS)
        support = f"{supported} of {len(claims)} claim words supported by the known content"
    return min(claimed, cap), f"{support} -> {claimed}; {seen}"


Templates = dict[JudgeKind, re.Pattern[str]]


def template_pattern(text: str) -> re.Pattern[str]:
    """A pattern that reads a rendered judge user template back into its placeholders."""
    parts: list[str] = []
    seen_fence = False
    position = 0
    for match in re.finditer(r"\$\{(\w+)\}", text):
        parts.append(re.escape(text[position : match.start()]))
        name = match.group(1)
        if name == "fence_id":
            parts.append(r"(?P=fence_id)" if seen_fence else r"(?P<fence_id>id-[0-9a-f]{20})")
            seen_fence = True
        elif f"(?P<{name}>" in "".join(parts):
            parts.append(f"(?P={name})")
        else:
            parts.append(f"(?P<{name}>.*?)")
        position = match.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


def load_patterns(prompts: str | None) -> Templates:
    try:
        templates = JudgeTemplates.load(prompts)
    except Exception as error:  # a TaskArgumentError or an unreadable file, named
        raise UserInputError(
            f"medreason/reference-judge: -M prompts={prompts} cannot be read as a judge "
            f"prompt set ({error})"
        ) from error
    return {kind: template_pattern(templates.user(kind).text) for kind in JUDGE_KINDS}


def read_references(
    cases: str | None, answers: str | None, model: str = "reference-judge"
) -> dict[str, list[str]]:
    """Each open case's reference answers by its question's whitespace-flattened text."""
    if not cases and not answers:
        return {}
    if not (cases and answers):
        raise UserInputError(
            f"medreason/{model}: give both -M cases=<cases.json> and "
            "-M answers=<ground_truth.json>, or neither"
        )
    try:
        case_rows = json.loads(Path(cases).read_text(encoding="utf-8"))
        truth_rows = json.loads(Path(answers).read_text(encoding="utf-8"))
        case_list = case_rows["cases"] if isinstance(case_rows, dict) else case_rows
        truth_list = truth_rows["cases"] if isinstance(truth_rows, dict) else truth_rows
        truth = {str(row["case_id"]).strip(): row.get("answer") for row in truth_list}
        references: dict[str, list[str]] = {}
        for row in case_list:
            answer = truth.get(str(row["case_id"]).strip())
            if row.get("options") or not isinstance(answer, str) or not answer.strip():
                continue
            question = " ".join(str(row["question"]).split())
            known = references.setdefault(question, [])
            if answer not in known:
                known.append(answer)
        return references
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise UserInputError(
            f"medreason/{model}: -M cases={cases} / -M answers={answers} cannot be "
            f"read as MedReason cases and ground truth ({type(error).__name__}: {error})"
        ) from error


def image_bytes(image: str) -> bytes:
    """The bytes of an image a model is sent: Inspect sends data URIs; a path is what a
    task put in the sample itself."""
    if image.startswith("data:"):
        return base64.b64decode(image.partition(",")[2], validate=False)
    return Path(image).read_bytes()


def _request(messages: list[ChatMessage]) -> ChatMessageUser | None:
    # The judge's request is its first user turn; later ones are retry corrections.
    return next((m for m in messages if isinstance(m, ChatMessageUser)), None)


def _pictures(message: ChatMessageUser) -> list[Image.Image] | str:
    pictures: list[Image.Image] = []
    parts = [] if isinstance(message.content, str) else message.content
    for index, part in enumerate(parts, start=1):
        if isinstance(part, ContentImage):
            try:
                with Image.open(io.BytesIO(image_bytes(part.image))) as picture:
                    picture.load()
                    pictures.append(picture.copy())
            except (OSError, ValueError, binascii.Error, UnidentifiedImageError) as error:
                return f"image {index} cannot be read ({type(error).__name__})"
    return pictures


def unusable(reason: str) -> str:
    """A reply without a verdict: the judge machinery leaves the component unscored."""
    return f"{REFERENCE_JUDGE_NOTE} No verdict: {reason}."


def reference_judge_reply(
    messages: list[ChatMessage], patterns: Templates, references: dict[str, list[str]]
) -> str:
    """The stand-in's reply to one judge request (module docstring)."""
    request = _request(messages)
    if request is None:
        return unusable("the request has no user turn")
    text = request.text
    matched = next(
        ((kind, found) for kind, pattern in patterns.items() if (found := pattern.match(text))),
        None,
    )
    if matched is None:
        return unusable(
            "the request matches none of the open-ended judge prompts (judge_gt_user, "
            "judge_va_user, judge_rvf_user); with -T judge_prompts=DIR give the judge "
            "-M prompts=DIR"
        )
    kind, found = matched
    fields = found.groupdict()
    candidate = fields.get("candidate_answer") or fields.get("candidate_trace") or ""
    if "fence_id" in fields and fields["fence_id"] != fence_id(candidate):
        return unusable("the candidate's markers do not carry its own fence id")
    question = " ".join(fields.get("question", "").split())
    if kind == "gt":
        reference = fields.get("reference_answer", "")
        if not reference.strip():
            return unusable("the request has no reference answer")
        score, why = text_verdict(candidate, reference)
    else:
        pictures = _pictures(request)
        if isinstance(pictures, str):
            return unusable(pictures)
        if not pictures:
            return unusable(f"the {kind} judge was sent no image")
        known = references.get(question, [])
        score, why = vision_verdict(
            candidate,
            question,
            known[0] if len(known) == 1 else None,
            [sight_of(picture) for picture in pictures],
        )
        if len(known) > 1:
            why += f" ({len(known)} open cases ask this question with different references)"
    return json.dumps({"score": score, "rationale": f"{REFERENCE_JUDGE_NOTE} {kind}: {why}."})
