"""One image through one shift: decode, degrade in the model's domain, write a cached PNG.

A degraded image is kept on disk under the cache folder (``$INSPECT_MEDREASON_CACHE_DIR``,
``shift/``), named by the digest of everything that makes it: the image's bytes (a DICOM's
own bytes and frame), the model and its parameters, the seed, the case and the image's
place in it. The noise is drawn from a generator seeded by the same facts, so a run, a
re-run and another machine see the same pixels. Images are processed one at a time.

DICOM: an acquisition model set in absolute units or linear and shift-invariant (dose noise,
blur, downsampling, undersampling, Gibbs truncation) is applied to the raw values after the
modality LUT (Hounsfield units for CT) and before the window, and the clean image's window is
used to show it; the models whose strength is relative to the intensities
(``DISPLAY_SPACE_MODELS``: Rician noise, bias field, speckle, ghosting, spike) and the display
models (JPEG, gamma, window) act on the windowed picture, as they would on an exported one.
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
from inspect_medreason.core.shift import display, mr_artefacts, noise, resolution, stain
from inspect_medreason.core.shift.catalog import ACQUISITION_MODELS, MODEL_PARAMETERS

FloatArray = NDArray[np.float64]

# Bumped whenever a model's code changes what it draws: old cached images are then not reused.
CACHE_VERSION = "3"
RAW_PERCENTILES = (0.5, 99.5)
# Acquisition models whose strength is set relative to the intensities they act on (a noise
# at an SNR of the foreground, a field, speckle, k-space ghosts and spikes moving a share of
# the signal): on a greyscale DICOM's raw values the window then amplifies them by the raw
# range over the window's width (bias field at severity 1: 21.0 dB against 40.9 dB on the
# same picture as a PNG). They act on the windowed picture instead, as on a PNG, so a
# severity is as strong in either format.
DISPLAY_SPACE_MODELS = frozenset(
    {"rician", "bias_field", "speckle", "motion_ghosting", "kspace_spike"}
)


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


def _photons(parameters: dict[str, Any], shape: tuple[int, ...]) -> float:
    return noise.photons_per_pixel(
        float(parameters["photons_per_reference_pixel"]),
        int(parameters["reference_matrix"]),
        shape,
    )


def _ct_sigma_hu(parameters: dict[str, Any], shape: tuple[int, ...]) -> float:
    return noise.ct_noise_sigma_hu(
        float(parameters["dose_fraction"]),
        _photons(parameters, shape),
        float(parameters["water_line_integral"]),
    )


def degrade_values(
    values: FloatArray, model: str, parameters: dict[str, Any], rng: np.random.Generator
) -> FloatArray:
    """Apply ``model`` to display values in [0, 1] (rows x columns, or x channels)."""
    rows, columns = values.shape[:2]
    if model == "poisson_transmission":
        top = float(parameters["max_line_integral"])
        noisy = noise.poisson_transmission(
            values * top, parameters["dose_fraction"], _photons(parameters, values.shape), rng
        )
        return noisy / top
    if model == "ct_quantum":
        # a CT picture without HU: its values read through the assumed window
        _, width = (float(v) for v in parameters["picture_window_hu"])
        sigma = _ct_sigma_hu(parameters, values.shape) / width
        return noise.ct_quantum(values, sigma, rng)
    if model == "poisson_linear":
        linear = noise.poisson_linear(
            srgb_to_linear(np.clip(values, 0.0, 1.0)),
            parameters["dose_fraction"],
            _photons(parameters, values.shape),
            rng,
        )
        return linear_to_srgb(linear)
    if model == "rician":
        sigma = noise.foreground_mean(values) / float(parameters["snr"])
        return noise.rician(values, sigma, rng)
    if model == "speckle":
        return noise.speckle(values, float(parameters["sigma"]), rng)
    if model == "bias_field":
        field = mr_artefacts.bias_field(
            (rows, columns), parameters["nonuniformity"], parameters["order"], rng
        )
        return values * (field[..., None] if values.ndim == 3 else field)
    if model == "motion_ghosting":
        shift = float(parameters["shift_pixels_at_256"]) * rows / 256.0
        return mr_artefacts.motion_ghosting(values, shift, int(parameters["period_lines"]), rng)
    if model == "kspace_undersampling":
        return mr_artefacts.kspace_undersampling(
            values, float(parameters["acceleration"]), float(parameters["centre_fraction"]), rng
        )
    if model == "gibbs_truncation":
        return mr_artefacts.gibbs_truncation(values, float(parameters["kept_fraction"]))
    if model == "kspace_spike":
        return mr_artefacts.kspace_spike(
            values, int(parameters["spikes"]), float(parameters["intensity_of_peak"]), rng
        )
    if model == "hed_jitter":
        return stain.hed_jitter(
            values, float(parameters["scale_sigma"]), float(parameters["bias_sigma"]), rng
        )
    if model == "gaussian_blur":
        sigma = max(
            resolution.scaled_sigma(parameters["sigma_pixels_at_512"], columns),
            float(parameters["min_sigma_pixels"]),
        )
        return resolution.gaussian_blur(values, sigma)
    if model == "downsample":
        return resolution.downsample(values, int(parameters["factor"]))
    if model == "gamma":
        exponent = float(parameters["gamma"])
        return display.on_luminance(values, lambda v: display.gamma(v, exponent))
    if model == "window":
        centre, width = float(parameters["center_shift"]), float(parameters["width_factor"])
        return display.on_luminance(values, lambda v: display.window_shift(v, centre, width))
    if model in ("brightness_up", "brightness_down"):
        return display.brightness(values, float(parameters["factor"]))
    if model in ("contrast_up", "contrast_down"):
        return display.contrast(values, float(parameters["factor"]))
    raise ValueError(f"no array model {model!r}")


def _is_ct(dataset: Any) -> bool:
    return str(dataset.get("Modality", "")).upper() == "CT"


class NotHounsfieldError(ValueError):
    """A CT DICOM whose stored values are not known to be Hounsfield units."""


def degrade_raw(
    values: FloatArray,
    dataset: Any,
    model: str,
    parameters: dict[str, Any],
    rng: np.random.Generator,
) -> FloatArray:
    """An acquisition model on a greyscale DICOM's raw values (after the modality LUT). CT
    noise is added in Hounsfield units, the same spread on every pixel (``ct_quantum``);
    every other case maps the values' 0.5-99.5 percentile range to [0, 1] (MONOCHROME1
    inverted, so bright means attenuating) and back."""
    if model in ("ct_quantum", "poisson_transmission") and _is_ct(dataset):
        if "RescaleSlope" not in dataset or "RescaleIntercept" not in dataset:
            # without the rescale the stored values are the scanner's, not HU: a noise set
            # in HU would be of an unknown size
            raise NotHounsfieldError(
                "a CT DICOM without RescaleSlope and RescaleIntercept: its stored values are "
                "not known to be Hounsfield units, so CT noise (set in HU) cannot be sized; "
                "add the file's rescale tags, or run another shift"
            )
        ct_parameters = MODEL_PARAMETERS["ct_quantum"][_severity_of(model, parameters)]
        sigma = _ct_sigma_hu(ct_parameters, values.shape)
        return noise.ct_quantum(values, sigma, rng)
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


def _severity_of(model: str, parameters: dict[str, Any]) -> int:
    """The severity whose parameters these are (a CT DICOM given the X-ray model's: the
    same dose fraction in the CT model)."""
    for severity, known in MODEL_PARAMETERS[model].items():
        if known == parameters:
            return severity
    raise ValueError(f"parameters {parameters!r} are not a severity of {model!r}")


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
        # Pillow infers I;16 from the array (it refuses the mode named with a uint16 array)
        return Image.fromarray(quantised.astype("<u2"))
    return Image.fromarray(quantised.astype(np.uint8), mode=mode)


def degrade_image(
    image: Image.Image, model: str, parameters: dict[str, Any], rng: np.random.Generator
) -> Image.Image:
    """``image`` through ``model`` (every model, JPEG included), in its own mode."""
    values, mode, scale = _as_values(image)
    if model == "jpeg":
        picture = _to_image(values, "L" if values.ndim == 2 else "RGB", 255.0)
        return resolution.jpeg_round_trip(picture, int(parameters["quality"]))
    return _to_image(degrade_values(values, model, parameters, rng), mode, scale)


class UnchangedImageError(ValueError):
    """A degraded image whose pixels are the clean image's: the shift did not happen."""


def _greyscale_dicom(path: Path) -> bool:
    """Whether a DICOM holds one greyscale sample per pixel (MONOCHROME1 or 2), whose raw
    values an acquisition model can act on; a colour one (RGB, YBR_*, PALETTE COLOR) is
    degraded as the picture it was converted to, as a photograph is."""
    import pydicom

    try:
        dataset = pydicom.dcmread(str(path), stop_before_pixels=True)
    except Exception:  # pydicom raises many types for one condition; the conversion names it
        return False
    photometric = str(dataset.get("PhotometricInterpretation") or "MONOCHROME2").upper()
    samples = int(dataset.get("SamplesPerPixel", 1) or 1)
    return samples == 1 and photometric in ("MONOCHROME1", "MONOCHROME2")


def _check_changed(clean: Path, degraded: bytes, model: str, severity: int) -> None:
    """Refuse a degraded image whose pixels equal the clean ones (a uniform image under a
    blur, an image too small or too flat for the effect): a log would record a shift that
    did not happen. Both are read as a shift reads an image (a grey picture stored as RGB
    is grey) and compared at the degraded one's depth."""
    with Image.open(io.BytesIO(degraded)) as shifted, Image.open(clean) as original:
        after, _, scale = _as_values(shifted)
        before, _, _ = _as_values(original)
    # both at the degraded image's depth (a 16-bit image's JPEG is 8-bit)
    if before.shape == after.shape and np.array_equal(
        np.round(before * scale), np.round(after * scale)
    ):
        rows, columns = before.shape[:2]
        flat = " (every pixel has the same value)" if before.min() == before.max() else ""
        raise UnchangedImageError(
            f"{model} at severity {severity} leaves every pixel of this {columns} x {rows} "
            f"image unchanged{flat}, so the model would be sent the clean image under a "
            "shifted name; leave this image out of the shifted run or pick another shift"
        )


def degraded_path(
    path: Path,
    model: str,
    severity: int,
    seed: int,
    case_id: str,
    index: int,
) -> Path:
    """The cached degraded PNG of one case image (made on first use). Raises
    UnchangedImageError when the degraded pixels are the clean ones, NotHounsfieldError for
    CT noise on a CT DICOM without its rescale, ValueError for a model that cannot act on
    the image (stain variation on a greyscale one)."""
    parameters = MODEL_PARAMETERS[model][severity]
    source = converted_from(path)
    raw = (
        source is not None
        and model in ACQUISITION_MODELS
        and model not in DISPLAY_SPACE_MODELS
        and _greyscale_dicom(source[0])
    )
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
    _check_changed(path, encoded.getvalue(), model, severity)
    return write_cache_file(target, encoded.getvalue())
