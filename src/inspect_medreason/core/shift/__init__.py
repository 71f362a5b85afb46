"""Seeded, physically grounded image-quality shifts for every image task (docs/shift.md).

A task takes ``-T shift=<name> -T severity=<0..3> -T shift_seed=<int>
-T shift_judge_image=degraded|clean``; ``parse_shift`` checks them, ``shifted_dataset`` wraps
the task's dataset, and ``ShiftSpec.record()`` goes into the task metadata under ``shift``.
One module per degradation family: ``noise`` (quantum, CT, Rician, speckle),
``mr_artefacts`` (bias field and the k-space artefacts: ghosting, undersampling, Gibbs
ringing, spikes), ``resolution`` (blur, downsampling, JPEG), ``display`` (gamma, window,
brightness, contrast), ``stain`` (H&E stain variation); ``catalog`` holds the names, severities and parameters, ``degrade`` one image's
pipeline and cache, ``dataset`` the samples.
"""

from inspect_medreason.core.shift.catalog import (
    APPLIES_TO,
    MODALITY_CLASSES,
    MODEL_PARAMETERS,
    SEVERITIES,
    SHIFTS,
    ShiftPlan,
    ShiftSpec,
    modality_class,
    parse_shift,
    shift_parameters,
)
from inspect_medreason.core.shift.dataset import (
    JUDGE_IMAGE_KEY,
    SAMPLE_SHIFT_KEY,
    ShiftError,
    apply_shift,
    judge_image_files,
    shifted_dataset,
    wants_clean_judge_image,
)

__all__ = [
    "APPLIES_TO",
    "JUDGE_IMAGE_KEY",
    "MODALITY_CLASSES",
    "MODEL_PARAMETERS",
    "SAMPLE_SHIFT_KEY",
    "SEVERITIES",
    "SHIFTS",
    "ShiftError",
    "ShiftPlan",
    "ShiftSpec",
    "apply_shift",
    "judge_image_files",
    "modality_class",
    "parse_shift",
    "shift_parameters",
    "shifted_dataset",
    "wants_clean_judge_image",
]
