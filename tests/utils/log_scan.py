"""Reading every string of a log, in either format, and what the log tests run: a task of
each family on its published layout, and a scan for image bytes."""

from __future__ import annotations

import base64
import binascii
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import zipfile_zstd  # noqa: F401  (Inspect writes .eval entries zstd-compressed)
from inspect_ai import Task

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.judge_meta.judge_meta import judge_meta
from inspect_medreason.med_cmr.med_cmr import med_cmr
from inspect_medreason.medreason.medreason import mcq, medreason, open_ended
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.vqa.vqa import medreason_vqa_rad
from utils.published_schemas import (
    cmb_clin_file,
    cmb_exam_file,
    gemex_folder,
    med_cmr_release,
    medxpertqa_folder,
    vqa_rad_parquet,
)

GRADER = {"grader": "mockllm/model", "vision_grader": "mockllm/model"}


def strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a parsed JSON document, keys too, with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{where}.{key}", str(key)
            yield from strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, f"{where}[{index}]")


def log_documents(log_file: Path) -> dict[str, Any]:
    """Each JSON document of a log: the entries of an .eval zip, or the .json whole."""
    if log_file.suffix == ".json":
        return {log_file.name: json.loads(log_file.read_text(encoding="utf-8"))}
    with zipfile.ZipFile(log_file) as archive:
        return {
            name: json.loads(archive.read(name))
            for name in archive.namelist()
            if name.endswith(".json")
        }


def family_tasks(root: Path) -> dict[str, tuple[Callable[[], Task], dict[str, str] | None]]:
    """A task of each family on its published layout under ``root``, with its judge roles."""
    return {
        "medreason": (lambda: medreason(data=str(root)), GRADER),
        # written with --no-log-images: the images are left out of the log, not their paths in
        "medreason_no_log_images": (lambda: medreason(data=str(root)), GRADER),
        "mcq_shifted": (
            lambda: mcq(data=str(root), shift="noise", severity=2),
            None,
        ),
        "medreason_vqa_rad": (
            lambda: medreason_vqa_rad(data=str(vqa_rad_parquet(root / "vqa_rad"))),
            GRADER,
        ),
        "gemex": (lambda: gemex(data=str(gemex_folder(root / "gemex"))), GRADER),
        "open_ended_shifted": (
            lambda: open_ended(data=str(root), shift="noise", severity=2),
            GRADER,
        ),
        "medreason_blind": (lambda: medreason(data=str(root), images=False), GRADER),
        "medxpertqa_mm": (
            lambda: medxpertqa_mm(data=str(medxpertqa_folder(root / "mx"))),
            None,
        ),
        "cmb_exam": (lambda: cmb_exam(data=str(cmb_exam_file(root / "exam.json"))), None),
        "cmb_clin": (lambda: cmb_clin(data=str(cmb_clin_file(root / "clin.json"))), GRADER),
        "med_cmr": (lambda: med_cmr(data=str(med_cmr_release(root / "med_cmr"))), GRADER),
        "judge_meta": (lambda: judge_meta(), GRADER),
    }


# The first bytes of each image format a case may hold (DICOM: the preamble's end and the
# magic word), raw or inside base64.
SIGNATURES = {
    "PNG": b"\x89PNG\r\n\x1a\n",
    "JPEG": b"\xff\xd8\xff",
    "DICOM": b"\x00\x00\x00\x00DICM",
}
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{64,}")


def image_traces(text: str) -> list[str]:
    """What in one string is an image: a data URI, or an image signature raw or in a run
    of base64 (at any alignment, so an image inside a longer payload is found too)."""
    found = ["a data:image URI"] if "data:image" in text else []
    raw = text.encode("latin-1", errors="ignore")
    found += [f"raw {name} bytes" for name, signature in SIGNATURES.items() if signature in raw]
    for run in BASE64_RUN.findall(text):
        for shift in range(4):
            chunk = run[shift:]
            try:
                decoded = base64.b64decode(chunk[: len(chunk) // 4 * 4])
            except binascii.Error:
                continue
            names = [name for name, signature in SIGNATURES.items() if signature in decoded]
            if names:
                found += [f"{name} bytes in base64" for name in names]
                break
    return found


def images_in_log(log_file: Path) -> list[str]:
    """Where a log (either format) holds image bytes or a data URI."""
    return [
        f"{entry}{where}: {', '.join(traces)}"
        for entry, document in log_documents(log_file).items()
        for where, text in strings(document)
        if (traces := image_traces(text))
    ]
