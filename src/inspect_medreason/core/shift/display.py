"""Display shifts: a gamma curve, a mis-set contrast window, brightness and contrast.

All act on display values in [0, 1]. Gamma ``v ** gamma`` (gamma > 1 darkens mid-tones; the
``gamma_corr`` corruption of MedMNIST-C). A window shift models a viewer or export with the
wrong window level and width: the window's centre moves by ``center_shift`` of the range and
its width is multiplied by ``width_factor`` (< 1 narrows it), so tones outside the new window
clip to black or white, as a wrong CT window hides soft tissue or bone. Brightness and
contrast are Pillow's ``ImageEnhance`` (MedMNIST-C's ``brightness_up/down`` and
``contrast_up/down``): brightness scales every value by a factor, contrast moves every value
away from (factor > 1) or towards (< 1) the picture's mean grey.

Gamma and window change a colour picture through its luminance (Rec. 709 weights on the display values):
each pixel's three channels are multiplied by the same ``new / old`` luminance ratio, so its
hue and saturation stay (a fundus photograph under a window gets darker or lighter, never
redder), where a channel-by-channel curve would move each channel differently.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

LUMA_WEIGHTS = np.array([0.2126, 0.7152, 0.0722])
# Pillow's "L" conversion (ITU-R 601-2), whose mean ImageEnhance.Contrast blends with
PILLOW_L_WEIGHTS = np.array([0.299, 0.587, 0.114])


def luminance(values: FloatArray) -> FloatArray:
    if values.ndim == 2:
        return values
    return np.asarray(values @ LUMA_WEIGHTS, dtype=np.float64)


def on_luminance(values: FloatArray, curve: Callable[[FloatArray], FloatArray]) -> FloatArray:
    """``curve`` applied to a grey picture, or to a colour one's luminance (channels scaled
    together; a black pixel, whose ratio is undefined, becomes the new grey)."""
    if values.ndim == 2:
        return curve(values)
    old = luminance(values)
    new = curve(old)
    ratio = np.divide(new, old, out=np.zeros_like(new), where=old > 1e-9)
    scaled = values * ratio[..., None]
    black = old <= 1e-9
    scaled[black] = new[black][:, None]
    return np.asarray(np.clip(scaled, 0.0, 1.0), dtype=np.float64)


def gamma(values: FloatArray, exponent: float) -> FloatArray:
    return np.asarray(np.clip(values, 0.0, 1.0) ** exponent, dtype=np.float64)


def window_shift(values: FloatArray, center_shift: float, width_factor: float) -> FloatArray:
    center = 0.5 + center_shift
    shifted = (values - center) / width_factor + 0.5
    return np.asarray(np.clip(shifted, 0.0, 1.0), dtype=np.float64)


def brightness(values: FloatArray, factor: float) -> FloatArray:
    """Pillow's ``ImageEnhance.Brightness``: a blend with black, ``v * factor``."""
    return np.asarray(np.clip(values * factor, 0.0, 1.0), dtype=np.float64)


def contrast(values: FloatArray, factor: float) -> FloatArray:
    """Pillow's ``ImageEnhance.Contrast``: a blend with the mean grey ``m`` of the picture
    (its "L" conversion), ``m + factor (v - m)``, on every channel."""
    grey = values if values.ndim == 2 else values @ PILLOW_L_WEIGHTS
    # Pillow blends with the mean rounded to a whole 8-bit level
    mean = int(float(grey.mean()) * 255.0 + 0.5) / 255.0
    return np.asarray(np.clip(mean + factor * (values - mean), 0.0, 1.0), dtype=np.float64)
