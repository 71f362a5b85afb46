"""Pathology stain variation: haematoxylin and eosin uptake jittered in the HED space.

Labs stain and scan differently, so the same tissue arrives bluer, pinker, paler or darker.
Colour deconvolution (Ruifrok & Johnston, Anal Quant Cytol Histol 23(4), 2001) separates an
RGB bright-field picture into its haematoxylin, eosin and DAB optical densities with their
stain vectors (scikit-image's ``rgb2hed``/``hed2rgb``, whose matrix and scaling are used here).
Tellez et al. ("Whole-slide mitosis detection in H&E breast histology using PHH3 as a
reference to train distilled stain-invariant convolutional networks", IEEE TMI 37(9), 2018)
vary each stain's density as ``s' = alpha s + beta`` with ``alpha ~ U(1 - sigma, 1 + sigma)``
and ``beta ~ U(-sigma, sigma)``; sigma 0.05 is the "HED-light" and 0.2 the "HED-strong"
augmentation of Tellez et al., "Quantifying the effects of data augmentation and stain color
normalization in convolutional neural networks for computational pathology", Med Image Anal
58, 2019. Their offset is in absolute (normalised) density; here it is relative to each
stain's density in the picture (``hed_jitter``), so that a severity's strength does not hang
on how much stain the picture holds and every severity differs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# Stain vectors (rows: haematoxylin, eosin, DAB) in RGB optical density, as scikit-image.
RGB_FROM_HED = np.array([[0.65, 0.70, 0.29], [0.07, 0.99, 0.11], [0.27, 0.57, 0.78]])
HED_FROM_RGB = np.linalg.inv(RGB_FROM_HED)
# scikit-image's floor on transmitted light, whose logarithm also scales the densities
LIGHT_FLOOR = 1e-6
DENSITY_PERCENTILE = 99.0


def rgb_to_hed(rgb: FloatArray) -> FloatArray:
    log_adjust = np.log(LIGHT_FLOOR)
    density = np.log(np.maximum(rgb, LIGHT_FLOOR)) / log_adjust
    # not clipped at zero as scikit-image's is: a colour outside the three stains' span keeps
    # its (negative) share, so deconvolving and reconvolving gives the picture back
    return np.asarray(density @ HED_FROM_RGB, dtype=np.float64)


def hed_to_rgb(hed: FloatArray) -> FloatArray:
    log_adjust = -np.log(LIGHT_FLOOR)
    rgb = np.exp(-(hed * log_adjust) @ RGB_FROM_HED)
    return np.asarray(np.clip(rgb, 0.0, 1.0), dtype=np.float64)


def hed_jitter(
    rgb: FloatArray, scale_sigma: float, bias_sigma: float, rng: np.random.Generator
) -> FloatArray:
    """``rgb`` (rows x columns x 3, in [0, 1]) with each stain's density scaled and offset by
    one draw for the whole image (one slide, one staining)."""
    if rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(
            "stain variation needs a colour (RGB) bright-field image; this one is greyscale"
        )
    hed = rgb_to_hed(rgb)
    # The offset is a share of each stain's own density in this picture (its
    # DENSITY_PERCENTILE of |density|), not of the normalised density scale: there an offset
    # of Tellez's 0.05 already moved a picture by 14-17 dB, and 0.1 and 0.2 tinted it to the
    # same clipped colours.
    spread = np.percentile(np.abs(hed.reshape(-1, 3)), DENSITY_PERCENTILE, axis=0)
    alpha = rng.uniform(1.0 - scale_sigma, 1.0 + scale_sigma, 3)
    beta = rng.uniform(-bias_sigma, bias_sigma, 3) * spread
    return hed_to_rgb(hed * alpha + beta)
