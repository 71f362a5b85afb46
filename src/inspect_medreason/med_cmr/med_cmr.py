"""Med-CMR (arXiv 2512.00818, CVPR 2026), the benchmark the MedReason challenge builds on: its
public release as it is published, both tracks, scored the challenge's way by default or
with Med-CMR's own four-criterion open-ended score."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.scorer import Scorer

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import (
    DEFAULT_PANEL_REDUCE,
    JUDGE_DEFAULTS,
    JudgeArguments,
    grader_templates,
    judge_arguments,
)
from inspect_medreason.core.params import refuse_unknown_parameters
from inspect_medreason.core.shift import parse_shift
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
    shift_judge_image: str = "clean",
    allow_self_judging: bool = False,
    judge_retries: int = JUDGE_DEFAULTS.retries,
    judge_structured_output: bool = JUDGE_DEFAULTS.structured_output,
    judge_cache: bool = JUDGE_DEFAULTS.cache,
    judge_timeout: float = JUDGE_DEFAULTS.timeout,
    judge_max_connections: int | None = JUDGE_DEFAULTS.max_connections,
    judge_failure: str = JUDGE_DEFAULTS.failure,
    judge_prompts: str | None = None,
    panel_reduce: str = DEFAULT_PANEL_REDUCE,
    judge_temperature: float | None = None,
    judge_seed: int | None = None,
    judge_max_tokens: int | None = None,
    **unknown_parameters: Any,
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
        shift: An image-quality shift by name, or several for a grid (docs/shift.md); none
            is the clean image.
        severity: The shift's severity, 1 to 3 (0 is clean), or several for a grid.
        shift_seed: The seed of the shift's randomness (drawn per case and image).
        shift_judge_image: What the vision judge sees: the clean image (``clean``, the
            default: the judge grades against the best evidence) or the one the model saw
            (``degraded``).
        allow_self_judging: Judge with the model under test when a judge role is not
            given (otherwise a missing role stops the run).
        judge_retries: Extra attempts after an invalid judge reply before it is unscored.
        judge_structured_output: Ask judges for a JSON schema (providers that take one).
        judge_cache: Cache judge replies (Inspect's model cache).
        judge_timeout: Seconds one judge call may take before its component is unscored
            (the run's --timeout and --attempt-timeout, and the role's own, bound it when
            smaller).
        judge_max_connections: Concurrent calls per judge model (default: the eval's
            --max-connections, which Inspect gives a role over its own).
        judge_failure: What a judge that fails does: ``unscored`` (the component is
            unscored and counted) or ``error`` (the sample is an error, so
            --fail-on-error and eval-retry act).
        judge_prompts: A folder of judge templates replacing the built-in ones.
        panel_reduce: How a judge panel's scores become one: median, mean or min.
        judge_temperature: Deprecated: give it with the judge's role
            (--model-role 'grader={model: ..., temperature: 0}'); until then used where the
            role sets none.
        judge_seed: Deprecated, as judge_temperature (the role's seed).
        judge_max_tokens: Deprecated, as judge_temperature (the role's max_tokens).
    """
    refuse_unknown_parameters(med_cmr, unknown_parameters)
    if track not in TRACKS:
        raise TaskArgumentError(f"-T track={track!r}: expected one of {', '.join(TRACKS)}")
    if open_scoring not in OPEN_SCORINGS:
        raise TaskArgumentError(
            f"-T open_scoring={open_scoring!r}: expected one of {', '.join(OPEN_SCORINGS)}"
        )
    judges = judge_arguments(
        allow_self_judging=allow_self_judging,
        retries=judge_retries,
        structured_output=judge_structured_output,
        cache=judge_cache,
        timeout=judge_timeout,
        max_connections=judge_max_connections,
        failure=judge_failure,
        temperature=judge_temperature,
        seed=judge_seed,
        max_tokens=judge_max_tokens,
        prompts=judge_prompts,
        panel_reduce=panel_reduce,
    )
    spec = parse_shift(shift, severity, shift_seed, shift_judge_image)
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
        judges if "open" in tracks else None,
        open_scoring=scoring,
        data_origin={**origin, "licence": MED_CMR_LICENCE, "open_scoring": open_scoring},
        shift=spec,
    )
