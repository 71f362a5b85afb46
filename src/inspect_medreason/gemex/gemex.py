"""GEMeX-VQA task."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import (
    GRADER_MAX_TOKENS,
    JUDGE_DEFAULTS,
    judge_arguments,
)
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    coerce_int,
    refuse_unknown_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import apply_shift, parse_shift
from inspect_medreason.core.solvers import judge_roles_check, template_prompt
from inspect_medreason.gemex.dataset import GEMEX_SPLIT, QUESTION_TYPES, load_gemex_dataset
from inspect_medreason.gemex.scorer import __doc__ as SCORING_RULES
from inspect_medreason.gemex.scorer import gemex_scorer

GEMEX_TASK_VERSION = family_version(__file__)


@task(version=GEMEX_TASK_VERSION)
def gemex(
    data: str | None = None,
    image_root: str | None = None,
    question_types: str | list[str] = "closed,single,multi,open",
    coordinate_size: int = 224,
    revision: str | None = None,
    split: str = GEMEX_SPLIT,
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
    """GEMeX-VQA test subset: the four JSONL files (one per question type) in a folder, or
    the hub. Images (MIMIC-CXR-JPG, credentialed) are looked up by ``image_path`` under
    ``image_root``; open answers are rated by the ``grader`` role.

    Args:
        data: A folder holding the four JSONL files (default: the hub at the pinned commit).
        image_root: The folder ``image_path`` is relative to (the MIMIC-CXR-JPG ``files/``
            folder's parent; see the family README).
        question_types: Which question types, comma-separated: closed, single, multi, open.
        coordinate_size: The side of the square the boxes' coordinates are given in.
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
    refuse_unknown_parameters(gemex, unknown_parameters)
    show_images = coerce_bool(images, "images")
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
    # MIMIC-CXR: every image is a chest radiograph
    spec = parse_shift(shift, severity, shift_seed, shift_judge_image, "X-ray")
    kinds = question_types.split(",") if isinstance(question_types, str) else list(question_types)
    unknown = [k for k in kinds if k.strip() not in QUESTION_TYPES]
    if unknown:
        raise TaskArgumentError(
            f"-T question_types: unknown {unknown}; choose from {list(QUESTION_TYPES)}"
        )
    system, user = (
        load_template("gemex_system", family="gemex"),
        load_template("gemex_user", family="gemex"),
    )
    dataset, origins = load_gemex_dataset(
        data,
        image_root,
        [k.strip() for k in kinds],
        revision,
        split,
        show_images,
        (system, user),
        coerce_int(coordinate_size, "coordinate_size"),
    )
    task = Task(
        dataset=dataset,
        setup=judge_roles_check(["grader"], panels=False),
        solver=template_prompt(),
        scorer=gemex_scorer(**judges.scorer_arguments()),
        config=DEFAULT_GENERATE_CONFIG,
        version=GEMEX_TASK_VERSION,
        metadata={
            "task_version": GEMEX_TASK_VERSION,
            "data": origins,
            "split": split,
            "images": show_images,
            "coordinate_size": coordinate_size,
            "prompts": {t.name: t.log_record() for t in (system, user)},
            "scoring": SCORING_RULES,
        },
    )
    return apply_shift(task, spec)
