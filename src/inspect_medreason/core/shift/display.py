"""Display shifts: a gamma curve and a mis-set contrast window.

Both act on display values in [0, 1]. Gamma ``v ** gamma`` (gamma > 1 darkens mid-tones; the
``gamma_corr`` corruption of MedMNIST-C). A window shift models a viewer or export with the
wrong window level and width: the window's centre moves by ``center_shift`` of the range and
its width is multiplied by ``width_factor`` (< 1 narrows it), so tones outside the new window
clip to black or white, as a wrong CT window hides soft tissue or bone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def gamma(values: FloatArray, exponent: float) -> FloatArray:
    return np.asarray(np.clip(values, 0.0, 1.0) ** exponent, dtype=np.float64)


def window_shift(values: FloatArray, center_shift: float, width_factor: float) -> FloatArray:
    center = 0.5 + center_shift
    shifted = (values - center) / width_factor + 0.5
    return np.asarray(np.clip(shifted, 0.0, 1.0), dtype=np.float64)
