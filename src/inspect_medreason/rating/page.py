"""``medreason rate``'s page: one self-contained HTML file (images as data URIs, script and
style inline, a content security policy that forbids any network request) showing a
stratified, seeded sample of judged open-ended cases one at a time: the image(s), the
question, the reference, the model's final answer and reasoning trace, and the rubric's 0-4
anchors for GT, VA and RVF, read from the judges' own prompt files (``core/prompts``) so the
raters and the judges are held to the same words. The rater never sees a judge's score or
rationale, the model's name or the log: the page's data holds only the texts shown and an
opaque id per case (``cases``). Served by ``server``, the same page also sends each
rating to the server as it is given.

``build_rating_page`` is the whole of ``medreason rate`` but the writing and the printing
(``cli/rate.py``): a notebook calls it to make the page, and writes ``page.html`` itself.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import log_files
from inspect_medreason.core.lineage import FAMILY_WORDS, model_families
from inspect_medreason.rating.cases import (
    Candidate,
    Rubric,
    SampleRef,
    case_digest,
    case_images,
    case_window_presets,
    collect_candidates,
    page_digest,
    stratified_sample,
)
from inspect_medreason.rating.ratings_file import RATINGS_FORMAT, RATINGS_VERSION
from inspect_medreason.rating.rules import MAX_NOTE_CHARS, MAX_RATER_CHARS

PAGE_FORMAT = "medreason-rating-page"
PAGE_VERSION = 1
PAGE_TEMPLATE = "page.html"
# The page's content security policy (in its template): nothing leaves a page opened from a
# file. A served page may also talk to the server it came from, and show its images.
PAGE_POLICY = "default-src 'none'; img-src data:;"
SERVED_POLICY = "default-src 'none'; connect-src 'self'; img-src data: 'self';"
DATA_MARKER = "/*PAGE_DATA*/"
KEY_MARKER = "<!--PAGE_KEY-->"


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


def blinded_reply(candidate: Candidate) -> tuple[str, str]:
    """A case's final answer and reasoning trace as the raters read them (``Blinding``)."""
    blinding = Blinding(tuple(sorted(candidate.names)))
    ordinary = words_of(candidate.question, candidate.context, candidate.reference)
    return blinding.blank(candidate.answer, ordinary), blinding.blank(candidate.trace, ordinary)


def page_data(
    chosen: list[Candidate],
    seed: int,
    images: dict[SampleRef, list[str]],
    rubric: Rubric,
    windows: dict[SampleRef, list[dict[str, Any] | None]] | None = None,
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
        # the longest name and note the server and the ratings file take: the page's fields
        # hold no more
        "limits": {"rater": MAX_RATER_CHARS, "note": MAX_NOTE_CHARS},
        "cases": [
            {
                "case": case_digest(page_id, c.ref),
                "question": c.question,
                "context": c.context,
                "reference": c.reference,
                "answer": answer,
                "trace": trace,
                "images": images.get(c.ref, []),
                # per image, a DICOM's window presets rendered from its raw values (or null)
                **({"windows": windows[c.ref]} if windows and c.ref in windows else {}),
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
    template = (files("inspect_medreason") / "rating" / PAGE_TEMPLATE).read_text(encoding="utf-8")
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
class RatingPage:
    """A rating page made from logs (``build_rating_page``): its self-contained HTML (what
    ``medreason rate --output`` writes), its id, the number of cases and their strata (the
    lines the command prints), the notes and warnings the command prints, and the key's notes
    for the organizer (in an HTML comment at the page's top)."""

    html: str
    page_id: str
    cases: int
    strata: dict[str, int]
    notes: list[str]
    warnings: list[str] = field(default_factory=list)
    key: list[str] = field(default_factory=list)  # the page key's notes for the organizer
    # what the served mode needs beyond the page: the cases shown (in page order, for
    # their original images) and the page's data
    chosen: list[Candidate] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


# A page above this is slow to mail and to open; ``rate`` says so and how to shrink it.
LARGE_PAGE_BYTES = 25 * 1024 * 1024
DEFAULT_MAX_IMAGE_PX = 1024


def build_rating_page(
    logs: Sequence[str | os.PathLike[str]],
    cases: int = 60,
    seed: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
    max_image_px: int | None = DEFAULT_MAX_IMAGE_PX,
) -> RatingPage:
    """The rating page of ``cases`` cases drawn (seeded by ``seed``) from the judged
    open-ended cases of the logs (eval log files, or folders searched for them), the whole of
    ``medreason rate`` but the writing: the page's HTML, its id, its strata, and the notes and
    warnings the command prints. Images are read from the logs, else from ``data_dir`` (else
    the folder the run recorded); those larger than ``max_image_px`` on their long side are
    scaled down for the page (None: as logged). A user's mistake (no judged case, logs of
    different rubrics, an image that cannot be shown) raises AnalysisError naming each."""
    skipped: list[str] = []
    paths = log_files([Path(log) for log in logs], skipped)
    page = _page_of(paths, cases, seed, None if data_dir is None else Path(data_dir), max_image_px)
    page.notes[:0] = skipped  # the command says what it skipped first
    return page


def _page_of(
    logs: Sequence[Path], cases: int, seed: int, data_dir: Path | None, max_image_px: int | None
) -> RatingPage:
    candidates, notes = collect_candidates(logs)
    if not candidates:
        raise AnalysisError(
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
        raise AnalysisError(
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
    presets = case_window_presets(chosen, data_dir, max_image_px)
    data = page_data(chosen, seed, images.by_case, candidates[0].rubric, presets.by_case)
    warnings, key = _notes_of_page(data, images.downscaled, max_image_px)
    warnings[:0] = presets.notes
    strata = _strata(candidates, chosen)
    html = render_page(data, key)
    size = len(html.encode("utf-8"))
    if size > LARGE_PAGE_BYTES:
        warnings.append(
            f"the page is {size / 1e6:.0f} MB, slow to send and to open: fewer --cases, or "
            "a smaller --max-image-px"
        )
    return RatingPage(
        html,
        data["page_id"],
        len(chosen),
        dict(sorted(strata.items())),
        notes,
        warnings,
        key,
        chosen,
        data,
    )


def _notes_of_page(
    data: dict[str, Any], downscaled: int, max_image_px: int | None
) -> tuple[list[str], list[str]]:
    """The page's warnings for the organizer and its key's notes: its id and rubric, the
    images scaled down, and the replies that still name a model family after blanking."""
    warnings: list[str] = []
    key: list[str] = [
        f"page {data['page_id']}: {len(data['cases'])} cases, rubric {data['rubric_sha256'][:12]}"
    ]
    if downscaled:
        key.append(
            f"{downscaled} image(s) scaled down to {max_image_px} px on the long side "
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
    return warnings, key


def _strata(candidates: list[Candidate], chosen: list[Candidate]) -> Counter[str]:
    """The chosen cases per stratum: the model's number among the logs' models (when there
    are several), then the case's modality and task."""
    models = sorted({c.model for c in candidates})
    return Counter(
        " / ".join(((f"model {models.index(c.model) + 1}",) if len(models) > 1 else ()) + c.stratum)
        for c in chosen
    )
