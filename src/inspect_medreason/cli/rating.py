"""People rate what the judges rated: ``medreason rate`` and the ratings files it collects.

``medreason rate`` writes one self-contained HTML page (images as data URIs, script and
style inline, a content security policy that forbids any network request) showing a
stratified, seeded sample of judged open-ended cases one at a time: the image(s), the
question, the reference, the model's final answer and reasoning trace, and the rubric's 0-4
anchors for GT, VA and RVF, read from the judges' own prompt files (``core/prompts``) so the
raters and the judges are held to the same words. The rater never sees a judge's score or
rationale, the model's name or the log: the page's data holds only the texts shown and an
opaque id per case.

Blinding and the way back. A case's id is a digest of the page id and the (eval id, sample
id, epoch) of the logged sample; the page id is a digest of the seed and the sampled
samples. Neither can be read backwards from the page, and ``medreason`` maps a ratings file
back to its samples by recomputing the digests over the logs it is given with the file (the
logs are the key: no key file to keep or lose). A ratings file whose cases do not map to
the logs given is refused, naming them.

The ratings file (``RATINGS_FORMAT`` version 1), what the page's Save button downloads::

    {"format": "medreason-ratings", "version": 1, "page_id": "...", "rater": "alice",
     "saved_at": "2026-...Z",
     "ratings": [{"case": "c...", "gt": 3, "va": 2, "rvf": 4, "rated_at": "2026-...Z"},
                 {"case": "c...", "skipped": "image does not load", "rated_at": "..."}]}

Every problem of every file is listed at once (unknown keys, a score that is not a whole
number 0-4, a case rated twice, files of different pages, one rater in two files).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log_samples_by_id
from inspect_ai.model import ChatMessageUser, ContentImage
from PIL import Image, UnidentifiedImageError

from inspect_medreason.cli.challenge import ChallengeError
from inspect_medreason.cli.log_reading import (
    LoggedSample,
    UnreadableSample,
    log_header,
    logged_samples,
    task_record,
)
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.image_confinement import ConfinedImages, run_data_folder
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.lineage import FAMILY_WORDS, model_families
from inspect_medreason.core.user_files import MAX_RATINGS_BYTES, UserFileError, read_user_bytes

RATINGS_FORMAT = "medreason-ratings"
RATINGS_VERSION = 1
PAGE_FORMAT = "medreason-rating-page"
PAGE_VERSION = 1
# What a rater scores, and the log component each is compared with.
RATED_COMPONENTS = {"gt": "gt_final", "va": "va_answer", "rvf": "rvf_trace"}
# The judges' rubrics, whose anchors the raters see (one source of the words for both).
RUBRIC_TEMPLATES = {"gt": "judge_gt_system", "va": "judge_va_system", "rvf": "judge_rvf_system"}
RUBRIC_TITLES = {
    "gt": ("GT", "the final answer against the reference answer (ignore the image)"),
    "va": ("VA", "the final answer against the image(s) (ignore the reference)"),
    "rvf": ("RVF", "the reasoning trace's visual assertions against the image(s)"),
}
PAGE_TEMPLATE = "rating_page.html"
DATA_MARKER = "/*PAGE_DATA*/"
KEY_MARKER = "<!--PAGE_KEY-->"
SCORER = "open_ended_scorer"
# Breakdown fields a sample carries (core.metrics.CASE_GROUP_FIELDS): the strata, with the
# model when several models' logs are rated together.
STRATUM_FIELDS = ("modality", "task")
RATINGS_KEYS = {
    "format",
    "version",
    "page_id",
    "rubric_sha256",
    "page_cases",
    "rater",
    "ratings",
    "saved_at",
}
ENTRY_KEYS = {"case", "gt", "va", "rvf", "skipped", "rated_at"}
# A ratings file's limit is core.user_files.MAX_RATINGS_BYTES.
MAX_RATER_CHARS = 200
# Image formats every browser shows; any other decodable image is converted to PNG.
BROWSER_FORMATS = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
}
MAX_IMAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, order=True)
class SampleRef:
    """A logged sample, across copies and renames of its log file."""

    eval_id: str
    sample_id: str  # JSON of the id: 1 and "1" stay apart
    epoch: int


def page_digest(seed: int, refs: Iterable[SampleRef]) -> str:
    payload = json.dumps([seed, sorted((r.eval_id, r.sample_id, r.epoch) for r in refs)])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def case_digest(page_id: str, ref: SampleRef) -> str:
    payload = "\0".join((page_id, ref.eval_id, ref.sample_id, str(ref.epoch)))
    return "c" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:15]


@dataclass
class Candidate:
    """A judged open-ended case that can be rated."""

    ref: SampleRef
    path: Path
    sample_id: int | str
    model: str
    names: set[str]  # the model's and the judges' names, blanked from the shown texts
    stratum: tuple[str, ...]
    question: str
    context: str
    reference: str
    answer: str
    trace: str
    metadata: dict[str, Any]
    # the judges' component values as the log scored them (never shown on the page), and
    # the components a rule scored rather than a judge
    values: dict[str, float] = field(default_factory=dict)
    by_rule: frozenset[str] = frozenset()
    rubric: Rubric | None = None  # the rubric the log's judges were given


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _model_names(header: EvalLog) -> set[str]:
    names = {str(header.eval.model)}
    for config in (header.eval.model_roles or {}).values():
        names.add(str(getattr(config, "model", config)))
    return {n for n in names if n and n != "none/none"}


def collect_candidates(logs: Sequence[Path]) -> tuple[list[Candidate], list[str]]:
    """Every judged open-ended case of the logs with an answer and a reference to rate, and
    notes on what was left out and why."""
    candidates: list[Candidate] = []
    notes: list[str] = []
    seen: dict[str, Path] = {}
    for path in logs:
        try:
            header = log_header(path)
            samples = [s for s in logged_samples(path, header)]
        except Exception as error:  # as the leaderboard: a corrupt log is left out, named
            notes.append(f"skipped, {path}: not a readable eval log ({describe_error(error)})")
            continue
        try:
            judges_rubric = log_rubric(header)
        except ValueError as error:
            notes.append(f"skipped, {path}: {error}")
            continue
        eval_id = header.eval.eval_id
        if eval_id in seen:
            notes.append(f"skipped, {path}: the same run as {seen[eval_id]} (a copy)")
            continue
        seen[eval_id] = path
        left_out: Counter[str] = Counter()
        names = _model_names(header)
        for sample in samples:
            if isinstance(sample, UnreadableSample):
                notes.append(f"{path}: {sample.describe()}")
                continue
            reason = _unratable(sample)
            if reason:
                left_out[reason] += 1
                continue
            score = sample.scores[SCORER]
            meta = score.metadata or {}
            candidates.append(
                Candidate(
                    ref=SampleRef(eval_id, json.dumps(sample.id), sample.epoch),
                    path=path,
                    sample_id=sample.id,
                    model=str(header.eval.model),
                    names=names,
                    stratum=tuple(str(sample.metadata.get(f) or "?") for f in STRATUM_FIELDS),
                    question=_text(sample.metadata.get("question")),
                    context=_text(sample.metadata.get("context")),
                    reference=_text(sample.metadata.get("reference_answer")),
                    answer=_text(meta.get("answer")),
                    trace=_text(meta.get("reasoning_trace")),
                    metadata=sample.metadata,
                    values=_values(score.value),
                    by_rule=frozenset(
                        name
                        for name, record in meta["judges"].items()
                        if isinstance(record, dict) and record.get("by_rule")
                    ),
                    rubric=judges_rubric,
                )
            )
        for reason, count in sorted(left_out.items()):
            notes.append(f"{path}: {count} case(s) left out: {reason}")
    return candidates, notes


def _values(value: Any) -> dict[str, float]:
    """The numeric components of an open-ended score (NaN for an unscored one)."""
    if not isinstance(value, dict):
        return {}
    return {
        name: float(number)
        for name, number in value.items()
        if isinstance(number, int | float) and not isinstance(number, bool)
    }


def _unratable(sample: LoggedSample) -> str | None:
    score = sample.scores.get(SCORER)
    if score is None:
        return "not an open-ended case judged in this log"
    meta = score.metadata or {}
    if not isinstance(meta.get("judges"), dict):
        return "no judge record"
    if sample.error:
        return "the sample failed"
    if not _text(meta.get("answer")).strip():
        return "empty final answer (scored 0 by rule, no judge's opinion to check)"
    if not _text(sample.metadata.get("reference_answer")).strip():
        return "no reference answer (GT cannot be rated)"
    if not _text(sample.metadata.get("question")).strip():
        return "no question recorded"
    return None


def stratified_sample(candidates: list[Candidate], count: int, seed: int) -> list[Candidate]:
    """``count`` cases drawn without replacement, stratified level by level: first by model
    (when several models' logs are given), then by modality, then by task. At each level
    every group gets its proportional share by largest remainder (ties broken at random)
    and at least one case while the count allows; within a stratum the cases are drawn at
    random. The result is in a shuffled order (a rater sees models and strata interleaved,
    never in blocks). The same candidates, count and seed give the same sample whatever the
    order of the logs."""
    rng = random.Random(seed)
    several_models = len({c.model for c in candidates}) > 1
    ordered = sorted(candidates, key=lambda c: c.ref)
    keys = [((c.model,) if several_models else ()) + c.stratum for c in ordered]
    chosen = _draw(list(range(len(ordered))), keys, 0, min(count, len(ordered)), rng)
    result = [ordered[i] for i in chosen]
    rng.shuffle(result)
    return result


def _draw(
    members: list[int], keys: list[tuple[str, ...]], level: int, count: int, rng: random.Random
) -> list[int]:
    if not members or count <= 0:
        return []
    if level == len(keys[members[0]]):
        picked = list(members)
        rng.shuffle(picked)
        return picked[:count]
    groups: dict[str, list[int]] = defaultdict(list)
    for member in members:
        groups[keys[member][level]].append(member)
    names = sorted(groups)
    rng.shuffle(names)  # the order ties are broken in
    shares = {name: count * len(groups[name]) / len(members) for name in names}
    taken = {name: int(shares[name]) for name in names}
    if count >= len(names):  # every group shown at least once
        taken = {name: max(taken[name], 1) for name in names}
    while sum(taken.values()) > count:  # the floor of one overdrew: trim the most favoured
        favoured = max(names, key=lambda n: taken[n] - shares[n])
        taken[favoured] -= 1
    by_remainder = sorted(names, key=lambda n: -(shares[n] - taken[n]))
    while sum(taken.values()) < count:
        for name in by_remainder:
            if sum(taken.values()) < count and taken[name] < len(groups[name]):
                taken[name] += 1
    return [
        member
        for name in names
        for member in _draw(groups[name], keys, level + 1, taken[name], rng)
    ]


@dataclass(frozen=True)
class Rubric:
    """What the raters read: per component the 0-4 anchors and the uncertainty rule, from
    the judges' own system templates as the log recorded them, and one digest of the three
    templates (the page and the ratings file carry it; ``agreement`` and ``calibrate``
    compare ratings only with judges that used the same rubric)."""

    components: dict[str, Any]
    sha256: str


def rubric_digest(template_digests: dict[str, str]) -> str:
    """One digest of the rubric's three system templates (each by its own sha256)."""
    listing = "".join(f"{name}:{template_digests[name]}\n" for name in sorted(template_digests))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def log_rubric(header: EvalLog) -> Rubric:
    """The rubric the log's judges were given: each judge system template's text as the run
    recorded it (``-T judge_prompts=DIR`` replaces the built-in ones), checked against its
    recorded digest. ValueError saying what is missing (a log of no judged run, an edited
    one). The template's file path is never kept: it is the organizer's, not the raters'."""
    record = task_record(header)
    templates = record.judges.templates if record.judges else {}
    components: dict[str, Any] = {}
    digests: dict[str, str] = {}
    for key, name in RUBRIC_TEMPLATES.items():
        template = templates.get(name)
        text = (template.model_extra or {}).get("text") if template is not None else None
        if not isinstance(text, str) or not text.strip():
            raise ValueError(
                f"the judges' {name} template's text is not recorded in the log (a run "
                "without judges, or an edited log): the page cannot show the raters the "
                "judges' rubric"
            )
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if template is not None and template.sha256 and template.sha256 != digest:
            raise ValueError(
                f"the judges' {name} template's text does not match its recorded digest "
                "(an edited log)"
            )
        anchors = [
            [int(m.group(1)), m.group(2).strip()]
            for m in re.finditer(r"^([0-4]) - (.+)$", text, re.MULTILINE)
        ]
        if sorted(a[0] for a in anchors) != [0, 1, 2, 3, 4]:
            raise ValueError(
                f"the judges' {name} template has no 0-4 anchors the page can show (one "
                "line each, '4 - ...' to '0 - ...')"
            )
        uncertainty = next(
            (p.strip() for p in text.split("\n\n") if p.startswith("Uncertainty:")), ""
        )
        title, compares = RUBRIC_TITLES[key]
        components[key] = {
            "title": title,
            "compares": compares,
            "anchors": sorted(anchors, reverse=True),
            "uncertainty": uncertainty,
            "sha256": digest,
        }
        digests[name] = digest
    return Rubric(components, rubric_digest(digests))


# Words a model may be named after that are also ordinary words of a reply (English, the
# clinic, model-naming jargon): never blanked, or the raters would read a different reply
# from the judges' (a fine-tune called ".../chest" must not blank "chest"). A name of two
# letters or fewer is blanked only with a digit in it ("o1"), never a bare word ("ct").
ORDINARY_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "model",
        "models",
        "base",
        "chat",
        "instruct",
        "it",
        "sft",
        "dpo",
        "rl",
        "vision",
        "vl",
        "visual",
        "language",
        "lm",
        "llm",
        "large",
        "small",
        "mini",
        "tiny",
        "nano",
        "pro",
        "plus",
        "max",
        "ultra",
        "turbo",
        "lite",
        "light",
        "flash",
        "preview",
        "latest",
        "default",
        "local",
        "custom",
        "test",
        "demo",
        "assistant",
        "expert",
        "agent",
        "reasoner",
        "reasoning",
        "thinking",
        "open",
        "free",
        "meta",
        "palm",
        "phi",
        "med",
        "medical",
        "bio",
        "clinical",
        "health",
        "doctor",
        "radiology",
        "radiologist",
        "report",
        "answer",
        "image",
        "images",
        "scan",
        "scans",
        "chest",
        "lung",
        "lungs",
        "brain",
        "heart",
        "liver",
        "kidney",
        "bone",
        "bones",
        "head",
        "neck",
        "spine",
        "abdomen",
        "pelvis",
        "breast",
        "skin",
        "eye",
        "eyes",
        "ct",
        "mri",
        "mr",
        "pet",
        "us",
        "xray",
        "x-ray",
        "ray",
        "normal",
        "abnormal",
        "finding",
        "findings",
        "mass",
        "nodule",
        "lesion",
        "fracture",
        "tumor",
        "tumour",
        "cancer",
        "diagnosis",
        "left",
        "right",
        "upper",
        "lower",
        "anterior",
        "posterior",
    ]
)


@dataclass(frozen=True)
class Blinding:
    """How a case's model reply is blinded: the model's and the judges' names (whole, in
    any spelling of their separators: "Claude-3.5-Sonnet" for claude-3-5-sonnet-20241022,
    "GPT 4o" for gpt-4o) and the usual names of their families ("ChatGPT", "OpenAI", "o1"
    for the OpenAI family) become ``[model]``, where distinctive; only the model's final
    answer and reasoning trace are touched, never the question or the reference."""

    names: tuple[str, ...]  # Inspect model names: the tested model's and the judges'

    def patterns(self, ordinary: set[str]) -> list[re.Pattern[str]]:
        """The patterns to blank, longest first; ``ordinary``: the case's own words (its
        question's, context's and reference's), which are never a giveaway."""
        found: dict[str, re.Pattern[str]] = {}
        for name in self.names:
            for part in {name, *name.split("/")[1:]}:
                tokens = [t for t in re.split(r"[^0-9A-Za-z]+", part) if t]
                # a release date ("20241022") is not said in a reply; the rest of the name is
                while len(tokens) > 1 and re.fullmatch(r"\d{6,}", tokens[-1]):
                    tokens.pop()
                if tokens and _distinctive(tokens, ordinary):
                    spelled = r"[\s._/-]*".join(map(re.escape, tokens))
                    found[spelled.lower()] = re.compile(
                        rf"(?<![0-9A-Za-z]){spelled}(?![0-9A-Za-z])", re.IGNORECASE
                    )
            family_words = (w for f in sorted(model_families(name)) for w in FAMILY_WORDS[f])
            for word in family_words:
                if _distinctive([word], ordinary):
                    # the family's word with a version attached: "GPT 4o", "gpt-4.1", "o3"
                    spelled = re.escape(word) + r"(?:[\s._-]?\d[0-9A-Za-z.]*)?"
                    found[spelled.lower()] = re.compile(
                        rf"(?<![0-9A-Za-z]){spelled}(?![0-9A-Za-z])", re.IGNORECASE
                    )
        return [found[key] for key in sorted(found, key=len, reverse=True)]

    def blank(self, text: str, ordinary: set[str]) -> str:
        for pattern in self.patterns(ordinary):
            text = pattern.sub("[model]", text)
        return text


def _distinctive(tokens: list[str], ordinary: set[str]) -> bool:
    """A name gives its model away unless it is an ordinary word (the stop list, or a word
    of the case's own question or reference), or two letters or fewer without a digit."""
    if len(tokens) == 1:
        word = tokens[0].lower()
        if word in ORDINARY_WORDS or word in ordinary:
            return False
        return any(c.isdigit() for c in word) if len(word) <= 2 else True
    return any(_distinctive([t], ordinary) for t in tokens)


def words_of(*texts: str) -> set[str]:
    return {w.lower() for text in texts for w in re.findall(r"[0-9A-Za-z]+", text)}


def names_a_family(text: str, ordinary: set[str]) -> bool:
    """Whether a reply names any model family (what blanking may have missed)."""
    for words in FAMILY_WORDS.values():
        for word in words:
            if _distinctive([word], ordinary) and re.search(
                rf"(?<![0-9A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE
            ):
                return True
    return False


@dataclass
class PageImages:
    """Each chosen case's images as data URIs, and how many were made smaller."""

    by_case: dict[SampleRef, list[str]]
    downscaled: int = 0


def _browser_image(data: bytes, origin: str, max_px: int | None) -> tuple[str, bool]:
    """A data URI the browser can show, from image bytes checked by decoding them (what a
    log holds as an image could be anything: an edited log), and whether it was scaled
    down to ``max_px`` on its long side (the page is mailed to raters; a 1000x1000 PNG is
    4 MB as text, and the log keeps the original)."""
    if len(data) > MAX_IMAGE_BYTES:
        raise ValueError(f"{origin}: {len(data):,} bytes, more than a page should embed")
    downscaled = False
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.load()
            kind = opened.format or ""
            image: Image.Image = opened
            if max_px is not None and max(image.size) > max_px:
                image.thumbnail((max_px, max_px), Image.Resampling.LANCZOS)
                downscaled = True
            if downscaled or kind not in BROWSER_FORMATS:
                kind = kind if kind in ("PNG", "JPEG", "WEBP") else "PNG"
                if kind == "JPEG" and image.mode not in ("L", "RGB"):
                    image = image.convert("RGB")
                elif image.mode not in ("L", "LA", "RGB", "RGBA", "P", "I;16"):
                    image = image.convert("RGBA" if "A" in image.mode else "RGB")
                converted = io.BytesIO()
                image.save(converted, format=kind, **({"quality": 90} if kind == "JPEG" else {}))
                data = converted.getvalue()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        raise ValueError(f"{origin}: not an image ({describe_error(error, 120)})") from error
    uri = f"data:{BROWSER_FORMATS[kind]};base64,{base64.b64encode(data).decode('ascii')}"
    return uri, downscaled


def _logged_images(path: Path, candidates: list[Candidate]) -> dict[SampleRef, list[bytes]]:
    """The images each case's input holds in the log (data URIs), by sample."""
    keys = [(c.sample_id, c.ref.epoch) for c in candidates]
    found: dict[SampleRef, list[bytes]] = {}
    by_key = {(c.sample_id, c.ref.epoch): c.ref for c in candidates}
    for sample in read_eval_log_samples_by_id(str(path), keys, resolve_attachments=True):
        images: list[bytes] = []
        for message in sample.input if isinstance(sample.input, list) else []:
            if not isinstance(message, ChatMessageUser) or isinstance(message.content, str):
                continue
            for content in message.content:
                if isinstance(content, ContentImage) and content.image.startswith("data:"):
                    _, _, encoded = content.image.partition(",")
                    try:
                        images.append(base64.b64decode(encoded, validate=True))
                    except (binascii.Error, ValueError):
                        images.append(b"")  # checked (and refused) by _browser_image
        found[by_key[(sample.id, sample.epoch)]] = images
    return found


def case_images(
    candidates: list[Candidate], data_dir: Path | None, max_px: int | None = None
) -> PageImages:
    """Each chosen case's images as data URIs: the ones its log holds, else (a blind-control
    run, a log written without images) its image files read again by the one confinement
    rule (``core.image_confinement``: ``data_dir``, else the folder the run recorded, never
    one a sample names, each file checked against its digest recorded at load). A case
    whose images cannot be found, checked or decoded is a problem, all listed."""
    problems: list[str] = []
    result = PageImages({})
    by_log: dict[Path, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_log[candidate.path].append(candidate)
    confined = ConfinedImages(data_dir)
    for path, group in by_log.items():
        try:
            logged = _logged_images(path, group)
            run_folder = run_data_folder(log_header(path))
        except Exception as error:  # the samples were readable a moment ago: say what failed
            problems.append(f"{path}: its samples' images cannot be read ({describe_error(error)})")
            continue
        for candidate in group:
            case = f"{path}: case {candidate.sample_id!r}"
            wanted = [str(p) for p in candidate.metadata.get("image_paths") or []]
            raw = logged.get(candidate.ref) or []
            try:
                if raw and (not wanted or len(raw) == len(wanted)):
                    shown = [
                        _browser_image(data, f"{case}: logged image {n}", max_px)
                        for n, data in enumerate(raw, 1)
                    ]
                elif not wanted:
                    shown = []  # a text-only case
                else:
                    shown = [
                        _browser_image(data, f"{case}: {rel}", max_px)
                        for rel, data in zip(
                            wanted, confined.read(path, run_folder, candidate.metadata), strict=True
                        )
                    ]
                result.by_case[candidate.ref] = [uri for uri, _ in shown]
                result.downscaled += sum(smaller for _, smaller in shown)
            except (ImagePathError, ValueError, OSError) as error:
                problems.append(f"{case}: its image cannot be shown ({error})")
    if problems:
        raise ChallengeError([*problems, "a rater must see the images the judges saw"])
    return result


def blinded_reply(candidate: Candidate) -> tuple[str, str]:
    """A case's final answer and reasoning trace as the raters read them (``Blinding``)."""
    blinding = Blinding(tuple(sorted(candidate.names)))
    ordinary = words_of(candidate.question, candidate.context, candidate.reference)
    return blinding.blank(candidate.answer, ordinary), blinding.blank(candidate.trace, ordinary)


def page_data(
    chosen: list[Candidate], seed: int, images: dict[SampleRef, list[str]], rubric: Rubric
) -> dict[str, Any]:
    """What the page embeds: the texts shown, images, the judges' rubric and its digest,
    opaque ids. Nothing else of the log (no score, rationale, model, role, file name, eval
    id, sample id or template path). The question, context and reference are shown as the
    judges read them; the model's reply is blinded (``Blinding``)."""
    page_id = page_digest(seed, (c.ref for c in chosen))
    replies = [blinded_reply(c) for c in chosen]
    return {
        "format": PAGE_FORMAT,
        "version": PAGE_VERSION,
        "page_id": page_id,
        "ratings_format": RATINGS_FORMAT,
        "ratings_version": RATINGS_VERSION,
        "rubric": rubric.components,
        "rubric_sha256": rubric.sha256,
        "cases": [
            {
                "case": case_digest(page_id, c.ref),
                "question": c.question,
                "context": c.context,
                "reference": c.reference,
                "answer": answer,
                "trace": trace,
                "images": images.get(c.ref, []),
            }
            for c, (answer, trace) in zip(chosen, replies, strict=True)
        ],
    }


def _script_safe_json(value: Any) -> str:
    """JSON that cannot end the ``<script>`` element holding it, whatever the texts say."""
    text = json.dumps(value, ensure_ascii=False)
    for character, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(character, escape)
    return text


def render_page(data: dict[str, Any], key: Sequence[str] = ()) -> str:
    """The page, with ``key``: notes for the organizer in an HTML comment at its top (a
    browser never shows it; nothing in it may unblind a rater who reads the source)."""
    template = (files("inspect_medreason") / "cli" / PAGE_TEMPLATE).read_text(encoding="utf-8")
    for marker in (DATA_MARKER, KEY_MARKER):
        if template.count(marker) != 1:
            raise RuntimeError(f"{PAGE_TEMPLATE}: expected one {marker} marker")
    # "--" cannot stand inside a comment, and "<" ">" no one needs there
    lines = [re.sub(r"-{2,}|[<>]", "-", line) for line in key] or ["nothing to note"]
    comment = "<!-- The page's key, for the organizer (never shown to raters):\n" + "".join(
        f"  - {line}\n" for line in lines
    )
    return template.replace(KEY_MARKER, comment + "-->").replace(
        DATA_MARKER, _script_safe_json(data)
    )


@dataclass
class RatingRound:
    """Several raters' ratings of one page, read and checked."""

    page_id: str
    rubric_sha256: str = ""  # the rubric the raters read (the judges' it was made from)
    page_cases: int = 0  # the page's number of cases
    # rater -> case -> {"gt": 0-4, "va": 0-4, "rvf": 0-4}
    scores: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)  # rater -> case -> why
    files: dict[str, Path] = field(default_factory=dict)  # rater -> file

    @property
    def cases(self) -> set[str]:
        return {case for by_case in self.scores.values() for case in by_case}

    def described_files(self) -> str:
        return ", ".join(str(self.files[r]) for r in sorted(self.files))


def _load_json(path: Path, problems: list[str]) -> Any:
    try:
        # a regular file within the limit, never a FIFO or a link to a device; utf-8-sig:
        # a file opened and saved again by a Windows editor starts with a byte order mark
        data = read_user_bytes(path, MAX_RATINGS_BYTES, "ratings file")
        return json.loads(data.decode("utf-8-sig"))
    except UserFileError as error:
        problems.append(str(error))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        problems.append(f"{path}: not a readable JSON file ({describe_error(error, 200)})")
    except RecursionError:
        problems.append(f"{path}: JSON nested too deeply to read")
    return None


def _is_score(value: Any) -> bool:
    return type(value) is int and 0 <= value <= 4


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:40] + "..."


def rater_key(name: str) -> str:
    """A rater's name as names are compared: trimmed and case-folded ("Alice " is alice)."""
    return " ".join(name.split()).casefold()


# A page's case ids in the logs given, by page id (``None``: the logs were not given).
KnownCases = Callable[[str], set[str]] | None


def read_rater_file(
    path: Path, problems: list[str], known: KnownCases = None
) -> RatingRound | None:
    """One rater's file, every problem appended to ``problems`` (None when unusable). With
    ``known``, a case id that is not a case of the file's page in the logs is one of the
    file's problems, listed with the others."""
    document = _load_json(path, problems)
    if document is None:
        return None
    if not isinstance(document, dict):
        problems.append(
            f"{path}: not a ratings file (a JSON object with format {RATINGS_FORMAT!r})"
        )
        return None
    if document.get("format") != RATINGS_FORMAT:
        problems.append(
            f"{path}: format is {_brief(document.get('format'))}, not {RATINGS_FORMAT!r}: not a "
            "ratings file saved by a medreason rating page"
        )
        return None
    start = len(problems)
    version = document.get("version")
    if type(version) is not int or version != RATINGS_VERSION:  # true == 1 in Python
        problems.append(
            f"{path}: version {_brief(version)}; this medreason reads version {RATINGS_VERSION}"
        )
    unknown = sorted(set(document) - RATINGS_KEYS)
    if unknown:
        problems.append(f"{path}: unknown key(s) {', '.join(map(repr, unknown))}")
    page_id, rater = document.get("page_id"), document.get("rater")
    if not isinstance(page_id, str) or not page_id.strip():
        problems.append(f"{path}: page_id is {_brief(page_id)}, not the page's id")
        page_id = None
    if not isinstance(rater, str) or not rater.strip() or len(rater) > MAX_RATER_CHARS:
        problems.append(
            f"{path}: rater is {_brief(rater)}, not a name (1-{MAX_RATER_CHARS} characters)"
        )
    rubric = document.get("rubric_sha256")
    if not isinstance(rubric, str) or not re.fullmatch(r"[0-9a-f]{64}", rubric):
        problems.append(
            f"{path}: rubric_sha256 is {_brief(rubric)}, not the digest of the rubric the page "
            "showed (a file saved by a page made before it was recorded: rate on a new page)"
        )
    page_cases = document.get("page_cases")
    if type(page_cases) is not int or page_cases < 1:
        problems.append(f"{path}: page_cases is {_brief(page_cases)}, not the page's case count")
    saved_at = document.get("saved_at")
    if saved_at is not None and not _is_timestamp(saved_at):
        problems.append(f"{path}: saved_at is {_brief(saved_at)}, not an ISO 8601 time")
    entries = document.get("ratings")
    if not isinstance(entries, list) or not entries:
        problems.append(f"{path}: ratings is {_brief(entries)}, not a list of rated cases")
        entries = []
    on_page = known(page_id) if known is not None and page_id is not None else None
    scores: dict[str, dict[str, int]] = {}
    skipped: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    not_on_page: list[str] = []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: rating {number}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: not an object")
            continue
        case = entry.get("case")
        if not isinstance(case, str) or not case.strip():
            problems.append(f"{where}: case is {_brief(case)}, not a case id from the page")
            continue
        where = f"{path}: case {case}"
        if case in first_seen:
            problems.append(f"{where}: rated twice (ratings {first_seen[case]} and {number})")
            continue
        first_seen[case] = number
        if on_page is not None and case not in on_page:
            not_on_page.append(case)
        unknown = sorted(set(entry) - ENTRY_KEYS)
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
        rated_at = entry.get("rated_at")
        if rated_at is not None and not _is_timestamp(rated_at):
            problems.append(f"{where}: rated_at is {_brief(rated_at)}, not an ISO 8601 time")
        given = [k for k in RATED_COMPONENTS if k in entry]
        if "skipped" in entry:
            reason = entry["skipped"]
            if not isinstance(reason, str) or not reason.strip():
                problems.append(f"{where}: skipped is {_brief(reason)}; give the reason as text")
            elif given:
                problems.append(
                    f"{where}: skipped, yet scored {', '.join(given)}: one or the other"
                )
            else:
                skipped[case] = reason.strip()
            continue
        bad = [
            f"{key}={_brief(entry.get(key))}"
            for key in RATED_COMPONENTS
            if not _is_score(entry.get(key))
        ]
        if bad:
            problems.append(
                f"{where}: {', '.join(bad)}: each of gt, va and rvf is an integer 0-4 (4, not "
                '4.0 nor "4"), or the case is skipped with a reason'
            )
            continue
        scores[case] = {key: int(entry[key]) for key in RATED_COMPONENTS}
    if not_on_page:
        problems += _not_on_page(path, page_id or "", not_on_page, len(first_seen))
    if len(problems) > start:
        return None
    assert isinstance(rater, str) and isinstance(page_id, str)
    assert isinstance(rubric, str) and isinstance(page_cases, int)
    name = " ".join(rater.split())
    return RatingRound(page_id, rubric, page_cases, {name: scores}, {name: skipped}, {name: path})


def _not_on_page(path: Path, page_id: str, cases: list[str], total: int) -> list[str]:
    """The problem lines of a file's case ids that are no case of its page in the logs."""
    if len(cases) == total:  # not one case found: the logs are not the page's
        return [
            f"{path}: none of its {total} case(s) is a case of page {page_id} in these logs: "
            "give the logs the page was made from (all of them, as given to medreason rate)"
        ]
    return [
        f"{path}: case {case}: not a case of page {page_id} in these logs, though the file's "
        "other cases are: an entry edited by hand or copied from another page's file, or a "
        "case of a log not given here; give every log the page was made from, or remove the "
        "entry"
        for case in cases
    ]


def _is_timestamp(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def read_rating_round(paths: Sequence[Path], logs: Sequence[Path] | None = None) -> RatingRound:
    """Several raters' files merged into one round: one page, one file per rater. With the
    logs, a case id of a file that is no case of its page in them is one of that file's
    problems. Raises ChallengeError listing every problem of every file."""
    problems: list[str] = []
    known: KnownCases = None
    if logs is not None:
        candidates, _ = collect_candidates(logs)

        def known(page_id: str) -> set[str]:
            return {case_digest(page_id, c.ref) for c in candidates}

    rounds = [r for r in (read_rater_file(p, problems, known) for p in paths) if r is not None]
    if problems:
        raise ChallengeError(problems)
    merged = RatingRound(rounds[0].page_id, rounds[0].rubric_sha256, rounds[0].page_cases)
    first = rounds[0].files[next(iter(rounds[0].files))]
    by_key: dict[str, str] = {}
    for one in rounds:
        [(rater, scores)] = one.scores.items()
        path = one.files[rater]
        if one.page_id != merged.page_id:
            problems.append(
                f"{path}: page {one.page_id}, but {first} is page {merged.page_id}: ratings "
                "of different pages (samples) are not merged"
            )
            continue
        if (one.rubric_sha256, one.page_cases) != (merged.rubric_sha256, merged.page_cases):
            problems.append(
                f"{path}: page {one.page_id} with rubric {one.rubric_sha256[:12]} and "
                f"{one.page_cases} cases, but {first} says rubric "
                f"{merged.rubric_sha256[:12]} and {merged.page_cases} cases (an edited file?)"
            )
            continue
        if rater_key(rater) in by_key:
            earlier = by_key[rater_key(rater)]
            problems.append(
                f"{path}: rater {rater!r} again (also {merged.files[earlier]}, as "
                f"{earlier!r}): one file per rater; rename one or join the files"
            )
            continue
        by_key[rater_key(rater)] = rater
        merged.scores[rater] = scores
        merged.skipped[rater] = one.skipped[rater]
        merged.files[rater] = path
    if problems:
        raise ChallengeError(problems)
    return merged


def map_round_to_logs(
    rated: RatingRound, logs: Sequence[Path]
) -> tuple[dict[str, Candidate], list[str]]:
    """Each rated (or skipped) case id -> the logged sample it shows, by recomputing the
    digests over the logs' rateable cases. Raises ChallengeError naming each file's ids
    that map to none of them, and ratings made against another rubric than the judges'."""
    candidates, notes = collect_candidates(logs)
    by_digest = {case_digest(rated.page_id, c.ref): c for c in candidates}
    problems: list[str] = []
    for rater, path in sorted(rated.files.items()):
        cases = set(rated.scores.get(rater, {})) | set(rated.skipped.get(rater, {}))
        unknown = sorted(cases - set(by_digest))
        if unknown:
            problems += _not_on_page(path, rated.page_id, unknown, len(cases))
    if problems:
        raise ChallengeError([*problems, *notes])
    wanted = rated.cases | {c for by_case in rated.skipped.values() for c in by_case}
    mapping = {case: by_digest[case] for case in wanted}
    other_rubrics: dict[str, list[Path]] = defaultdict(list)
    for candidate in mapping.values():
        assert candidate.rubric is not None  # collect_candidates gives every one its log's
        digest = candidate.rubric.sha256
        if digest != rated.rubric_sha256 and candidate.path not in other_rubrics[digest]:
            other_rubrics[digest].append(candidate.path)
    if other_rubrics:
        raise ChallengeError(
            [
                f"{path}: the raters read rubric {rated.rubric_sha256[:12]}, but the judges of "
                f"{', '.join(map(str, paths))} were given rubric {digest[:12]} (other "
                "-T judge_prompts): ratings are compared only with judges held to the words "
                "the raters read; rate a page made from these logs"
                for digest, paths in sorted(other_rubrics.items())
                for path in [rated.described_files()]
            ]
        )
    return mapping, notes


@dataclass
class WrittenPage:
    html: str
    page_id: str
    cases: int
    strata: dict[str, int]
    notes: list[str]
    warnings: list[str] = field(default_factory=list)
    key: list[str] = field(default_factory=list)  # the page key's notes for the organizer


# A page above this is slow to mail and to open; ``rate`` says so and how to shrink it.
LARGE_PAGE_BYTES = 25 * 1024 * 1024
DEFAULT_MAX_IMAGE_PX = 1024


def build_page(
    logs: Sequence[Path],
    cases: int,
    seed: int,
    data_dir: Path | None = None,
    max_image_px: int | None = DEFAULT_MAX_IMAGE_PX,
) -> WrittenPage:
    """The rating page of ``cases`` cases drawn from the logs (the whole of ``medreason
    rate`` but the writing); images larger than ``max_image_px`` on their long side are
    scaled down for the page (None: as logged)."""
    candidates, notes = collect_candidates(logs)
    if not candidates:
        raise ChallengeError(
            [
                *notes,
                "no judged open-ended case to rate: give logs of open_ended or medreason "
                "runs scored with their judges",
            ]
        )
    rubrics: dict[str, list[Path]] = defaultdict(list)
    for candidate in candidates:
        assert candidate.rubric is not None  # collect_candidates gives every one its log's
        if candidate.path not in rubrics[candidate.rubric.sha256]:
            rubrics[candidate.rubric.sha256].append(candidate.path)
    if len(rubrics) > 1:
        raise ChallengeError(
            [
                "the logs' judges were given different rubrics (-T judge_prompts): raters "
                "read one rubric, so a page is made from logs of one; the rubrics:",
                *(
                    f"rubric {digest[:12]}: {', '.join(map(str, paths))}"
                    for digest, paths in sorted(rubrics.items())
                ),
            ]
        )
    chosen = stratified_sample(candidates, cases, seed)
    if len(chosen) < cases:
        notes.append(f"{len(chosen)} case(s) to rate: all the logs hold (asked for {cases})")
    assert candidates[0].rubric is not None
    images = case_images(chosen, data_dir, max_image_px)
    data = page_data(chosen, seed, images.by_case, candidates[0].rubric)
    warnings: list[str] = []
    key: list[str] = [
        f"page {data['page_id']}: {len(chosen)} cases, rubric {data['rubric_sha256'][:12]}"
    ]
    if images.downscaled:
        key.append(
            f"{images.downscaled} image(s) scaled down to {max_image_px} px on the long side "
            "for this page (the logs keep the originals; --max-image-px to change)"
        )
    named = sum(
        names_a_family(
            f"{case['answer']}\n{case['trace']}",
            words_of(case["question"], case["context"], case["reference"]),
        )
        for case in data["cases"]
    )
    if named:
        warning = (
            f"{named} case(s) on the page still name a model family in the model's reply "
            "after blanking (blanking is best-effort): read those replies before sending "
            "the page, or draw another sample (--seed)"
        )
        warnings.append(warning)
        key.append(warning)
    several_models = len({c.model for c in candidates}) > 1
    strata = Counter(
        " / ".join(
            (
                (f"model {sorted({c.model for c in candidates}).index(c.model) + 1}",)
                if several_models
                else ()
            )
            + c.stratum
        )
        for c in chosen
    )
    html = render_page(data, key)
    size = len(html.encode("utf-8"))
    if size > LARGE_PAGE_BYTES:
        warnings.append(
            f"the page is {size / 1e6:.0f} MB, slow to send and to open: fewer --cases, or "
            "a smaller --max-image-px"
        )
    return WrittenPage(
        html, data["page_id"], len(chosen), dict(sorted(strata.items())), notes, warnings, key
    )
