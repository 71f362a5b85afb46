"""The judge meta-evaluation: the judges are under test, not a model.

``inspect eval inspect_medreason/judge_meta --model-role grader=... --model-role
vision_grader=...`` (no model under test: the task's own model is ``none``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import JUDGE_DEFAULTS, judge_arguments
from inspect_medreason.core.params import refuse_unknown_parameters
from inspect_medreason.core.solvers import judge_roles_check
from inspect_medreason.judge_meta.dataset import BANDS, build_probes
from inspect_medreason.judge_meta.scorer import __doc__ as SCORING_RULES
from inspect_medreason.judge_meta.scorer import judge_meta_scorer
from inspect_medreason.medreason.medreason import JUDGE_ROLE_BY_COMPONENT, judge_choices

JUDGE_META_TASK_VERSION = family_version(__file__)


@task(version=JUDGE_META_TASK_VERSION)
def judge_meta(
    allow_self_judging: bool = False,
    judge_retries: int = JUDGE_DEFAULTS.retries,
    judge_structured_output: bool = JUDGE_DEFAULTS.structured_output,
    judge_cache: bool = JUDGE_DEFAULTS.cache,
    judge_timeout: float = JUDGE_DEFAULTS.timeout,
    judge_max_connections: int | None = JUDGE_DEFAULTS.max_connections,
    judge_failure: str = JUDGE_DEFAULTS.failure,
    judge_prompts: str | None = None,
    judge_temperature: float | None = None,
    judge_seed: int | None = None,
    judge_max_tokens: int | None = None,
    **unknown_parameters: Any,
) -> Task:
    """110 probes on the demo cases with known score bands: accuracy within band per
    component, injection resistance, test-retest consistency of the two judge roles
    (``grader`` and ``vision_grader``, one model each: panels are not meta-evaluated).

    Args:
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
        judge_temperature: Deprecated: give it with the judge's role
            (--model-role 'grader={model: ..., temperature: 0}'); until then used where the
            role sets none.
        judge_seed: Deprecated, as judge_temperature (the role's seed).
        judge_max_tokens: Deprecated, as judge_temperature (the role's max_tokens).
    """
    refuse_unknown_parameters(judge_meta, unknown_parameters)
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
    )
    record = judge_choices(judges)
    return Task(
        dataset=build_probes(),
        setup=judge_roles_check(list(JUDGE_ROLE_BY_COMPONENT.values()), panels=False),
        solver=[],  # nothing is generated: the candidates are the probes themselves
        scorer=judge_meta_scorer(judge_prompts=judges.prompts, **judges.scorer_arguments()),
        model="none/none",
        version=JUDGE_META_TASK_VERSION,
        metadata={
            "task_version": JUDGE_META_TASK_VERSION,
            "judges": record,
            "bands": {k: list(v) for k, v in BANDS.items()},
            "scoring": SCORING_RULES,
        },
    )
