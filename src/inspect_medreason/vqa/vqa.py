"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA (see ``scorer`` for the scoring rules)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import (
    GRADER_MAX_TOKENS,
    JUDGE_DEFAULTS,
    JudgeArguments,
    judge_arguments,
)
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    refuse_unknown_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import ShiftPlan, apply_shift, parse_shift
from inspect_medreason.core.short_answers import yes_no_vocabulary
from inspect_medreason.core.solvers import judge_roles_check, template_prompt
from inspect_medreason.vqa.dataset import (
    PATH_VQA,
    SLAKE,
    VQA_RAD,
    VqaBenchmark,
    load_vqa_dataset,
)
from inspect_medreason.vqa.scorer import __doc__ as SCORING_RULES
from inspect_medreason.vqa.scorer import vqa_metrics, vqa_scorer

VQA_TASK_VERSION = family_version(__file__)


def vqa_task(
    benchmark: VqaBenchmark,
    data: str | None,
    image_root: str | None,
    revision: str | None,
    split: str | None,
    language: str | None,
    images: Any,
    judges: JudgeArguments,
    shift: ShiftPlan,
    closed_open: str = "release",
) -> Task:
    show_images = coerce_bool(images, "images")
    system, user = (
        load_template("vqa_system", family="vqa"),
        load_template("vqa_user", family="vqa"),
    )
    dataset, origin = load_vqa_dataset(
        benchmark,
        data,
        image_root,
        revision,
        split,
        language,
        show_images,
        (system, user),
        closed_open=str(closed_open),
    )
    task = Task(
        dataset=dataset,
        setup=judge_roles_check(["grader"], panels=False),
        solver=template_prompt(),
        scorer=vqa_scorer(yes_no_vocabulary=benchmark.name, **judges.scorer_arguments()),
        metrics=vqa_metrics(list(benchmark.group_fields)),
        config=DEFAULT_GENERATE_CONFIG,
        version=VQA_TASK_VERSION,
        metadata={
            "task_version": VQA_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
            "licence": benchmark.licence,
            "language": language,
            "images": show_images,
            "prompts": {t.name: t.log_record() for t in (system, user)},
            "scoring": SCORING_RULES,
            "yes_no_vocabulary": yes_no_vocabulary(benchmark.name).as_record(),
        },
    )
    return apply_shift(task, shift)


@task(version=VQA_TASK_VERSION)
def medreason_vqa_rad(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    closed_open: str = "release",
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
    judge_temperature: float | None = None,
    judge_seed: int | None = None,
    judge_max_tokens: int | None = None,
    **unknown_parameters: Any,
) -> Task:
    """VQA-RAD test split (451 QA): closed yes/no by exact match, open by the grader role.

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
        images: False withholds the images (blind control).
        closed_open: Which questions are closed: ``release``, the release's answer_type
            (joined to the hub's rows, which dropped it), or ``yes_no``, closed when the
            reference is yes or no. The log's data.closed_open records which.
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
        judge_temperature: Deprecated: give it with the judge's role
            (--model-role 'grader={model: ..., temperature: 0}'); until then used where the
            role sets none.
        judge_seed: Deprecated, as judge_temperature (the role's seed).
        judge_max_tokens: Deprecated, as judge_temperature (the role's max_tokens).
    """
    refuse_unknown_parameters(medreason_vqa_rad, unknown_parameters)
    return vqa_task(
        VQA_RAD,
        data,
        None,
        revision,
        split,
        None,
        images,
        judge_arguments(
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
        ),
        parse_shift(shift, severity, shift_seed, shift_judge_image),
        closed_open=closed_open,
    )


@task(version=VQA_TASK_VERSION)
def path_vqa(
    data: str | None = None,
    revision: str | None = None,
    split: str = "test",
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
    judge_temperature: float | None = None,
    judge_seed: int | None = None,
    judge_max_tokens: int | None = None,
    **unknown_parameters: Any,
) -> Task:
    """PathVQA test split: closed yes/no by exact match, open by the grader role.

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
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
        judge_temperature: Deprecated: give it with the judge's role
            (--model-role 'grader={model: ..., temperature: 0}'); until then used where the
            role sets none.
        judge_seed: Deprecated, as judge_temperature (the role's seed).
        judge_max_tokens: Deprecated, as judge_temperature (the role's max_tokens).
    """
    refuse_unknown_parameters(path_vqa, unknown_parameters)
    return vqa_task(
        PATH_VQA,
        data,
        None,
        revision,
        split,
        None,
        images,
        judge_arguments(
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
        ),
        parse_shift(shift, severity, shift_seed, shift_judge_image, "pathology"),
    )


@task(version=VQA_TASK_VERSION)
def slake(
    data: str | None = None,
    image_root: str | None = None,
    language: str = "en",
    revision: str | None = None,
    split: str = "test",
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
    judge_temperature: float | None = None,
    judge_seed: int | None = None,
    judge_max_tokens: int | None = None,
    **unknown_parameters: Any,
) -> Task:
    """SLAKE test split (``language=en|zh|all``); images by ``img_name`` under ``image_root``
    (default: the data folder). Grouped by modality, content type and organ.

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        image_root: The folder ``img_name`` is relative to (default: the data folder).
        language: ``en``, ``zh`` or ``all``.
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: The published split to evaluate.
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
        judge_temperature: Deprecated: give it with the judge's role
            (--model-role 'grader={model: ..., temperature: 0}'); until then used where the
            role sets none.
        judge_seed: Deprecated, as judge_temperature (the role's seed).
        judge_max_tokens: Deprecated, as judge_temperature (the role's max_tokens).
    """
    refuse_unknown_parameters(slake, unknown_parameters)
    return vqa_task(
        SLAKE,
        data,
        image_root,
        revision,
        split,
        language,
        images,
        judge_arguments(
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
        ),
        parse_shift(shift, severity, shift_seed, shift_judge_image),
    )
