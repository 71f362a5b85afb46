"""No-reference measures of an image's quality: how blurred and how noisy it looks.

The image-sensitive reference model (``medreason/image-sensitive``, ``core.offline_model``)
answers from them, so that a shift's probe can be watched detecting a drop offline. Two
published measures, in numpy and scipy:

- **Blur**: Crété-Roffet et al.'s perceptual blur metric ("The blur effect: perception and
  estimation with a new no-reference perceptual blur metric", Proc. SPIE 6492, 2007; the
  definition scikit-image's ``measure.blur_effect`` implements): blur the image again along
  each axis with an 11-pixel box and measure how much of its neighbour-to-neighbour
  variation that removes; a sharp image loses much (metric near 0), a blurred one little
  (near 1). The worse axis counts.
- **Noise**: Immerkær's fast noise estimate ("Fast noise variance estimation", Comput Vis
  Image Underst 64(2):300-302, 1996): the mean absolute response to a Laplacian-difference
  mask that cancels smooth structure, scaled to the standard deviation of white Gaussian
  noise on the [0, 1] display scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from scipy import ndimage

BLUR_BOX = 11  # Crété-Roffet et al.'s re-blurring filter length (and scikit-image's default)
IMMERKAER_MASK = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=float)
# Measured on a smaller copy: a model sees a few hundred pixels a side, and the measures
# then cost milliseconds on any matrix size.
MEASURE_SIDE = 256


@dataclass(frozen=True)
class ImageQuality:
    blur: float  # 0 sharp .. 1 blurred
    noise: float  # noise standard deviation on the [0, 1] scale


def grey_values(image: Image.Image) -> NDArray[np.float64]:
    """The image's luminance in [0, 1], on a copy no larger than ``MEASURE_SIDE`` a side."""
    picture = image.convert("L")
    if max(picture.size) > MEASURE_SIDE:
        picture.thumbnail((MEASURE_SIDE, MEASURE_SIDE), Image.Resampling.BOX)
    return np.asarray(picture, dtype=float) / 255.0


def blur_effect(values: NDArray[np.float64]) -> float:
    """Crété-Roffet et al.'s blur metric of a grey image, the worse of its two axes."""
    worst = 0.0
    for axis in (0, 1):
        if values.shape[axis] < 2:
            continue
        reblurred = ndimage.uniform_filter1d(values, BLUR_BOX, axis=axis, mode="reflect")
        variation = np.abs(np.diff(values, axis=axis))
        kept = np.abs(np.diff(reblurred, axis=axis))
        lost = np.maximum(0.0, variation - kept)
        total = float(variation.sum())
        worst = max(worst, 1.0 - float(lost.sum()) / total if total > 0 else 1.0)
    return worst


def immerkaer_noise(values: NDArray[np.float64]) -> float:
    """Immerkær's estimate of the noise standard deviation of a grey image."""
    rows, columns = values.shape
    if rows < 3 or columns < 3:
        return 0.0
    response = ndimage.convolve(values, IMMERKAER_MASK, mode="reflect")[1:-1, 1:-1]
    return (
        math.sqrt(math.pi / 2.0)
        * float(np.abs(response).sum())
        / (6.0 * (rows - 2) * (columns - 2))
    )


def measure(image: Image.Image) -> ImageQuality:
    values = grey_values(image)
    return ImageQuality(blur_effect(values), immerkaer_noise(values))


# The reference model's clarity: 1 - blur, times a noise penalty exp(-noise / NOISE_SCALE).
# Chosen on the demo images (docs/shift.md): their clean clarity is 0.4-0.9, blur or
# downsampling at severity 3 takes 0.1-0.35 off it, Poisson noise at severity 3 0.1-0.25.
NOISE_SCALE = 0.05


def clarity(quality: ImageQuality) -> float:
    """How clearly the reference model sees an image: 0 (nothing) to 1."""
    return (1.0 - quality.blur) * math.exp(-quality.noise / NOISE_SCALE)
