"""DICOM input: windowed 8-bit PNG conversion, cached by file content.

Models take PNG or JPEG, clinicians' data is DICOM. A DICOM image (``.dcm``/``.dicom``, or
any file with the ``DICM`` marker) is read with pydicom, passed through its modality LUT
and windowed with its own VOI LUT or window tags (a percentile window when it has none),
inverted for MONOCHROME1, and written once as PNG into a cache keyed by the file's bytes
and the frame, so later runs reuse it. Multi-frame files give their middle frame unless
the case names one.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from inspect_medreason.core.files import OutputPathError, write_outputs_together
from inspect_medreason.core.images import CACHE_ENV, ImagePathError, cache_root

DICOM_SUFFIXES = {".dcm", ".dicom"}
DICOM_MAGIC_OFFSET = 128
# Nuclear-medicine counts and similar data carry no window: stretch these percentiles.
FALLBACK_PERCENTILES = (0.5, 99.5)

# A degradation of the raw values (after the modality LUT, before any window): it is given
# the values and the file's dataset (its Modality, its units) and returns values alike.
RawDegradation = Callable[[NDArray[np.float64], Any], NDArray[np.float64]]

# The DICOM file (and frame) each cached PNG of this process was converted from, so an image
# shift can degrade the raw values instead of the windowed 8-bit picture.
_converted_from: dict[str, tuple[Path, int | None]] = {}


def converted_from(png: Path) -> tuple[Path, int | None] | None:
    """The DICOM file and frame ``png`` was converted from by this process, if it was."""
    return _converted_from.get(str(png))


def remember_conversion(png: Path, source: Path, frame: int | None) -> None:
    """Record that ``png`` was made from ``source`` (and frame) for ``converted_from``."""
    _converted_from[str(png)] = (source, frame)


def is_dicom(path: Path) -> bool:
    """A DICOM suffix, or the ``DICM`` marker after the 128-byte preamble."""
    if path.suffix.lower() in DICOM_SUFFIXES:
        return True
    try:
        with path.open("rb") as handle:
            handle.seek(DICOM_MAGIC_OFFSET)
            return handle.read(4) == b"DICM"
    except OSError:
        return False


def cache_dir() -> Path:
    return cache_root() / "dicom"


def _to_uint8(values: NDArray[np.float64], low: float, high: float) -> NDArray[np.uint8]:
    scaled = (np.clip(values, low, high) - low) / max(high - low, 1e-9) * 255.0
    return np.round(scaled).astype(np.uint8)


def check_pixel_budget(path: Path, dataset: Any) -> None:
    """Refuse, from the header alone, pixel data that would decode to more samples than
    Pillow's decompression-bomb limit allows (a small compressed file can claim 30000 x
    30000 pixels and take gigabytes to decode)."""
    budget = Image.MAX_IMAGE_PIXELS
    dimensions = {
        name: int(dataset.get(name, default) or default)
        for name, default in (
            ("Rows", 0),
            ("Columns", 0),
            ("NumberOfFrames", 1),
            ("SamplesPerPixel", 1),
        )
    }
    total = 1
    for value in dimensions.values():
        total *= max(value, 0)
    if budget is not None and total > budget:
        shape = " x ".join(f"{name} {value}" for name, value in dimensions.items())
        raise ImagePathError(
            f"{path.name}: refused as a decompression bomb: {shape} is {total:,} samples, "
            f"more than the limit of {budget:,} (PIL.Image.MAX_IMAGE_PIXELS)"
        )


def dicom_to_image(
    path: Path,
    frame: int | None = None,
    fallback_window: tuple[float, float] | None = None,
    degrade: RawDegradation | None = None,
    data: bytes | None = None,
) -> Image.Image:
    """Read one frame of a DICOM file as a display-ready 8-bit image.

    ``degrade`` changes the raw values before windowing; the window itself is the clean
    image's (a degraded acquisition is shown as the clean one would be). ``data``, when given,
    is the file's bytes as already read (then ``path`` only names it). Raises
    ImagePathError naming the file when it cannot be read or decoded.
    """
    import pydicom
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    try:
        dataset = pydicom.dcmread(io.BytesIO(data) if data is not None else str(path))
        check_pixel_budget(path, dataset)
        pixels = dataset.pixel_array
    except ImagePathError:
        raise
    except Exception as error:  # pydicom raises many types for one condition: unreadable
        raise ImagePathError(
            f"{path.name}: unreadable DICOM ({type(error).__name__}: {error})"
        ) from error
    frames = int(dataset.get("NumberOfFrames", 1) or 1)
    if frames > 1:
        index = frames // 2 if frame is None else frame
        if not 0 <= index < frames:
            raise ImagePathError(f"{path.name}: frame {index} requested, the file has {frames}")
        pixels = pixels[index]
    elif frame not in (None, 0):
        raise ImagePathError(f"{path.name}: frame {frame} requested, the file has one frame")
    if int(dataset.get("SamplesPerPixel", 1) or 1) == 3:
        return Image.fromarray(pixels.astype(np.uint8), mode="RGB")
    values = apply_modality_lut(pixels, dataset).astype(np.float64)
    shown = values if degrade is None else degrade(values, dataset)
    if "WindowCenter" in dataset or "VOILUTSequence" in dataset:
        clean = apply_voi_lut(values, dataset, index=0).astype(np.float64)
        low, high = float(clean.min()), float(clean.max())
        windowed = clean if degrade is None else apply_voi_lut(shown, dataset, index=0)
    elif fallback_window is not None:
        center, width = fallback_window
        windowed, low, high = shown, center - width / 2, center + width / 2
    else:
        windowed = shown
        low, high = (float(v) for v in np.percentile(values, FALLBACK_PERCENTILES))
    image = _to_uint8(windowed, low, high)
    if dataset.get("PhotometricInterpretation") == "MONOCHROME1":
        image = 255 - image
    return Image.fromarray(image, mode="L")


def dicom_as_png(path: Path, frame: int | None = None) -> Path:
    """The cached PNG for a DICOM file (converted on first use)."""
    digest = hashlib.sha256(path.read_bytes())
    digest.update(f":frame={frame}".encode())
    target = cache_dir() / f"{digest.hexdigest()}.png"
    remember_conversion(target, path, frame)
    if target.is_file():
        return target
    image = dicom_to_image(path, frame)
    encoded = io.BytesIO()
    image.save(encoded, format="PNG")
    # Written whole or not at all, so a concurrent or interrupted run never sees half a file.
    try:
        write_outputs_together([(target, encoded.getvalue())])
    except OutputPathError as error:  # the cache's problem (a full disk), named for the case
        raise ImagePathError(
            f"{path.name}: its PNG cannot be cached ({error}); or point {CACHE_ENV} at a "
            "writable folder with room"
        ) from error
    return target


def dicom_bytes_as_png(data: bytes, name: Path, frame: int | None = None) -> bytes:
    """The PNG made from a DICOM file's bytes (as read once; ``name`` names it in a problem),
    cached by those bytes and the frame."""
    digest = hashlib.sha256(data)
    digest.update(f":frame={frame}".encode())
    target = cache_dir() / f"{digest.hexdigest()}.png"
    with contextlib.suppress(OSError):
        return target.read_bytes()
    buffer = io.BytesIO()
    dicom_to_image(name, frame, data=data).save(buffer, format="PNG")
    png = buffer.getvalue()
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".png", delete=False) as handle:
            handle.write(png)
        os.replace(handle.name, target)
    return png
