"""``medreason rate``'s page: one self-contained HTML file (images as data URIs, script and
style inline, a content security policy that forbids any network request) showing a
stratified, seeded sample of judged open-ended cases one at a time: the image(s), the
question, the reference, the model's final answer and reasoning trace, and the rubric's 0-4
anchors for GT, VA and RVF, read from the judges' own prompt files (``core/prompts``) so the
raters and the judges are held to the same words. The rater never sees a judge's score or
rationale, the model's name or the log: the page's data holds only the texts shown and an
opaque id per case (``rating``). Served by ``rating_server``, the same page also sends each
rating to the server as it is given.

The ``medreason rate`` command, its arguments and what it prints, is at the end of the module.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.export import log_files
from inspect_medreason.cli.command_line import (
    EXIT_OK,
    TOGETHER,
    Subcommands,
    non_negative_int,
    positive_int,
    print_notes,
)
from inspect_medreason.core.files import OutputSet
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
from inspect_medreason.rating.ratings_file import (
    MAX_NOTE_CHARS,
    MAX_RATER_CHARS,
    RATINGS_FORMAT,
    RATINGS_VERSION,
)

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
class WrittenPage:
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
    warnings: list[str] = list(presets.notes)
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


# --- the command line: medreason rate -----------------------------------------------------


def add_parsers(commands: Subcommands) -> None:
    """``rate``: its arguments and the function that runs it."""
    rate = commands.add_parser(
        "rate",
        help="write a rating page: clinicians score a blinded sample of judged cases",
        description="Write one self-contained HTML page (works offline, from a file) showing "
        "a stratified sample of judged open-ended cases one at a time (images, question, "
        "reference, the model's answer and reasoning trace, the rubric's 0-4 anchors), blinded "
        "to the judges' scores and the model. Raters save their ratings as a JSON file; "
        "with --serve the page is served to a team and every rating goes to a SQLite store "
        "as it is given. 'agreement --ratings' and 'calibrate' read either with the same logs.",
    )
    rate.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="judged open-ended logs")
    rate.add_argument("--output", help="the .html page to write" + TOGETHER)
    rate.add_argument(
        "--serve",
        action="store_true",
        help="serve the page to a team (until Ctrl-C), writing every rating to --store as it "
        "is given; restart with the same logs, --cases, --seed and --store to go on",
    )
    rate.add_argument("--store", help="the SQLite file of a served round's ratings")
    rate.add_argument(
        "--host", default="127.0.0.1", help="the address to serve on (127.0.0.1: this machine)"
    )
    rate.add_argument("--port", type=int, default=8765, help="the port to serve on (8765)")
    rate.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a name raters reach the server by (its DNS name, a proxy's, NAME:PORT for one "
        "port only); requests naming any other host are refused (repeatable)",
    )
    rate.add_argument(
        "--raters",
        metavar="NAME,NAME|@FILE",
        help="one link per rater, whose token rates under that name only (else one link "
        "for all, and raters type their names); @FILE reads the names from a file, one a line",
    )
    rate.add_argument("--cases", type=positive_int, default=60, help="cases on the page (60)")
    rate.add_argument(
        "--seed", type=int, default=0, help="the sample's seed: same seed, same page (0)"
    )
    rate.add_argument(
        "--data",
        help="the data folder to read images from when a log holds none (a blind-control run, "
        "--no-log-images); default: the folder the run recorded",
    )
    rate.add_argument(
        "--max-image-px",
        type=non_negative_int,
        default=1024,
        metavar="PX",
        help="scale images larger than PX pixels on their long side down to it for the page "
        "(the logs keep the originals; the page's key says so); 0: as logged (1024)",
    )
    rate.add_argument("--force", action="store_true", help="overwrite the output file")
    rate.set_defaults(handler=cmd_rate)


def cmd_rate(args: argparse.Namespace) -> int:
    if not args.serve and not args.output:
        raise AnalysisError(["give --output PAGE.html (a page to send), or --serve"])
    if args.serve and not args.store:
        raise AnalysisError(["--serve writes every rating to a SQLite file: give --store FILE"])
    served_only = [f"--{n.replace('_', '-')}" for n in ("raters", "allow_host") if getattr(args, n)]
    if served_only and not args.serve:
        raise AnalysisError([f"{' and '.join(served_only)}: only with --serve (a served round)"])
    options = None
    if args.serve:
        # imported here: rating_server imports this module, and only --serve needs a server
        from inspect_medreason.rating.server import check_serve_options

        options = check_serve_options(args)
    outputs = OutputSet(args.force, [*args.logs, args.data])
    output = outputs.add(args.output) if args.output else None
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    page = build_page(
        logs,
        args.cases,
        args.seed,
        Path(args.data) if args.data else None,
        args.max_image_px or None,
    )
    for note in skipped + page.notes:
        print(f"note: {note}", file=sys.stderr)
    for warning in page.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if output is not None:
        print_notes(outputs.write({output: page.html}))
        print(
            f"wrote {output} (page {page.page_id}: {page.cases} cases, "
            f"{len(page.html.encode('utf-8')) / 1e6:.1f} MB)"
        )
    for stratum, count in page.strata.items():
        print(f"  {count:4d}  {stratum}")
    if options is not None:
        from inspect_medreason.rating.server import serve_round

        serve_round(page, Path(args.store), Path(args.data) if args.data else None, args, options)
    return EXIT_OK
