"""Med-CMR (arXiv 2512.00818, CVPR 2026), the benchmark the MedReason challenge builds on: its
public release as it is published, both tracks, scored the challenge's way by default or
with Med-CMR's own four-criterion open-ended score."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.scorer import Scorer

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import JudgeArguments, grader_templates, judge_parameters
from inspect_medreason.core.params import task_parameters
from inspect_medreason.core.shift import ShiftPlan, shift_parameters
from inspect_medreason.med_cmr.dataset import MED_CMR_HUB_ID, MED_CMR_LICENCE, locate_release
from inspect_medreason.med_cmr.scorer import MED_CMR_ROLE, TEMPLATE_PREFIX, med_cmr_scorer
from inspect_medreason.medreason.medreason import OpenScoring, medreason_task

MED_CMR_TASK_VERSION = family_version(__file__)
TRACKS = {"both": {"mcq", "open"}, "mcq": {"mcq"}, "open": {"open"}}
OPEN_SCORINGS = ("challenge", "med_cmr")


def med_cmr_open_scorer(judges: JudgeArguments, data_key: str) -> Scorer:
    """The open-ended track scored Med-CMR's way, with the task's judge arguments."""
    return med_cmr_scorer(
        panel_reduce=judges.panel_reduce, data_key=data_key, **judges.scorer_arguments()
    )


def chosen_tracks(track: str, open_scoring: str) -> tuple[set[str], OpenScoring]:
    """The tracks ``-T track`` names and how ``-T open_scoring`` scores the open one."""
    if track not in TRACKS:
        raise TaskArgumentError(f"-T track={track!r}: expected one of {', '.join(TRACKS)}")
    if open_scoring not in OPEN_SCORINGS:
        raise TaskArgumentError(
            f"-T open_scoring={open_scoring!r}: expected one of {', '.join(OPEN_SCORINGS)}"
        )
    scoring = (
        OpenScoring(
            name="med_cmr",
            scorer=med_cmr_open_scorer,
            roles={"med_cmr_score": MED_CMR_ROLE},
            templates=grader_templates(TEMPLATE_PREFIX, family="med_cmr"),
        )
        if open_scoring == "med_cmr"
        else OpenScoring()
    )
    return TRACKS[track], scoring


@task(version=MED_CMR_TASK_VERSION)
@task_parameters(image_shift=shift_parameters(), judges=judge_parameters(prompts=True, panel=True))
def med_cmr(
    data: str | None = None,
    track: str = "both",
    open_scoring: str = "challenge",
    hub_id: str | None = MED_CMR_HUB_ID,
    revision: str | None = None,
    shuffle_choices: bool = False,
    seed: int = 42,
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
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
    """
    tracks, scoring = chosen_tracks(track, open_scoring)
    location, origin = locate_release(data, hub_id, revision)
    return medreason_task(
        tracks,
        MED_CMR_TASK_VERSION,
        "med_cmr",
        str(location),
        None,
        shuffle_choices,
        seed,
        images,
        judges if "open" in tracks else None,
        open_scoring=scoring,
        data_origin={**origin, "licence": MED_CMR_LICENCE, "open_scoring": open_scoring},
        shift=image_shift,
    )
