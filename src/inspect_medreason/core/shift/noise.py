"""Noise at a physical level: quantum (Poisson) noise at a dose fraction, Rician noise at an
SNR, speckle.

Quantum noise (X-ray, photographs). A detector counts photons; their number in a pixel is
Poisson distributed with a mean proportional to the dose. The clean image is taken as the
noise-free expectation at full dose, ``photons_full_dose`` photons per pixel for an
unattenuated beam (or a full-scale photographic pixel); that number is set per unit area
(``photons_per_pixel``), so a severity is one dose per mm^2 at any matrix size. At a dose fraction ``f`` a pixel's
count is ``Poisson(f * N)`` with ``N`` its full-dose mean, and the value read back is the
count divided by ``f`` (the detector's gain): mean unchanged, variance ``N / f`` in counts.
This is the noise model of low-dose simulation from a normal-dose acquisition (Zeng et al.,
IEEE TNS 2015; Yu et al., Med Phys 2012), applied in the linear (counts) domain.

For a radiograph the display value is a line integral of attenuation ``p`` (bright =
attenuating), so counts are ``N = N0 * exp(-p)`` (Beer-Lambert) and ``p`` is read back as
``-log(count / (f * N0))``: the variance of ``p`` is ``1 / (f * N0 * exp(-p))`` to first
order, largest where the beam is most attenuated, as in a real low-dose film.

CT. The noise of a reconstructed CT slice is nearly stationary: filtered back-projection
spreads each projection's photon noise over the whole slice, so its level is set by the
photons that crossed the patient (the water-equivalent path), not by the pixel's own HU (air
and bone get the same noise). ``ct_noise_sigma_hu`` is the spread in HU of a pixel whose
counts crossed ``water_line_integral`` of water: the line integral's spread ``sqrt(e^p / (f N))``
in HU (``1000 / p_water`` HU per unit of line integral). It is drawn white and Gaussian,
independent of the pixel (a real scan's noise is also correlated by the reconstruction kernel,
which is not simulated).

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


def photons_per_pixel(
    photons_per_reference_pixel: float, reference_matrix: int, shape: tuple[int, ...]
) -> float:
    """Full-dose photons per pixel of an image of ``shape`` (rows, columns, ...): the dose of
    a ``reference_matrix`` square matrix over the same area, shared by this image's pixels.
    An image of fewer pixels than the reference gets the reference pixel's dose per pixel:
    a model sees it enlarged, so nothing averages its noise away, and a coarse image would
    otherwise get so many photons per pixel that a mild dose changed nothing."""
    rows, columns = shape[0], shape[1]
    share = min(1.0, reference_matrix**2 / max(rows * columns, 1))
    return photons_per_reference_pixel * share


def ct_noise_sigma_hu(
    dose_fraction: float, photons_per_pixel: float, water_line_integral: float
) -> float:
    """The spread in HU of a CT pixel at ``dose_fraction`` of the dose (see the module)."""
    if not 0.0 < dose_fraction <= 1.0:
        raise ValueError(f"dose fraction {dose_fraction} is not in (0, 1]")
    spread = np.sqrt(np.exp(water_line_integral) / (dose_fraction * photons_per_pixel))
    return float(spread * 1000.0 / water_line_integral)


def ct_quantum(hounsfield: FloatArray, sigma_hu: float, rng: np.random.Generator) -> FloatArray:
    """Stationary Gaussian noise of ``sigma_hu`` on every pixel, whatever its HU."""
    return np.asarray(hounsfield + rng.normal(0.0, sigma_hu, hounsfield.shape), dtype=np.float64)


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


def speckle(values: FloatArray, sigma: float, rng: np.random.Generator) -> FloatArray:
    """Multiplicative noise ``v (1 + n)``, ``n ~ N(0, sigma)``: MedMNIST-C's ``speckle_noise``
    (the granular texture of coherent imaging, ultrasound's speckle, whose spread grows with
    the echo's brightness)."""
    return np.asarray(values * (1.0 + rng.normal(0.0, sigma, values.shape)), dtype=np.float64)
