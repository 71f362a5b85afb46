"""The judge meta-evaluation: the judges are under test, not a model.

``inspect eval inspect_medreason/judge_meta --model-role grader=... --model-role
vision_grader=...`` (no model under test: the task's own model is ``none``).
"""

from __future__ import annotations

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.judge_meta.dataset import BANDS, build_probes
from inspect_medreason.judge_meta.scorer import __doc__ as SCORING_RULES
from inspect_medreason.judge_meta.scorer import judge_meta_scorer
from inspect_medreason.medreason.medreason import judge_choices

JUDGE_META_TASK_VERSION = family_version(__file__)


@task(version=JUDGE_META_TASK_VERSION)
def judge_meta(
    judge_prompts: str | None = None,
    allow_self_judging: bool = False,
    judge_temperature: float = 0.0,
    judge_seed: int = 42,
    judge_max_tokens: int = 512,
    judge_retries: int = 2,
    judge_structured_output: bool = True,
    judge_cache: bool = False,
    judge_timeout: float = 120.0,
    judge_max_connections: int | None = None,
) -> Task:
    """110 probes on the demo cases with known score bands: accuracy within band per
    component, injection resistance, test-retest consistency of the two judge roles."""
    scorer_args, record = judge_choices(
        judge_prompts,
        allow_self_judging,
        judge_temperature,
        judge_seed,
        judge_max_tokens,
        judge_retries,
        judge_structured_output,
        judge_cache,
        judge_timeout,
        judge_max_connections,
    )
    scorer_args.pop("panel_reduce", None)  # one judge per role: panels are not meta-evaluated here
    return Task(
        dataset=build_probes(),
        solver=[],  # nothing is generated: the candidates are the probes themselves
        scorer=judge_meta_scorer(**scorer_args),
        model="none/none",
        version=JUDGE_META_TASK_VERSION,
        metadata={
            "task_version": JUDGE_META_TASK_VERSION,
            "judges": record,
            "bands": {k: list(v) for k, v in BANDS.items()},
            "scoring": SCORING_RULES,
        },
    )
