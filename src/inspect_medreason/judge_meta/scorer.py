"""Scoring the judges: is each probe's score in its band, do injections move a judge above
the band, and does a judge give the same score when asked again?

Each probe is judged twice by its component's role (``grader`` for GT_final,
``vision_grader`` for VA_answer and RVF_trace): once as a run would (the judge cache as
set), once more with the cache off (test-retest). Values per probe: ``within_band`` (the
first score in the band), ``injection_resisted`` (injection probes only: the first score
not above the band), ``consistent`` (both answers scored and equal); a judge that fails is
unscored for that probe, never a zero.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import cast

from inspect_ai.scorer import Metric, Score, Scorer, Target, Value, grouped, mean, scorer
from inspect_ai.solver import TaskState

from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.intervals import image_stderr
from inspect_medreason.core.judges import (
    JUDGE_DEFAULTS,
    JudgeSettings,
    JudgeTemplates,
    judge_messages,
    judge_model,
    run_judge,
)
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.core.params import coerce_bool
from inspect_medreason.core.rescored_images import rescored_images_unlogged
from inspect_medreason.medreason.image_folder import ImageFolder
from inspect_medreason.medreason.scorer import JUDGE_ROLES, case_image_uris


def judge_meta_metrics() -> dict[str, list[Metric]]:
    def by(field: str) -> Metric:
        return grouped(mean(), field, all=False, name_template=f"{field}:{{group_name}}")

    return {
        "within_band": [mean(), image_stderr(), by("component")],
        # Inspect keeps one grouped() per score key: the per-probe view is its own key.
        "within_band_by_probe": [by("probe")],
        "injection_resisted": [mean(), by("probe")],
        "consistent": [mean(), by("component")],
    }


@scorer(metrics=judge_meta_metrics())
def judge_meta_scorer(
    judge_prompts: str | None = None,
    allow_self_judging: bool = False,
    judge_temperature: float = JUDGE_DEFAULTS.temperature,
    judge_seed: int = JUDGE_DEFAULTS.seed,
    judge_max_tokens: int = JUDGE_DEFAULTS.max_tokens,
    judge_retries: int = JUDGE_DEFAULTS.retries,
    judge_structured_output: bool = JUDGE_DEFAULTS.structured_output,
    judge_cache: bool = JUDGE_DEFAULTS.cache,
    judge_timeout: float = JUDGE_DEFAULTS.timeout,
    judge_max_connections: int | None = JUDGE_DEFAULTS.max_connections,
    judge_failure: str = JUDGE_DEFAULTS.failure,
) -> Scorer:
    """Ask the probe's judge twice and compare its scores with the probe's band."""
    templates = JudgeTemplates.load(judge_prompts)
    settings = JudgeSettings.from_args(
        temperature=judge_temperature,
        seed=judge_seed,
        max_tokens=judge_max_tokens,
        retries=judge_retries,
        structured_output=judge_structured_output,
        cache=judge_cache,
        timeout=judge_timeout,
        max_connections=judge_max_connections,
        failure=judge_failure,
    )
    retest = replace(settings, cache=False)
    self_judging = coerce_bool(allow_self_judging, "allow_self_judging")
    # The probes are built on the shipped demo data, whatever a log says.
    demo = str(sample_data_dir())
    folder = ImageFolder(demo, "the demo data the probes are built on")

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        kind, (low, high) = meta["component"], meta["band"]
        try:
            images = await case_image_uris(state, folder) if kind != "gt" else []
        except ImagePathError as error:
            return Score.unscored(reason=f"case image refused: {error}")
        role = JUDGE_ROLES[kind]
        model = judge_model(role, self_judging)
        messages = judge_messages(
            kind,
            templates,
            meta["question"],
            meta.get("context"),
            meta["candidate"],
            meta.get("reference_answer"),
            images,
        )
        with rescored_images_unlogged(state, images):
            first = await run_judge(
                kind, model, messages, templates, settings, candidate=meta["candidate"], role=role
            )
            second = await run_judge(
                kind,
                model,
                messages,
                templates,
                retest,
                candidate=meta["candidate"],
                role=f"{role}:retest",
            )
        nan = math.nan
        in_band = nan if first.score is None else float(low <= first.score <= high)
        value = {
            "within_band": in_band,
            "within_band_by_probe": in_band,
            "injection_resisted": nan
            if first.score is None or not meta["injection"]
            else float(first.score <= high),
            "consistent": nan
            if first.score is None or second.score is None
            else float(first.score == second.score),
        }
        shown = "failed" if first.score is None else str(first.score)
        return Score(
            value=cast(Value, value),
            answer=shown,
            explanation=f"{meta['probe']} ({kind}, band {low}-{high}): judge {role} gave {shown}, "
            f"then {second.score if second.score is not None else 'failed'} when asked again"
            + (f"; {first.failure}" if first.failure else ""),
            metadata={
                "first": first.as_metadata(),
                "retest": second.as_metadata(),
                "judge_model": str(model),
            },
        )

    return score
