"""The shifts a task can apply: names, severities and their physical parameters, and which
model each modality gets.

A shift has three severities (1 mild, 2 moderate, 3 severe; 0 is the clean image). Every
parameter below is a physical quantity (a dose fraction, an SNR, a point-spread width, a
JPEG quality) so a severity reads as an acquisition, and each table names its source in
docs/shift.md. A sample's modality (its ``modality`` metadata) picks the noise model of
``noise``: quantum noise for X-ray and CT, Rician noise for MR, shot noise on linear
intensities for photographic images (pathology, dermatology, fundus, endoscopy) and for a
modality the sample does not name or the table does not know (recorded as ``unknown``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from inspect_medreason.core.errors import TaskArgumentError

SEVERITIES = (1, 2, 3)
MODALITY_CLASSES = ("xray", "ct", "mr", "photo", "unknown")

# Full-dose photons per pixel for an unattenuated beam (or a full-scale photographic pixel),
# and the attenuation line integral a white radiograph pixel stands for (e^-4: 1.8% of the
# beam gets through the densest anatomy shown).
PHOTONS_FULL_DOSE = 10_000.0
MAX_LINE_INTEGRAL = 4.0
# CT: the line integral a pixel of water stands for; HU scale linear attenuation by 1 + HU/1000.
WATER_LINE_INTEGRAL = 2.0

DOSE_FRACTIONS = {1: 0.5, 2: 0.15, 3: 0.03}
RICIAN_SNR = {1: 20.0, 2: 10.0, 3: 5.0}

# model -> severity -> its parameters
MODEL_PARAMETERS: dict[str, dict[int, dict[str, Any]]] = {
    "poisson_transmission": {
        s: {
            "dose_fraction": f,
            "photons_full_dose": PHOTONS_FULL_DOSE,
            "max_line_integral": MAX_LINE_INTEGRAL,
            "water_line_integral": WATER_LINE_INTEGRAL,
        }
        for s, f in DOSE_FRACTIONS.items()
    },
    "poisson_linear": {
        s: {"dose_fraction": f, "photons_full_dose": PHOTONS_FULL_DOSE}
        for s, f in DOSE_FRACTIONS.items()
    },
    "rician": {s: {"snr": snr, "signal": "foreground mean"} for s, snr in RICIAN_SNR.items()},
    "bias_field": {
        s: {"coefficient_magnitude": m, "order": 3} for s, m in {1: 0.2, 2: 0.4, 3: 0.6}.items()
    },
    "motion_ghosting": {
        s: {"shift_pixels_at_256": d, "period_lines": 4, "phase_axis": "rows"}
        for s, d in {1: 2.0, 2: 4.0, 3: 8.0}.items()
    },
    "gaussian_blur": {s: {"sigma_pixels_at_512": v} for s, v in {1: 1.0, 2: 2.0, 3: 4.0}.items()},
    "downsample": {s: {"factor": v} for s, v in {1: 2, 2: 4, 3: 8}.items()},
    "jpeg": {s: {"quality": v} for s, v in {1: 30, 2: 15, 3: 7}.items()},
    "gamma": {s: {"gamma": v} for s, v in {1: 1.5, 2: 2.0, 3: 3.0}.items()},
    "window": {
        s: {"center_shift": c, "width_factor": w}
        for s, (c, w) in {1: (0.05, 0.8), 2: (0.1, 0.6), 3: (0.2, 0.4)}.items()
    },
}

# Models applied to what the detector measured (for DICOM: the raw values, before the
# window); the others act on the displayed or stored picture.
ACQUISITION_MODELS = {
    "poisson_transmission",
    "poisson_linear",
    "rician",
    "bias_field",
    "motion_ghosting",
    "gaussian_blur",
    "downsample",
}

_ALL = dict.fromkeys(MODALITY_CLASSES)


def _same(model: str) -> dict[str, str]:
    return {modality: model for modality in _ALL}


# shift name -> modality class -> model
SHIFTS: dict[str, dict[str, str]] = {
    "noise": {
        "xray": "poisson_transmission",
        "ct": "poisson_transmission",
        "mr": "rician",
        "photo": "poisson_linear",
        "unknown": "poisson_linear",
    },
    "low_dose": {
        "xray": "poisson_transmission",
        "ct": "poisson_transmission",
        "mr": "poisson_linear",
        "photo": "poisson_linear",
        "unknown": "poisson_linear",
    },
    "rician": _same("rician"),
    "bias_field": _same("bias_field"),
    "motion_ghosting": _same("motion_ghosting"),
    "blur": _same("gaussian_blur"),
    "downsample": _same("downsample"),
    "jpeg": _same("jpeg"),
    "gamma": _same("gamma"),
    "window": _same("window"),
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
    judge_image: str = "degraded"
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
    judge_image: object = "degraded",
    default_modality: str | None = None,
) -> ShiftPlan:
    """The task's ``-T shift/severity/shift_seed/shift_judge_image``, checked together: every
    problem in one message that lists the valid values. Lists (``noise,blur``, ``1,2,3``)
    make a grid: every shift at every severity, plus the clean images when 0 is listed."""
    problems: list[str] = []
    names = [_shift_name(value) for value in _as_list(shift)]
    for raw, name in zip(_as_list(shift), names, strict=True):
        if name is not None and name not in SHIFTS:
            problems.append(
                f"-T shift={raw!r} is not a shift; valid: {', '.join(SHIFTS)} (or none)"
            )
    named = [name for name in names if name is not None]
    levels: list[int] = []
    for raw in _as_list(severity):
        if raw is None or str(raw).strip() == "":
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
