"""CMB tasks."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.cmb.dataset import load_clin_dataset, load_exam_dataset
from inspect_medreason.cmb.scorer import __doc__ as SCORING_RULES
from inspect_medreason.cmb.scorer import cmb_clin_scorer, cmb_exam_scorer
from inspect_medreason.cmb.solver import (
    clinical_conversation,
    cmb_exam_prompt,
)
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import (
    GRADER_MAX_TOKENS,
    JUDGE_DEFAULTS,
    judge_arguments,
)
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_int,
    refuse_unknown_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.solvers import judge_roles_check

CMB_TASK_VERSION = family_version(__file__)


@task(version=CMB_TASK_VERSION)
def cmb_exam(
    data: str | None = None,
    answers: str | None = None,
    split: str = "test",
    fewshot: int = 0,
    fewshot_data: str | None = None,
    prompt: str = "answer_only",
    extraction: str = "safe",
    order_sensitive: bool = False,
    seed: int = 42,
    revision: str | None = None,
    **unknown_parameters: Any,
) -> Task:
    """CMB-Exam, one split (``test``: 11,200 questions, answers from the published key
    ``answers``; or ``val``). ``prompt=answer_only|cot``; ``fewshot=N`` examples from the
    validation split (``fewshot_data`` for a local copy).

    Args:
        data: The snapshot folder or one split's JSON file (default: the hub at the pinned
            commit).
        answers: The published test answer key (default: found in the data folder).
        split: ``test``, ``val`` (also ``validation``, ``dev``) or ``train``.
        fewshot: How many worked examples from the validation split precede each question.
        fewshot_data: A local copy of the validation split (snapshot or file) for fewshot.
        prompt: The upstream prompt: ``answer_only`` or ``cot``.
        extraction: ``safe`` or ``cmb`` (the upstream rule); both are computed on every reply.
        order_sensitive: True compares the answer letters as the upstream string equality.
        seed: Seed of the few-shot draw.
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
    """
    refuse_unknown_parameters(cmb_exam, unknown_parameters)
    # The solver is built first: it checks prompt/fewshot/seed before any data is read.
    exam_prompt = cmb_exam_prompt(prompt, fewshot, fewshot_data, seed, revision)
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    template = load_template(f"cmb_{prompt}_user", family="cmb")
    dataset, origin, key_record = load_exam_dataset(data, answers, revision, split)
    return Task(
        dataset=dataset,
        solver=exam_prompt,
        scorer=cmb_exam_scorer(extraction=extraction, order_sensitive=order_sensitive),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
            "answer_key": key_record,
            "prompt": prompt,
            "fewshot": shots,
            "fewshot_seed": fewshot_seed if shots else None,
            "extraction": extraction,
            "order_sensitive": order_sensitive,
            "prompts": {template.name: template.log_record()},
            "scoring": SCORING_RULES,
        },
    )


@task(version=CMB_TASK_VERSION)
def cmb_clin(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    allow_self_judging: bool = False,
    judge_retries: int = JUDGE_DEFAULTS.retries,
    judge_structured_output: bool = JUDGE_DEFAULTS.structured_output,
    judge_cache: bool = JUDGE_DEFAULTS.cache,
    judge_timeout: float = JUDGE_DEFAULTS.timeout,
    judge_max_connections: int | None = JUDGE_DEFAULTS.max_connections,
    judge_failure: str = JUDGE_DEFAULTS.failure,
    judge_temperature: float | None = None,
    judge_seed: int | None = None,
    judge_max_tokens: int | None = None,
    **unknown_parameters: Any,
) -> Task:
    """CMB-Clin (74 cases; its one split, test): a multi-turn consultation per case, judged
    per answer by the ``grader`` role.

    Args:
        data: A local copy of CMB-Clin, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: ``test``, CMB-Clin's one split.
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
        judge_temperature: Deprecated: give it with the judge's role
            (--model-role 'grader={model: ..., temperature: 0}'); until then used where the
            role sets none.
        judge_seed: Deprecated, as judge_temperature (the role's seed).
        judge_max_tokens: Deprecated, as judge_temperature (the role's max_tokens).
    """
    refuse_unknown_parameters(cmb_clin, unknown_parameters)
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
        reply_budget=GRADER_MAX_TOKENS,
    )
    template = load_template("cmb_clin_user", family="cmb")
    dataset, origin, reference_keys = load_clin_dataset(data, revision, split)
    return Task(
        dataset=dataset,
        setup=judge_roles_check(["grader"], panels=False),
        solver=clinical_conversation(),
        scorer=cmb_clin_scorer(**judges.scorer_arguments()),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
            "reference_field": reference_keys,
            "history": "the model's own previous answers",
            "prompts": {template.name: template.log_record()},
        },
    )
