"""One image through one shift: decode, degrade in the model's domain, write a cached PNG.

A degraded image is kept on disk under the cache folder (``$INSPECT_MEDREASON_CACHE_DIR``,
``shift/``), named by the digest of everything that makes it: the image's bytes (a DICOM's
own bytes and frame), the model and its parameters, the seed, the case and the image's
place in it. The noise is drawn from a generator seeded by the same facts, so a run, a
re-run and another machine see the same pixels. Images are processed one at a time.

DICOM: an acquisition model (noise, bias field, ghosting, blur, downsampling) is applied to
the raw values after the modality LUT (Hounsfield units for CT) and before the window, and
the clean image's window is used to show it; the display models (JPEG, gamma, window) act
on the windowed picture, as they would on an exported one.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from inspect_medreason.core.dicom import converted_from, dicom_to_image
from inspect_medreason.core.files import write_cache_file
from inspect_medreason.core.images import cache_root
from inspect_medreason.core.shift import display, mr_artefacts, noise, resolution
from inspect_medreason.core.shift.catalog import ACQUISITION_MODELS, MODEL_PARAMETERS

FloatArray = NDArray[np.float64]

# Bumped whenever a model's code changes what it draws: old cached images are then not reused.
CACHE_VERSION = "1"
RAW_PERCENTILES = (0.5, 99.5)


def cache_dir() -> Path:
    return cache_root() / "shift"


@functools.lru_cache(maxsize=65536)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, computed once per process per (path, size, mtime)."""
    stat = path.stat()
    return _file_digest(os.path.realpath(path), stat.st_size, stat.st_mtime_ns)


def image_generator(seed: int, case_id: str, index: int, digest: str) -> np.random.Generator:
    """The random generator of one image of one case: the same facts, the same draws."""
    material = json.dumps([seed, case_id, index, digest]).encode()
    words = np.frombuffer(hashlib.sha256(material).digest(), dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(words.tolist()))


def srgb_to_linear(values: FloatArray) -> FloatArray:
    """Display (sRGB-encoded) values to linear light, IEC 61966-2-1."""
    return np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(values: FloatArray) -> FloatArray:
    values = np.clip(values, 0.0, 1.0)
    return np.where(values <= 0.0031308, values * 12.92, 1.055 * values ** (1 / 2.4) - 0.055)


def degrade_values(
    values: FloatArray, model: str, parameters: dict[str, Any], rng: np.random.Generator
) -> FloatArray:
    """Apply ``model`` to display values in [0, 1] (rows x columns, or x channels)."""
    rows, columns = values.shape[:2]
    if model == "poisson_transmission":
        top = float(parameters["max_line_integral"])
        noisy = noise.poisson_transmission(
            values * top, parameters["dose_fraction"], parameters["photons_full_dose"], rng
        )
        return noisy / top
    if model == "poisson_linear":
        linear = noise.poisson_linear(
            srgb_to_linear(np.clip(values, 0.0, 1.0)),
            parameters["dose_fraction"],
            parameters["photons_full_dose"],
            rng,
        )
        return linear_to_srgb(linear)
    if model == "rician":
        sigma = noise.foreground_mean(values) / float(parameters["snr"])
        return noise.rician(values, sigma, rng)
    if model == "bias_field":
        field = mr_artefacts.bias_field(
            (rows, columns), parameters["coefficient_magnitude"], parameters["order"], rng
        )
        return values * (field[..., None] if values.ndim == 3 else field)
    if model == "motion_ghosting":
        shift = float(parameters["shift_pixels_at_256"]) * rows / 256.0
        channels = [values] if values.ndim == 2 else [values[..., c] for c in range(3)]
        ghosted = [
            mr_artefacts.motion_ghosting(c, shift, parameters["period_lines"], 0, rng)
            for c in channels
        ]
        return ghosted[0] if values.ndim == 2 else np.stack(ghosted, axis=-1)
    if model == "gaussian_blur":
        sigma = resolution.scaled_sigma(parameters["sigma_pixels_at_512"], columns)
        return resolution.gaussian_blur(values, sigma)
    if model == "downsample":
        return resolution.downsample(values, int(parameters["factor"]))
    if model == "gamma":
        return display.gamma(values, float(parameters["gamma"]))
    if model == "window":
        return display.window_shift(
            values, float(parameters["center_shift"]), float(parameters["width_factor"])
        )
    raise ValueError(f"no array model {model!r}")


def _is_ct(dataset: Any) -> bool:
    return str(dataset.get("Modality", "")).upper() == "CT"


def degrade_raw(
    values: FloatArray,
    dataset: Any,
    model: str,
    parameters: dict[str, Any],
    rng: np.random.Generator,
) -> FloatArray:
    """An acquisition model on a DICOM's raw values (after the modality LUT). CT quantum
    noise uses Hounsfield units as attenuation (``p = p_water * (1 + HU/1000)``); every other
    case maps the values' 0.5-99.5 percentile range to [0, 1] (MONOCHROME1 inverted, so
    bright means attenuating) and back."""
    if model == "poisson_transmission" and _is_ct(dataset):
        water = float(parameters["water_line_integral"])
        line = np.clip(water * (1.0 + values / 1000.0), 0.0, None)
        noisy = noise.poisson_transmission(
            line, parameters["dose_fraction"], parameters["photons_full_dose"], rng
        )
        return np.asarray((noisy / water - 1.0) * 1000.0, dtype=np.float64)
    low, high = (float(v) for v in np.percentile(values, RAW_PERCENTILES))
    span = max(high - low, 1e-9)
    scaled = (values - low) / span
    inverted = dataset.get("PhotometricInterpretation") == "MONOCHROME1"
    if inverted:
        scaled = 1.0 - scaled
    degraded = degrade_values(scaled, model, parameters, rng)
    if inverted:
        degraded = 1.0 - degraded
    return np.asarray(degraded * span + low, dtype=np.float64)


def _as_values(image: Image.Image) -> tuple[FloatArray, str, float]:
    """An image as values in [0, 1], the mode to write back and its full scale."""
    if image.mode.startswith("I;16") or image.mode == "I":
        return np.asarray(image, dtype=np.float64) / 65535.0, "I;16", 65535.0
    if image.mode in ("L", "LA", "1", "F"):
        gray = image.convert("L")
        return np.asarray(gray, dtype=np.float64) / 255.0, "L", 255.0
    rgb = np.asarray(image.convert("RGB"), dtype=np.float64) / 255.0
    if np.array_equal(rgb[..., 0], rgb[..., 1]) and np.array_equal(rgb[..., 0], rgb[..., 2]):
        # a grey picture stored as RGB: one channel, so its noise is grey too
        return rgb[..., 0], "L", 255.0
    return rgb, "RGB", 255.0


def _to_image(values: FloatArray, mode: str, scale: float) -> Image.Image:
    quantised = np.round(np.clip(values, 0.0, 1.0) * scale)
    if mode == "I;16":
        return Image.fromarray(quantised.astype(np.uint16), mode="I;16")
    return Image.fromarray(quantised.astype(np.uint8), mode=mode)


def degrade_image(
    image: Image.Image, model: str, parameters: dict[str, Any], rng: np.random.Generator
) -> Image.Image:
    """``image`` through ``model`` (every model, JPEG included), in its own mode."""
    values, mode, scale = _as_values(image)
    if model == "jpeg":
        picture = _to_image(values, "L" if mode == "L" else "RGB", 255.0)
        return resolution.jpeg_round_trip(picture, int(parameters["quality"]))
    return _to_image(degrade_values(values, model, parameters, rng), mode, scale)


def degraded_path(
    path: Path,
    model: str,
    severity: int,
    seed: int,
    case_id: str,
    index: int,
) -> Path:
    """The cached degraded PNG of one case image (made on first use)."""
    parameters = MODEL_PARAMETERS[model][severity]
    source = converted_from(path)
    raw = source is not None and model in ACQUISITION_MODELS
    origin = source[0] if raw and source is not None else path
    frame = source[1] if raw and source is not None else None
    digest = file_digest(origin)
    key = hashlib.sha256(
        json.dumps(
            [CACHE_VERSION, digest, frame, raw, model, parameters, seed, case_id, index],
            sort_keys=True,
        ).encode()
    ).hexdigest()
    target = cache_dir() / f"{key}.png"
    if target.is_file():
        return target
    rng = image_generator(seed, case_id, index, digest)
    if raw:
        image = dicom_to_image(
            origin, frame, degrade=lambda v, ds: degrade_raw(v, ds, model, parameters, rng)
        )
    else:
        with Image.open(path) as opened:
            opened.load()
            image = degrade_image(opened, model, parameters, rng)
    encoded = io.BytesIO()
    image.save(encoded, format="PNG")
    return write_cache_file(target, encoded.getvalue())
