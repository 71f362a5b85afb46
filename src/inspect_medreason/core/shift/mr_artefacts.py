"""MR acquisition artefacts: a smooth multiplicative bias field, and the k-space artefacts
(motion ghosting, undersampling, Gibbs ringing, spikes).

Bias field. Receive-coil and B1 inhomogeneity multiply the image by a field that varies
slowly across it. As TorchIO's ``RandomBiasField`` (after Van Leemput et al., 1999), the
field is the exponential of a polynomial of order ``order`` in the normalised coordinates,
each coefficient drawn uniformly in ``[-0.5, 0.5]`` (TorchIO's default); its logarithm is
then stretched to span exactly ``[log(1 - u/2), log(1 + u/2)]`` for a peak-to-peak
non-uniformity ``u`` (BrainWeb's RF non-uniformity levels are 20% and 40%), so no severity
brightens any pixel by more than ``u/2``: what clips to white is bounded.

k-space. An MR image is the inverse Fourier transform of what the receiver sampled, one
phase-encoding line (a row of k-space) at a time. Every model below acts on the 2-D
spectrum of the whole image (each colour channel with the same lines, positions and phases,
so a colour image keeps its colours) and returns the magnitude, as a scanner shows it.

- Motion ghosting: an object that moves between lines leaves those lines with a phase ramp
  (a translation ``d`` is ``exp(-2 pi i k d / n)``). Periodic motion (breathing, pulsation)
  shifts every ``period``-th line and replicates the object as ghosts along the phase axis,
  the mechanism TorchIO's ``RandomGhosting`` and ``RandomMotion`` simulate.
- Undersampling: only some lines are acquired (parallel imaging, compressed sensing) and the
  rest are zero: fastMRI's ``RandomMaskFunc`` (Zbontar et al., arXiv:1811.08839), a fully
  sampled centre of ``centre_fraction`` of the lines and the others kept at random so that
  ``1 / acceleration`` of all lines are; zero-filled, it aliases and blurs.
- Gibbs ringing: a finite acquisition matrix truncates k-space; only the central
  ``kept_fraction`` of frequencies along each axis is kept, and edges ring.
- Spikes: a corrupt k-space sample (an RF burst, a discharge) adds one bright point, a
  stripe pattern across the whole image (herringbone), as TorchIO's ``RandomSpike``, whose
  intensity is the ratio of the spike to the spectrum's peak.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
ComplexArray = NDArray[np.complex128]

BIAS_COEFFICIENT_RANGE = 0.5


def bias_field(
    shape: tuple[int, int], nonuniformity: float, order: int, rng: np.random.Generator
) -> FloatArray:
    """A smooth positive field between ``1 - u/2`` and ``1 + u/2`` (both reached): ``exp`` of
    a polynomial ``sum c_ij x^i y^j`` over ``i + j <= order`` on coordinates in [-1, 1], its
    range stretched to the non-uniformity ``u``."""
    if not 0.0 < nonuniformity < 2.0:
        raise ValueError(f"non-uniformity {nonuniformity} is not in (0, 2)")
    rows, columns = shape
    y = np.linspace(-1.0, 1.0, rows)[:, None]
    x = np.linspace(-1.0, 1.0, columns)[None, :]
    exponent = np.zeros(shape)
    for i in range(order + 1):
        for j in range(order + 1 - i):
            coefficient = rng.uniform(-BIAS_COEFFICIENT_RANGE, BIAS_COEFFICIENT_RANGE)
            exponent = exponent + coefficient * (x**i) * (y**j)
    low, high = np.log(1.0 - nonuniformity / 2), np.log(1.0 + nonuniformity / 2)
    span = float(exponent.max() - exponent.min())
    if span <= 0.0:  # a constant polynomial (one pixel): no field to stretch
        return np.ones(shape)
    stretched = low + (exponent - exponent.min()) / span * (high - low)
    return np.asarray(np.exp(stretched), dtype=np.float64)


def _spectrum(image: FloatArray) -> ComplexArray:
    return np.asarray(np.fft.fft2(image, axes=(0, 1)), dtype=np.complex128)


def _magnitude(spectrum: ComplexArray) -> FloatArray:
    return np.asarray(np.abs(np.fft.ifft2(spectrum, axes=(0, 1))), dtype=np.float64)


def _per_line(weights: NDArray[np.complexfloating] | NDArray[np.floating], ndim: int) -> NDArray:
    """Weights of the phase-encoding lines (rows) shaped to multiply a spectrum."""
    return weights.reshape((-1,) + (1,) * (ndim - 1))


def motion_ghosting(
    image: FloatArray, shift_pixels: float, period: int, rng: np.random.Generator
) -> FloatArray:
    """Every ``period``-th phase-encoding line (a row of k-space, from a random start; the
    same lines for every channel) acquired with the object translated by ``shift_pixels``
    along the rows; magnitude returned."""
    size = image.shape[0]
    frequencies = np.fft.fftfreq(size)  # cycles per pixel, DC first
    start = int(rng.integers(0, period))
    moved = np.zeros(size, dtype=bool)
    moved[start::period] = True
    moved[0] = False  # the centre line (mean intensity) is acquired at rest
    ramp = np.where(moved, np.exp(-2j * np.pi * frequencies * shift_pixels), 1.0)
    return _magnitude(_spectrum(image) * _per_line(ramp, image.ndim))


def undersampling_mask(
    lines: int, acceleration: float, centre_fraction: float, rng: np.random.Generator
) -> NDArray[np.bool_]:
    """fastMRI's random mask over ``lines`` phase-encoding lines (DC first, as ``fftfreq``):
    the central ``centre_fraction`` all kept, each other kept with the probability that
    makes ``lines / acceleration`` kept in expectation."""
    centre = max(1, round(lines * centre_fraction))
    offsets = np.abs(np.fft.fftfreq(lines) * lines)  # distance of each line from DC
    in_centre = np.argsort(offsets, kind="stable")[:centre]
    keep = np.zeros(lines, dtype=bool)
    keep[in_centre] = True
    probability = (lines / acceleration - centre) / max(lines - centre, 1)
    keep |= rng.random(lines) < max(probability, 0.0)
    return keep


def kspace_undersampling(
    image: FloatArray, acceleration: float, centre_fraction: float, rng: np.random.Generator
) -> FloatArray:
    """The zero-filled reconstruction of the lines an ``undersampling_mask`` keeps."""
    keep = undersampling_mask(image.shape[0], acceleration, centre_fraction, rng)
    return _magnitude(_spectrum(image) * _per_line(keep.astype(np.float64), image.ndim))


def gibbs_truncation(image: FloatArray, kept_fraction: float) -> FloatArray:
    """Only the central ``kept_fraction`` of spatial frequencies along rows and columns
    (``|f| <= kept_fraction / 2`` cycles per pixel): a smaller acquisition matrix, shown at
    the original size (zero-filled), whose sharp edges ring."""
    rows = np.abs(np.fft.fftfreq(image.shape[0])) <= kept_fraction / 2
    columns = np.abs(np.fft.fftfreq(image.shape[1])) <= kept_fraction / 2
    window = np.outer(rows, columns).astype(np.float64)
    if image.ndim == 3:
        window = window[..., None]
    return _magnitude(_spectrum(image) * window)


def kspace_spike(
    image: FloatArray, spikes: int, intensity_of_peak: float, rng: np.random.Generator
) -> FloatArray:
    """``spikes`` bright points at random places of k-space (never the centre), each of
    ``intensity_of_peak`` times the spectrum's peak with a random phase (the same point and
    phase for every channel, scaled to each channel's own peak)."""
    spectrum = _spectrum(image)
    rows, columns = image.shape[:2]
    peak = np.abs(spectrum).max(axis=(0, 1))  # per channel
    for _ in range(spikes):
        # away from the centre: a spike there would only change the mean intensity
        row = int(rng.integers(1, rows)) if rows > 1 else 0
        column = int(rng.integers(1, columns)) if columns > 1 else 0
        phase = np.exp(2j * np.pi * rng.random())
        spectrum[row, column] = spectrum[row, column] + intensity_of_peak * peak * phase
    return _magnitude(spectrum)
