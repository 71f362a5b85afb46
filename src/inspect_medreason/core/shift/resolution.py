"""Loss of detail: Gaussian blur (the system's point-spread function), downsampling (a coarser
detector matrix) and JPEG compression (lossy storage or transmission).

Blur's standard deviation is given at a 512-pixel reference width and scaled to the image,
so a severity means the same loss of anatomy on a 256- or a 3000-pixel image; its frequency
response is ``exp(-2 pi^2 sigma^2 f^2)``. Downsampling averages blocks of ``factor`` x
``factor`` pixels (each detector element integrates its area) and shows the result at the
original size (bilinear), so the model sees fewer independent pixels, not a smaller image.
JPEG round-trips the 8-bit image through Pillow's encoder at a quality (MedMNIST-C's
``jpeg_compression`` corruption, qualities 50 to 7 over its five severities).
"""

from __future__ import annotations

import io

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from scipy import ndimage

FloatArray = NDArray[np.float64]

REFERENCE_WIDTH = 512


def scaled_sigma(sigma_at_reference: float, width: int) -> float:
    return sigma_at_reference * width / REFERENCE_WIDTH


def gaussian_blur(image: FloatArray, sigma: float) -> FloatArray:
    """Blur each channel in the image plane by ``sigma`` pixels (edges mirrored)."""
    sigmas = (sigma, sigma, 0.0) if image.ndim == 3 else (sigma, sigma)
    return np.asarray(ndimage.gaussian_filter(image, sigmas, mode="reflect"), dtype=np.float64)


def downsample(image: FloatArray, factor: int) -> FloatArray:
    """Block-average by ``factor``, then back to the original size bilinearly."""
    rows, columns = image.shape[:2]
    small_rows, small_columns = max(1, rows // factor), max(1, columns // factor)
    channels = [image] if image.ndim == 2 else [image[..., c] for c in range(image.shape[2])]
    restored = []
    for channel in channels:
        picture = Image.fromarray(channel.astype(np.float32), mode="F")
        small = picture.resize((small_columns, small_rows), Image.Resampling.BOX)
        restored.append(np.asarray(small.resize((columns, rows), Image.Resampling.BILINEAR)))
    stacked = restored[0] if image.ndim == 2 else np.stack(restored, axis=-1)
    return np.asarray(stacked, dtype=np.float64)


def jpeg_round_trip(image: Image.Image, quality: int) -> Image.Image:
    """The image as a JPEG decoder shows it after Pillow encodes it at ``quality``."""
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        decoded.load()
        return decoded.copy()
