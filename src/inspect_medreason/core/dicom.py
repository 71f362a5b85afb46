"""DICOM input: windowed 8-bit PNG conversion, cached by file content.

Models take PNG or JPEG, clinicians' data is DICOM. A DICOM image (``.dcm``/``.dicom``, or
any file with the ``DICM`` marker) is read with pydicom, passed through its modality LUT
and windowed with its own VOI LUT or window tags (a percentile window when it has none),
inverted for MONOCHROME1, and written once as PNG into a cache keyed by the file's bytes
and the frame, so later runs reuse it. Multi-frame files give their middle frame unless
the case names one.

The loader also records, per DICOM image, what its file says about display
(:func:`display_record`: modality, rescale, units, its own window presets with their names),
so a rating page can offer those windows, rendered from the raw values again
(:func:`render_window`), never from the 8-bit picture that was sent.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from inspect_medreason.core.files import OutputPathError, write_cache_file, write_outputs_together
from inspect_medreason.core.images import CACHE_ENV, ImagePathError, cache_root

DICOM_SUFFIXES = {".dcm", ".dicom"}
DICOM_MAGIC_OFFSET = 128
# Nuclear-medicine counts and similar data carry no window: stretch these percentiles.
FALLBACK_PERCENTILES = (0.5, 99.5)

# The PNG text chunk naming the DICOM file (its SHA-256) and frame a picture was made from.
SOURCE_CHUNK = "inspect_medreason-dicom-source"

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


# Named CT windows (centre, width in HU), as Radiopaedia's "Windowing (CT)" article lists them
# (https://radiopaedia.org/articles/windowing-ct): brain W:80 L:40, soft tissues W:400 L:50
# (its abdomen soft-tissue window), lungs W:1500 L:-600, bone W:1800 L:400.
CT_PRESETS: tuple[tuple[str, float, float], ...] = (
    ("brain (CT)", 40.0, 80.0),
    ("soft tissue (CT)", 50.0, 400.0),
    ("lung (CT)", -600.0, 1500.0),
    ("bone (CT)", 400.0, 1800.0),
)
# The sample metadata key holding, for each of ``image_paths``, its DICOM display record (None
# for an image that is no DICOM); absent when the case has no DICOM image.
DISPLAY_KEY = "image_dicom"
# A page embeds one rendering per preset: at most this many per image (the file's own first).
MAX_WINDOW_PRESETS = 8


def _numbers(value: Any) -> list[float]:
    """A DICOM DS value, single or multi-valued, as floats (a value that is no number: none)."""
    multiple = isinstance(value, Iterable) and not isinstance(value, str | bytes)
    values = list(value) if multiple else [value]
    numbers = []
    for item in values:
        try:
            numbers.append(float(item))
        except (TypeError, ValueError):
            return []
    return numbers


def _texts(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value]


def display_record(data: bytes, frame: int | None) -> dict[str, Any] | None:
    """What a DICOM file says about showing it, from its header, as recorded (nothing
    invented): ``modality``, ``photometric``, the rescale (``rescale_slope``,
    ``rescale_intercept``, None when the file has none), ``units`` (its RescaleType; for CT
    without one, HU, which the CT image module defines its rescaled values to be), its own
    ``windows`` (centre, width and WindowCenterWidthExplanation name, each value of a
    multi-valued pair) and the ``frame`` shown. None for a colour image (no window) or a
    header that cannot be read (the conversion itself says why)."""
    import pydicom

    try:
        dataset = pydicom.dcmread(io.BytesIO(data), stop_before_pixels=True)
    except Exception:  # pydicom raises many types for one condition; the conversion names it
        return None
    if int(dataset.get("SamplesPerPixel", 1) or 1) != 1:
        return None
    modality = str(dataset.get("Modality") or "") or None
    slope = _numbers(dataset.get("RescaleSlope")) if "RescaleSlope" in dataset else []
    intercept = _numbers(dataset.get("RescaleIntercept")) if "RescaleIntercept" in dataset else []
    units = str(dataset.get("RescaleType") or "") or ("HU" if modality == "CT" else None)
    centers = _numbers(dataset.get("WindowCenter")) if "WindowCenter" in dataset else []
    widths = _numbers(dataset.get("WindowWidth")) if "WindowWidth" in dataset else []
    names = _texts(dataset.get("WindowCenterWidthExplanation"))
    windows = [
        {"center": center, "width": width, "name": names[n] if n < len(names) else None}
        for n, (center, width) in enumerate(zip(centers, widths, strict=False))
        # the standard's minimum width; anything less (or not a finite number) is no window
        if math.isfinite(center) and math.isfinite(width) and width >= 1
    ]
    frames = int(dataset.get("NumberOfFrames", 1) or 1)
    return {
        "modality": modality,
        "photometric": str(dataset.get("PhotometricInterpretation") or "") or None,
        "rescale_slope": slope[0] if slope else None,
        "rescale_intercept": intercept[0] if intercept else None,
        "units": units,
        "windows": windows,
        "frame": (frames // 2 if frame is None else frame) if frames > 1 else None,
    }


def window_presets(record: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The windows a page offers for a DICOM image: the file's own (named by its
    explanation, else by number), then for CT the named CT presets not already among them;
    at most MAX_WINDOW_PRESETS, and how many more were left out."""
    presets: list[dict[str, Any]] = []
    for number, window in enumerate(record.get("windows") or [], 1):
        name = window.get("name") or f"window {number}"
        presets.append(
            {"name": f"{name} (file)", "center": window["center"], "width": window["width"]}
        )
    if record.get("modality") == "CT" and record.get("units") == "HU":
        given = {(p["center"], p["width"]) for p in presets}
        presets += [
            {"name": name, "center": center, "width": width}
            for name, center, width in CT_PRESETS
            if (center, width) not in given
        ]
    return presets[:MAX_WINDOW_PRESETS], max(len(presets) - MAX_WINDOW_PRESETS, 0)


def linear_window(values: NDArray[np.float64], center: float, width: float) -> NDArray[np.uint8]:
    """DICOM's linear VOI function (PS3.3 C.11.2.1.2.1) onto 0-255: values up to
    ``center - 0.5 - (width - 1) / 2`` black, above ``center - 0.5 + (width - 1) / 2`` white,
    linear between."""
    if width <= 1:
        return np.where(values <= center - 0.5, 0, 255).astype(np.uint8)
    scaled = ((values - (center - 0.5)) / (width - 1) + 0.5) * 255.0
    return np.round(np.clip(scaled, 0.0, 255.0)).astype(np.uint8)


def render_window(data: bytes, name: Path, frame: int | None, center: float, width: float) -> bytes:
    """The PNG of a DICOM file's frame windowed at ``center``/``width`` from its raw values
    (after its modality LUT: HU for CT), inverted for MONOCHROME1 as the sent image is."""
    values, dataset = _raw_values(name, data, frame)
    image = linear_window(values, center, width)
    if dataset.get("PhotometricInterpretation") == "MONOCHROME1":
        image = 255 - image
    buffer = io.BytesIO()
    Image.fromarray(image, mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def _decoded(path: Path, data: bytes | None) -> tuple[Any, Any]:
    """The dataset and its pixel array, read from ``data`` (the file's bytes as already
    read) or else from ``path``, within the pixel budget; ImagePathError naming the file
    when it cannot be read or decoded."""
    import pydicom

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
    return dataset, pixels


def _one_frame(path: Path, dataset: Any, pixels: Any, frame: int | None) -> Any:
    """The frame asked for (the middle one by default) of a multi-frame file; a single
    frame's pixels as they are."""
    frames = int(dataset.get("NumberOfFrames", 1) or 1)
    if frames <= 1:
        return pixels
    index = frames // 2 if frame is None else frame
    if not 0 <= index < frames:
        raise ImagePathError(f"{path.name}: frame {index} requested, the file has {frames}")
    return pixels[index]


def _raw_values(path: Path, data: bytes, frame: int | None) -> tuple[NDArray[np.float64], Any]:
    """A greyscale frame's values after the modality LUT, and the dataset; ImagePathError
    naming the file when it cannot be read or is in colour."""
    from pydicom.pixels import apply_modality_lut

    dataset, pixels = _decoded(path, data)
    if int(dataset.get("SamplesPerPixel", 1) or 1) != 1:
        raise ImagePathError(f"{path.name}: a colour image has no window")
    pixels = _one_frame(path, dataset, pixels, frame)
    return apply_modality_lut(pixels, dataset).astype(np.float64), dataset


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
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    dataset, pixels = _decoded(path, data)
    if int(dataset.get("NumberOfFrames", 1) or 1) <= 1 and frame not in (None, 0):
        raise ImagePathError(f"{path.name}: frame {frame} requested, the file has one frame")
    pixels = _one_frame(path, dataset, pixels, frame)
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
    source = hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256(source.encode())
    digest.update(f":frame={frame}:{SOURCE_CHUNK}".encode())
    target = cache_dir() / f"{digest.hexdigest()}.png"
    with contextlib.suppress(OSError):
        return target.read_bytes()
    buffer = io.BytesIO()
    # The file's digest and frame in a text chunk: two DICOMs whose windowed pictures are
    # the same still give two PNGs, so the image store (which names a file by its bytes)
    # keeps them apart and an image shift degrades each from its own raw values.
    info = PngInfo()
    info.add_text(SOURCE_CHUNK, f"sha256={source};frame={frame}")
    dicom_to_image(name, frame, data=data).save(buffer, format="PNG", pnginfo=info)
    png = buffer.getvalue()
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
        write_cache_file(target, png)
    return png
