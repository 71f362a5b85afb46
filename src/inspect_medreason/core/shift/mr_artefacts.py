"""MR acquisition artefacts: a smooth multiplicative bias field and motion ghosting.

Bias field. Receive-coil and B1 inhomogeneity multiply the image by a field that varies
slowly across it. As TorchIO's ``RandomBiasField`` (after Van Leemput et al., 1999), the
field is the exponential of a polynomial of order ``order`` in the normalised coordinates,
each coefficient drawn uniformly in ``[-magnitude, magnitude]``; here it is then divided by
its own mean, so the image's mean intensity is kept and only its uniformity changes.

Motion ghosting. An image is acquired one phase-encoding line of k-space at a time; an
object that moves between lines leaves those lines with a phase ramp (a translation ``d`` is
``exp(-2 pi i k d / n)`` in k-space). Periodic motion (breathing, pulsation) shifts every
``period``-th line and replicates the object as ghosts along the phase-encoding axis, the
mechanism TorchIO's ``RandomGhosting`` and ``RandomMotion`` simulate in k-space.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def bias_field(
    shape: tuple[int, int], magnitude: float, order: int, rng: np.random.Generator
) -> FloatArray:
    """A smooth positive field of mean 1: ``exp(sum c_ij x^i y^j)`` over ``i + j <= order``
    on coordinates in [-1, 1], normalised by its mean."""
    rows, columns = shape
    y = np.linspace(-1.0, 1.0, rows)[:, None]
    x = np.linspace(-1.0, 1.0, columns)[None, :]
    exponent = np.zeros(shape)
    for i in range(order + 1):
        for j in range(order + 1 - i):
            exponent = exponent + rng.uniform(-magnitude, magnitude) * (x**i) * (y**j)
    field = np.exp(exponent)
    return np.asarray(field / field.mean(), dtype=np.float64)


def motion_ghosting(
    image: FloatArray, shift_pixels: float, period: int, axis: int, rng: np.random.Generator
) -> FloatArray:
    """Every ``period``-th phase-encoding line (along ``axis``, from a random start) acquired
    with the object translated by ``shift_pixels`` along that axis; magnitude returned."""
    size = image.shape[axis]
    spectrum = np.fft.fft2(image)
    frequencies = np.fft.fftfreq(size)  # cycles per pixel, DC first
    start = int(rng.integers(0, period))
    moved = np.zeros(size, dtype=bool)
    moved[start::period] = True
    moved[0] = False  # the centre line (mean intensity) is acquired at rest
    ramp = np.where(moved, np.exp(-2j * np.pi * frequencies * shift_pixels), 1.0)
    spectrum = spectrum * (ramp[:, None] if axis == 0 else ramp[None, :])
    return np.abs(np.fft.ifft2(spectrum))
