"""Noise at a physical level: quantum (Poisson) noise at a dose fraction, Rician noise at an SNR.

Quantum noise (X-ray, CT, photographs). A detector counts photons; their number in a pixel is
Poisson distributed with a mean proportional to the dose. The clean image is taken as the
noise-free expectation at full dose, ``photons_full_dose`` photons per pixel for an
unattenuated beam (or a full-scale photographic pixel). At a dose fraction ``f`` a pixel's
count is ``Poisson(f * N)`` with ``N`` its full-dose mean, and the value read back is the
count divided by ``f`` (the detector's gain): mean unchanged, variance ``N / f`` in counts.
This is the noise model of low-dose simulation from a normal-dose acquisition (Zeng et al.,
IEEE TNS 2015; Yu et al., Med Phys 2012), applied in the linear (counts) domain.

For a radiograph the display value is a line integral of attenuation ``p`` (bright =
attenuating), so counts are ``N = N0 * exp(-p)`` (Beer-Lambert) and ``p`` is read back as
``-log(count / (f * N0))``: the variance of ``p`` is ``1 / (f * N0 * exp(-p))`` to first
order, largest where the beam is most attenuated, as in a real low-dose film.

Rician noise (MR magnitude images). Complex Gaussian noise of standard deviation ``sigma`` on
the real and imaginary channels, then the magnitude: ``M = |A + n1 + i n2|`` (Gudbjartsson &
Patz, MRM 1995). ``E[M^2] = A^2 + 2 sigma^2`` exactly; ``sigma = S / SNR`` with ``S`` the mean
signal of the image's foreground.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# A count of zero has no logarithm: it is read as half a photon (the usual floor).
ZERO_COUNT_FLOOR = 0.5


def poisson_counts(
    expected: FloatArray, dose_fraction: float, rng: np.random.Generator
) -> FloatArray:
    """Counts at ``dose_fraction`` of the dose whose noise-free counts are ``expected``,
    rescaled to the full-dose scale (mean ``expected``, variance ``expected / f``)."""
    if not 0.0 < dose_fraction <= 1.0:
        raise ValueError(f"dose fraction {dose_fraction} is not in (0, 1]")
    counts = rng.poisson(np.clip(expected, 0.0, None) * dose_fraction)
    return counts.astype(np.float64) / dose_fraction


def poisson_linear(
    intensity: FloatArray, dose_fraction: float, photons_full_dose: float, rng: np.random.Generator
) -> FloatArray:
    """Shot noise on linear intensities in [0, 1] (1 = ``photons_full_dose`` photons)."""
    counts = poisson_counts(intensity * photons_full_dose, dose_fraction, rng)
    return counts / photons_full_dose


def poisson_transmission(
    line_integral: FloatArray,
    dose_fraction: float,
    photons_full_dose: float,
    rng: np.random.Generator,
) -> FloatArray:
    """Quantum noise on attenuation line integrals ``p``: Poisson counts of the transmitted
    beam ``N0 * exp(-p)`` at the dose fraction, read back as a line integral."""
    expected = photons_full_dose * np.exp(-line_integral)
    counts = rng.poisson(expected * dose_fraction).astype(np.float64)
    transmitted = np.maximum(counts, ZERO_COUNT_FLOOR) / (dose_fraction * photons_full_dose)
    return -np.log(transmitted)


def rician(signal: FloatArray, sigma: float, rng: np.random.Generator) -> FloatArray:
    """The magnitude of ``signal`` plus complex Gaussian noise of ``sigma`` per channel."""
    real = signal + rng.normal(0.0, sigma, signal.shape)
    imaginary = rng.normal(0.0, sigma, signal.shape)
    return np.hypot(real, imaginary)


def foreground_mean(values: FloatArray, fraction_of_max: float = 0.1) -> float:
    """The mean of the pixels above ``fraction_of_max`` of the maximum (MR background is
    air, whose signal would make every SNR look worse than the tissue's)."""
    peak = float(values.max()) if values.size else 0.0
    if peak <= 0.0:
        return 0.0
    foreground = values[values > fraction_of_max * peak]
    return float(foreground.mean()) if foreground.size else peak
