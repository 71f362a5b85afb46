"""What a rating round rates: the judged open-ended cases of the logs, their seeded
stratified sample, the judges' rubric the raters read, the opaque ids that blind a case, and
each case's images.

The page raters read is built in ``page``; the ratings they give are read in
``ratings_file`` (a downloaded file, or ``store``, the SQLite file of a round served by
``server``); ``analysis.agreement`` and ``analysis.calibration`` hold the statistics.

Blinding and the way back. A case's id is a digest of the page id and the (eval id, sample
id, epoch) of the logged sample; the page id is a digest of the seed and the sampled
samples. Neither can be read backwards from the page, and ``medreason`` maps ratings back
to their samples by recomputing the digests over the logs it is given with them (the logs
are the key: no key file to keep or lose).
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log_samples_by_id
from inspect_ai.model import ChatMessageUser, ContentImage
from PIL import Image, UnidentifiedImageError

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.logs import (
    LoggedSample,
    UnreadableSample,
    log_header,
    logged_samples,
    task_record,
)
from inspect_medreason.core.dicom import (
    DISPLAY_KEY,
    MAX_WINDOW_PRESETS,
    display_record,
    render_window,
    window_presets,
)
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.image_confinement import ConfinedImages, run_data_folder
from inspect_medreason.core.images import ImagePathError

# What a rater scores, and the log component each is compared with.
RATED_COMPONENTS = {"gt": "gt_final", "va": "va_answer", "rvf": "rvf_trace"}
# The judges' rubrics, whose anchors the raters see (one source of the words for both).
RUBRIC_TEMPLATES = {"gt": "judge_gt_system", "va": "judge_va_system", "rvf": "judge_rvf_system"}
RUBRIC_TITLES = {
    "gt": ("GT", "the final answer against the reference answer (ignore the image)"),
    "va": ("VA", "the final answer against the image(s) (ignore the reference)"),
    "rvf": ("RVF", "the reasoning trace's visual assertions against the image(s)"),
}
SCORER = "open_ended_scorer"
# Breakdown fields a sample carries (core.metrics.CASE_GROUP_FIELDS): the strata, with the
# model when several models' logs are rated together.
STRATUM_FIELDS = ("modality", "task")
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
        raise AnalysisError([*problems, "a rater must see the images the judges saw"])
    return result


@dataclass
class WindowPresets:
    """Per chosen case with a DICOM image, per image: the windows the page offers (the
    file's own, then the named CT ones), each rendered from the file's raw values; None for
    an image that is no DICOM. Notes say what could not be offered and why."""

    by_case: dict[SampleRef, list[dict[str, Any] | None]]
    notes: list[str] = field(default_factory=list)


def case_window_presets(
    candidates: list[Candidate], data_dir: Path | None, max_px: int | None = None
) -> WindowPresets:
    """The window presets of each case whose log recorded a DICOM display record (a log
    written before that record has none: its page shows no preset menu). The DICOM file is
    read by the confinement rule (``ConfinedImages.read_dicom``: the folder in force, the
    file whose image has the digest of the one sent), and the windows are those the
    verified file states, not those the log says. A file that cannot be read or checked
    leaves the case without presets, noted; the page is still made."""
    result = WindowPresets({})
    confined = ConfinedImages(data_dir)
    for candidate in candidates:
        records = candidate.metadata.get(DISPLAY_KEY)
        if not isinstance(records, list) or not any(records):
            continue
        case = f"{candidate.path}: case {candidate.sample_id!r}"
        frame = (candidate.metadata.get("extra_metadata") or {}).get("frame")
        images: list[dict[str, Any] | None] = []
        try:
            run_folder = run_data_folder(log_header(candidate.path))
            frame_index = None if frame is None else int(str(frame))
            for index, record in enumerate(records):
                if not record:
                    images.append(None)
                    continue
                data, path = confined.read_dicom(
                    candidate.path, run_folder, candidate.metadata, index
                )
                stated = display_record(data, frame_index)
                presets, left_out = window_presets(stated or {})
                if left_out:
                    result.notes.append(
                        f"{case}: image {index + 1}: {left_out} window(s) beyond the first "
                        f"{MAX_WINDOW_PRESETS} not offered"
                    )
                for preset in presets:
                    png = render_window(data, path, frame_index, preset["center"], preset["width"])
                    preset["src"], _ = _browser_image(png, f"{case}: {preset['name']}", max_px)
                images.append(
                    {"units": (stated or {}).get("units"), "presets": presets} if presets else None
                )
        except (ImagePathError, ValueError, OSError) as error:
            result.notes.append(
                f"{case}: its DICOM window presets are not offered ({error}); the image "
                "as sent is shown"
            )
            continue
        if any(images):
            result.by_case[candidate.ref] = images
    return result
