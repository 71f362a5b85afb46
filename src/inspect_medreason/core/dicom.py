"""DICOM input: windowed 8-bit PNG conversion, cached by file content.

Models take PNG or JPEG, clinicians' data is DICOM. A DICOM image (``.dcm``/``.dicom``, or
any file with the ``DICM`` marker) is read with pydicom, passed through its modality LUT
and windowed with its own VOI LUT or window tags (a percentile window when it has none),
inverted for MONOCHROME1, and written once as PNG into a cache keyed by the file's bytes
and the frame, so later runs reuse it. Multi-frame files give their middle frame unless
the case names one.
"""

from __future__ import annotations

import hashlib
import io
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
    path: Path, frame: int | None = None, fallback_window: tuple[float, float] | None = None
) -> Image.Image:
    """Read one frame of a DICOM file as a display-ready 8-bit image.

    Raises ImagePathError naming the file when it cannot be read or decoded.
    """
    import pydicom
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    try:
        dataset = pydicom.dcmread(str(path))
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
    if "WindowCenter" in dataset or "VOILUTSequence" in dataset:
        windowed = apply_voi_lut(values, dataset, index=0).astype(np.float64)
        low, high = float(windowed.min()), float(windowed.max())
    elif fallback_window is not None:
        center, width = fallback_window
        windowed, low, high = values, center - width / 2, center + width / 2
    else:
        windowed = values
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
