"""The shifts a task can apply: names, severities and their physical parameters, and which
model each modality gets.

A shift has three severities (1 mild, 2 moderate, 3 severe; 0 is the clean image). Every
parameter below is a physical quantity (a dose fraction, an SNR, a point-spread width, a
JPEG quality) so a severity reads as an acquisition, and each table names its source in
docs/shift.md. A sample's modality (its ``modality`` metadata) picks the noise model of
``noise``: quantum noise on transmission for X-ray, stationary quantum noise in HU for CT,
Rician noise for MR, shot noise on linear intensities for photographic images (pathology,
dermatology, fundus, endoscopy) and for a modality the sample does not name or the table
does not know (recorded as ``unknown``). ``APPLIES_TO`` says which modalities each shift is
a model of, for a report's per-modality summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.params import ParameterGroup, SharedParameter

SEVERITIES = (1, 2, 3)
MODALITY_CLASSES = ("xray", "ct", "mr", "photo", "unknown")

# Dose is set per unit area, not per pixel: full-dose photons per pixel for an unattenuated
# beam (or a full-scale photographic pixel) at the reference pitch, the image's area divided
# into REFERENCE_MATRIX x REFERENCE_MATRIX pixels. An image of rows x columns pixels gets
# PHOTONS_PER_REFERENCE_PIXEL * REFERENCE_MATRIX**2 / (rows * columns) per pixel, so the same
# severity is the same dose per mm^2 (the same noise once shown at the same size) at any
# matrix: a 2048-px radiograph's pixels each get 1/16 of a 512-px one's photons.
REFERENCE_MATRIX = 512
PHOTONS_PER_REFERENCE_PIXEL = 10_000.0
# The attenuation line integral a white radiograph pixel stands for (e^-4: 1.8% of the beam
# gets through the densest anatomy shown).
MAX_LINE_INTEGRAL = 4.0
# CT: the line integral of the water-equivalent path the noise is set by (see ct_quantum).
WATER_LINE_INTEGRAL = 2.0
# A CT picture without HU (a PNG) is taken as shown through a soft-tissue window (centre,
# width in HU; Radiopaedia's abdomen soft-tissue window), so its noise in HU can be shown.
ASSUMED_CT_PICTURE_WINDOW = (40.0, 400.0)

DOSE_FRACTIONS = {1: 0.5, 2: 0.15, 3: 0.03}
RICIAN_SNR = {1: 20.0, 2: 10.0, 3: 5.0}

_DOSE = {
    "photons_per_reference_pixel": PHOTONS_PER_REFERENCE_PIXEL,
    "reference_matrix": REFERENCE_MATRIX,
}

# model -> severity -> its parameters
MODEL_PARAMETERS: dict[str, dict[int, dict[str, Any]]] = {
    "poisson_transmission": {
        s: {"dose_fraction": f, **_DOSE, "max_line_integral": MAX_LINE_INTEGRAL}
        for s, f in DOSE_FRACTIONS.items()
    },
    "ct_quantum": {
        s: {
            "dose_fraction": f,
            **_DOSE,
            "water_line_integral": WATER_LINE_INTEGRAL,
            "picture_window_hu": list(ASSUMED_CT_PICTURE_WINDOW),
        }
        for s, f in DOSE_FRACTIONS.items()
    },
    "poisson_linear": {s: {"dose_fraction": f, **_DOSE} for s, f in DOSE_FRACTIONS.items()},
    "rician": {s: {"snr": snr, "signal": "foreground mean"} for s, snr in RICIAN_SNR.items()},
    # peak-to-peak intensity non-uniformity, as BrainWeb's RF non-uniformity levels (20%, 40%)
    "bias_field": {
        s: {"nonuniformity": m, "order": 3} for s, m in {1: 0.2, 2: 0.4, 3: 0.6}.items()
    },
    "motion_ghosting": {
        s: {"shift_pixels_at_256": d, "period_lines": 4, "phase_axis": "rows"}
        for s, d in {1: 2.0, 2: 4.0, 3: 8.0}.items()
    },
    "kspace_undersampling": {
        s: {"acceleration": r, "centre_fraction": c, "phase_axis": "rows"}
        for s, (r, c) in {1: (2, 0.16), 2: (4, 0.08), 3: (8, 0.04)}.items()
    },
    "gibbs_truncation": {s: {"kept_fraction": k} for s, k in {1: 0.5, 2: 0.33, 3: 0.2}.items()},
    "kspace_spike": {
        s: {"spikes": 1, "intensity_of_peak": r} for s, r in {1: 0.05, 2: 0.15, 3: 0.4}.items()
    },
    "speckle": {s: {"sigma": v} for s, v in {1: 0.1, 2: 0.2, 3: 0.3}.items()},
    "hed_jitter": {
        s: {"scale_sigma": v, "bias_sigma": v} for s, v in {1: 0.05, 2: 0.1, 3: 0.2}.items()
    },
    "gaussian_blur": {
        s: {"sigma_pixels_at_512": v, "min_sigma_pixels": m}
        for s, (v, m) in {1: (1.0, 0.6), 2: (2.0, 1.0), 3: (4.0, 1.6)}.items()
    },
    "downsample": {s: {"factor": v} for s, v in {1: 2, 2: 4, 3: 8}.items()},
    "jpeg": {s: {"quality": v} for s, v in {1: 30, 2: 15, 3: 7}.items()},
    "gamma": {s: {"gamma": v, "on": "luminance"} for s, v in {1: 1.5, 2: 2.0, 3: 3.0}.items()},
    "window": {
        s: {"center_shift": c, "width_factor": w, "on": "luminance"}
        for s, (c, w) in {1: (0.05, 0.8), 2: (0.1, 0.6), 3: (0.2, 0.4)}.items()
    },
    # Pillow's ImageEnhance factors, MedMNIST-C's chestmnist severities 1, 3 and 5
    "brightness_up": {s: {"factor": v} for s, v in {1: 1.1, 2: 1.3, 3: 1.5}.items()},
    "brightness_down": {s: {"factor": v} for s, v in {1: 0.9, 2: 0.7, 3: 0.5}.items()},
    "contrast_up": {s: {"factor": v} for s, v in {1: 1.1, 2: 1.3, 3: 1.6}.items()},
    "contrast_down": {s: {"factor": v} for s, v in {1: 0.9, 2: 0.7, 3: 0.4}.items()},
}

# Models applied to what the detector measured (for a greyscale DICOM: the raw values,
# before the window); the others act on the displayed or stored picture.
ACQUISITION_MODELS = {
    "poisson_transmission",
    "ct_quantum",
    "poisson_linear",
    "rician",
    "bias_field",
    "motion_ghosting",
    "kspace_undersampling",
    "gibbs_truncation",
    "kspace_spike",
    "speckle",
    "gaussian_blur",
    "downsample",
}

# Models that need a colour picture (a greyscale one is refused, naming the image).
COLOUR_ONLY_MODELS = {"hed_jitter"}

_ALL = dict.fromkeys(MODALITY_CLASSES)


def _same(model: str) -> dict[str, str]:
    return {modality: model for modality in _ALL}


# shift name -> modality class -> model
SHIFTS: dict[str, dict[str, str]] = {
    "noise": {
        "xray": "poisson_transmission",
        "ct": "ct_quantum",
        "mr": "rician",
        "photo": "poisson_linear",
        "unknown": "poisson_linear",
    },
    "rician": _same("rician"),
    "bias_field": _same("bias_field"),
    "motion_ghosting": _same("motion_ghosting"),
    "undersampling": _same("kspace_undersampling"),
    "gibbs": _same("gibbs_truncation"),
    "spike": _same("kspace_spike"),
    "speckle": _same("speckle"),
    "stain": _same("hed_jitter"),
    "blur": _same("gaussian_blur"),
    "downsample": _same("downsample"),
    "jpeg": _same("jpeg"),
    "gamma": _same("gamma"),
    "window": _same("window"),
    "brightness_up": _same("brightness_up"),
    "brightness_down": _same("brightness_down"),
    "contrast_up": _same("contrast_up"),
    "contrast_down": _same("contrast_down"),
}

# What each shift is a model of, for a report's per-modality summary: the modalities whose
# acquisitions it degrades (words, as a sample's modality may name them; "any" for all).
# A shift runs on every image it is given; this says where its result means something.
APPLIES_TO: dict[str, tuple[str, ...]] = {
    "noise": ("any",),
    "rician": ("mr",),
    "bias_field": ("mr",),
    "motion_ghosting": ("mr",),
    "undersampling": ("mr",),
    "gibbs": ("mr",),
    "spike": ("mr",),
    "speckle": ("ultrasound",),
    "stain": ("pathology",),
    "blur": ("any",),
    "downsample": ("any",),
    "jpeg": ("any",),
    "gamma": ("any",),
    "window": ("xray", "ct", "mr"),
    "brightness_up": ("any",),
    "brightness_down": ("any",),
    "contrast_up": ("any",),
    "contrast_down": ("any",),
}

# Names a shift once had: a task given one is told what replaced it.
RETIRED_SHIFTS = {
    "low_dose": "merged into 'noise' (quantum noise at the same dose fractions for X-ray, "
    "CT and photographs; MR, which has no dose, gets Rician noise)",
}

# Lower-case modality text -> class; checked in order, on whole words.
_MODALITY_PATTERNS = (
    ("ct", r"\b(ct|cta|cect|computed tomography|hrct|pet[/-]?ct)\b"),
    ("mr", r"\b(mr|mri|magnetic resonance|t1|t2|flair|dwi|fmri|mra)\b"),
    (
        "xray",
        r"\b(x-?ray|xr|cxr|radiograph\w*|cr|dx|mammogra\w*|fluoroscop\w*|chest film)\b",
    ),
    (
        "photo",
        r"\b(patholog\w*|histolog\w*|histopatholog\w*|microscop\w*|dermatolog\w*|dermoscop\w*|"
        r"fundus|ophthalm\w*|endoscop\w*|colonoscop\w*|photo\w*|clinical image|slide)\b",
    ),
)


def modality_class(modality: object) -> str:
    """The class of a sample's modality text; ``unknown`` when empty or not recognised."""
    text = str(modality or "").strip().lower()
    for name, pattern in _MODALITY_PATTERNS:
        if re.search(pattern, text):
            return name
    return "unknown"


@dataclass(frozen=True)
class ShiftSpec:
    """A task's shift: its name and severity (None, 0: clean), the seed, and which image the
    vision judge is shown."""

    name: str | None = None
    severity: int = 0
    seed: int = 0
    judge_image: str = "clean"
    default_modality: str | None = None

    @property
    def active(self) -> bool:
        return self.name is not None and self.severity > 0

    def model(self, modality: str) -> str:
        if self.name is None:
            raise ValueError("a clean run has no model")
        return SHIFTS[self.name][modality]

    def parameters(self) -> dict[str, dict[str, Any]]:
        """Per modality class, the model and its parameters at this severity."""
        if not self.active or self.name is None:
            return {}
        return {
            modality: {"model": model, **MODEL_PARAMETERS[model][self.severity]}
            for modality, model in SHIFTS[self.name].items()
        }

    def record(self) -> dict[str, Any]:
        """What the log's task metadata holds under ``shift``."""
        return {
            "name": self.name if self.active else None,
            "severity": self.severity if self.active else 0,
            "seed": self.seed,
            "parameters": self.parameters(),
            "applies_to": list(APPLIES_TO[self.name]) if self.active and self.name else None,
            "judge_image": self.judge_image,
            "modality_rule": (
                "each sample's metadata 'modality' picks the model: xray, ct, mr, photo; "
                "a missing or unrecognised modality is 'unknown'"
                + (
                    f" (this task's images default to {self.default_modality!r})"
                    if self.default_modality
                    else ""
                )
            ),
            "deterministic_by": ["shift_seed", "case id", "image index", "image sha256"],
        }


JUDGE_IMAGES = ("degraded", "clean")


@dataclass(frozen=True)
class ShiftPlan:
    """What a task runs: one shift (or the clean images), or a grid of shifts and
    severities in one run (``-T shift=noise,blur -T severity=0,1,2,3``), whose samples are
    the cases once per combination, ids suffixed ``@<shift>-<severity>`` (the clean ones
    keep theirs)."""

    specs: tuple[ShiftSpec, ...]

    @property
    def grid(self) -> bool:
        return len(self.specs) > 1

    @property
    def active(self) -> bool:
        return any(spec.active for spec in self.specs)

    def record(self) -> dict[str, Any]:
        """The log's ``shift`` record: the one shift's, or the grid's (names and severities
        as lists, parameters by ``<shift>:<severity>``, and each combination's record)."""
        if not self.grid:
            return self.specs[0].record()
        first = self.specs[0]
        return {
            "name": sorted({spec.name for spec in self.specs if spec.name}),
            "severity": sorted({spec.severity for spec in self.specs}),
            "seed": first.seed,
            "parameters": {
                f"{spec.name}:{spec.severity}": spec.parameters()
                for spec in self.specs
                if spec.active
            },
            "applies_to": {
                name: list(APPLIES_TO[name])
                for name in sorted({s.name for s in self.specs if s.name})
            },
            "judge_image": first.judge_image,
            "grid": [spec.record() for spec in self.specs],
            "sample_ids": "case id for the clean images, <case id>@<shift>-<severity> otherwise",
        }


def _as_list(value: object) -> list[object]:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str) and "," in value:
        return [part.strip() for part in value.split(",")]
    return [value]


def _shift_name(value: object) -> str | None:
    if value is None or str(value).strip().lower() in {"", "none", "clean"}:
        return None
    return str(value).strip()


def parse_shift(
    shift: object,
    severity: object,
    seed: object,
    judge_image: object = "clean",
    default_modality: str | None = None,
) -> ShiftPlan:
    """The task's ``-T shift/severity/shift_seed/shift_judge_image``, checked together: every
    problem in one message that lists the valid values. Lists (``noise,blur``, ``1,2,3``)
    make a grid: every shift at every severity, plus the clean images when 0 is listed."""
    problems: list[str] = []
    names = [_shift_name(value) for value in _as_list(shift)]
    for raw, name in zip(_as_list(shift), names, strict=True):
        if name is not None and name in RETIRED_SHIFTS:
            problems.append(f"-T shift={raw!r} was {RETIRED_SHIFTS[name]}")
        elif name is not None and name not in SHIFTS:
            problems.append(
                f"-T shift={raw!r} is not a shift; valid: {', '.join(SHIFTS)} (or none)"
            )
    named = [name for name in names if name is not None]
    levels: list[int] = []
    missing = False
    for raw in _as_list(severity):
        if raw is None or str(raw).strip() == "":
            missing = True
            if named:
                problems.append(
                    "-T severity is missing; valid: 0 (clean), "
                    + ", ".join(map(str, SEVERITIES))
                    + " (a shift needs one)"
                )
            levels.append(0)
            continue
        try:
            level = int(str(raw).strip())
        except ValueError:
            level = -1
        if level not in (0, *SEVERITIES):
            problems.append(
                f"-T severity={raw!r} is not a severity; valid: 0 (clean), "
                + ", ".join(map(str, SEVERITIES))
            )
        levels.append(level)
    try:
        seed_value = int(str(seed).strip())
    except (TypeError, ValueError):
        problems.append(f"-T shift_seed={seed!r}: expected a whole number")
        seed_value = 0
    judge = str(judge_image).strip().lower()
    if judge not in JUDGE_IMAGES:
        problems.append(f"-T shift_judge_image={judge_image!r}; valid: {', '.join(JUDGE_IMAGES)}")
    if named and not missing and all(level == 0 for level in levels):
        # the tasks' default severity is 0: a shift named alone would run the clean images
        # while the command line says otherwise
        problems.append(
            f"-T shift={shift} needs a severity: -T severity=1, 2 or 3 (or a list such as "
            "0,1,2,3 for the clean images and every severity); severity 0 alone is the clean run"
        )
    if not named and any(level > 0 for level in levels):
        problems.append(
            f"-T severity={severity} without a shift; name one: -T shift=<{'|'.join(SHIFTS)}>"
        )
    if problems:
        raise TaskArgumentError("; ".join(problems))
    specs: list[ShiftSpec] = []
    if 0 in levels or not named:
        specs.append(ShiftSpec(None, 0, seed_value, judge, default_modality))
    for name in dict.fromkeys(named):
        for level in sorted({level for level in levels if level > 0}):
            specs.append(ShiftSpec(name, level, seed_value, judge, default_modality))
    return ShiftPlan(tuple(specs))


SHIFT_PARAMETERS = (
    SharedParameter(
        "shift",
        str | list[str] | None,
        None,
        "An image-quality shift by name, or several for a grid (docs/shift.md); none is the "
        "clean image.",
    ),
    SharedParameter(
        "severity",
        int | list[int],
        0,
        "The shift's severity, 1 to 3 (0 is clean), or several for a grid.",
    ),
    SharedParameter(
        "shift_seed", int, 0, "The seed of the shift's randomness (drawn per case and image)."
    ),
    SharedParameter(
        "shift_judge_image",
        str,
        "clean",
        "What the vision judge sees: the clean image (``clean``, the default: the judge "
        "grades against the best evidence) or the one the model saw (``degraded``).",
    ),
)


def shift_parameters(default_modality: str | None = None) -> ParameterGroup[ShiftPlan]:
    """The image-shift parameters every image task takes, built into its ``ShiftPlan``;
    ``default_modality``: the modality of a dataset whose samples name none (GEMeX's chest
    radiographs, PathVQA's slides)."""

    def build(values: dict[str, Any]) -> ShiftPlan:
        return parse_shift(
            values["shift"],
            values["severity"],
            values["shift_seed"],
            values["shift_judge_image"],
            default_modality,
        )

    return ParameterGroup(SHIFT_PARAMETERS, build)
