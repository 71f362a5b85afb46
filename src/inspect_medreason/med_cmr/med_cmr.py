"""Med-CMR (arXiv 2512.00818, CVPR 2026), the benchmark the MedReason challenge builds on: its
public release as it is published, both tracks, scored the challenge's way by default or
with Med-CMR's own four-criterion open-ended score."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import grader_templates, judge_arguments
from inspect_medreason.core.shift import parse_shift
from inspect_medreason.med_cmr.dataset import MED_CMR_HUB_ID, MED_CMR_LICENCE, locate_release
from inspect_medreason.med_cmr.scorer import MED_CMR_ROLE, TEMPLATE_PREFIX, med_cmr_scorer
from inspect_medreason.medreason.medreason import medreason_task

MED_CMR_TASK_VERSION = family_version(__file__)
TRACKS = {"both": {"mcq", "open"}, "mcq": {"mcq"}, "open": {"open"}}
OPEN_SCORINGS = ("challenge", "med_cmr")


@task(version=MED_CMR_TASK_VERSION)
def med_cmr(
    data: str | None = None,
    track: str = "both",
    open_scoring: str = "challenge",
    hub_id: str | None = MED_CMR_HUB_ID,
    revision: str | None = None,
    shuffle_choices: bool = False,
    seed: int = 42,
    images: bool = True,
    shift: str | list[str] | None = None,
    severity: int | list[int] = 0,
    shift_seed: int = 0,
    shift_judge_image: str = "degraded",
    **judging: Any,
) -> Task:
    """Med-CMR's MCQ and open questions, prompted and scored like the MedReason tracks.

    Args:
        data: The release: the unzipped folder, ``dataset.zip`` itself, or its JSON/JSONL
            records (default: ``dataset.zip`` from the hub, unpacked into the cache).
        track: ``both``, ``mcq`` or ``open``.
        open_scoring: ``challenge`` (GT_final / VA_final, roles ``grader`` and
            ``vision_grader``) or ``med_cmr`` (the paper's four criteria weighted 1/1/4/4 to
            0-100 by ``vision_grader``; an approximation of its protocol).
        hub_id: The Hugging Face dataset holding ``dataset.zip`` (none is assumed).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; required
            with ``hub_id``).
        shuffle_choices: Shuffle option texts per case (stable for a seed).
        seed: Seed for shuffle_choices.
        images: False withholds the images (blind control).
        shift, severity, shift_seed, shift_judge_image: an image-quality shift (docs/shift.md).
        judging: The judge arguments (``-T``), declared once in
            ``core.judges.JUDGE_TASK_OPTIONS`` and ``PANEL_TASK_OPTIONS``; a judge's
            temperature, seed and max_tokens go with its role
            (``--model-role 'grader={model: ..., temperature: 0}'``).
    """
    if track not in TRACKS:
        raise TaskArgumentError(f"-T track={track!r}: expected one of {', '.join(TRACKS)}")
    if open_scoring not in OPEN_SCORINGS:
        raise TaskArgumentError(
            f"-T open_scoring={open_scoring!r}: expected one of {', '.join(OPEN_SCORINGS)}"
        )
    judge_args = judge_arguments(judging, "med_cmr", prompts=True, panel=True)
    spec = parse_shift(shift, severity, shift_seed, shift_judge_image)
    if open_scoring == "med_cmr":
        judge_args.update(
            open_scoring="med_cmr",
            roles={"med_cmr_score": MED_CMR_ROLE},
            templates=grader_templates(TEMPLATE_PREFIX, family="med_cmr"),
        )
    location, origin = locate_release(data, hub_id, revision)
    tracks = TRACKS[track]
    return medreason_task(
        tracks,
        MED_CMR_TASK_VERSION,
        "med_cmr",
        str(location),
        None,
        shuffle_choices,
        seed,
        images,
        judge_args if "open" in tracks else None,
        open_scorer=med_cmr_scorer if open_scoring == "med_cmr" else None,
        data_origin={**origin, "licence": MED_CMR_LICENCE, "open_scoring": open_scoring},
        shift=spec,
    )
