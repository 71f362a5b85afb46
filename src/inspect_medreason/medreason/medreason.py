"""The MedReason tasks. Each task function reads as a table of contents: data, prompt, scorer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import model_roles
from inspect_ai.scorer import Scorer

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.extraction import EXTRACTION_MODE
from inspect_medreason.core.extraction import __doc__ as EXTRACTION_RULES
from inspect_medreason.core.files import file_sha256
from inspect_medreason.core.judges import (
    GENERATION_RULE,
    JudgeSettings,
    JudgeTemplates,
    check_panel_reduce,
    judge_arguments,
    panel_roles,
    require_judge_roles,
)
from inspect_medreason.core.loaders import LoadedCases
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, coerce_bool, coerce_int
from inspect_medreason.core.prompts import PromptTemplate
from inspect_medreason.core.solvers import TrackPrompts, medreason_prompt
from inspect_medreason.medreason.dataset import build_dataset
from inspect_medreason.medreason.scorer import (
    JUDGE_ROLES,
    OPEN_COMPONENTS,
    mcq_scorer,
    open_ended_scorer,
)

MEDREASON_TASK_VERSION = family_version(__file__)


JUDGE_ROLE_BY_COMPONENT = {OPEN_COMPONENTS[kind]: JUDGE_ROLES[kind] for kind in JUDGE_ROLES}


def run_record(
    loaded: LoadedCases,
    version: str,
    prompts: list[PromptTemplate],
    **choices: Any,
) -> dict[str, Any]:
    """Everything that changes a number, for the eval log's task metadata."""
    # A release split over several files records each of them (each read once).
    record_files = {str(path): file_sha256(path) for path in loaded.record_files}
    truth = loaded.ground_truth_file
    return {
        "task_version": version,
        "data": {
            "cases_file": str(loaded.cases_file),
            # the folder case images are read from, for re-scoring (medreason.image_folder)
            "data_dir": str(loaded.data_dir),
            "cases_sha256": record_files[str(loaded.cases_file)],
            "ground_truth_file": str(truth) if truth else None,
            "ground_truth_sha256": file_sha256(truth) if truth else None,
            "record_files": record_files,
            "num_cases": len(loaded.cases),
            "unknown_keys": loaded.unknown_keys,
        },
        "prompts": {template.name: template.log_record() for template in prompts},
        "extraction": {"mode": EXTRACTION_MODE, "rules": (EXTRACTION_RULES or "").strip()},
        **choices,
    }


def judge_choices(
    judge_args: dict[str, Any],
    open_scoring: str = "challenge",
    roles: dict[str, str] | None = None,
    templates: JudgeTemplates | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate judge arguments at task creation (not at the first score).

    Returns the scorer's arguments and the record of them for the eval log. Another open
    scoring (``open_scoring``) brings its own ``roles`` (component -> role) and built-in
    ``templates``.
    """
    settings = JudgeSettings.from_judge_args(judge_args)
    judge_prompts = judge_args.get("judge_prompts")
    panel_reduce = check_panel_reduce(judge_args.get("panel_reduce", "median"))
    scorer_args: dict[str, Any] = {
        "panel_reduce": panel_reduce,
        "allow_self_judging": coerce_bool(
            judge_args.get("allow_self_judging", False), "allow_self_judging"
        ),
        **{f"judge_{key}": value for key, value in asdict(settings).items()},
    }
    if templates is None:
        templates = JudgeTemplates.load(judge_prompts)
        scorer_args["judge_prompts"] = judge_prompts
    elif judge_prompts:
        raise TaskArgumentError(
            f"-T judge_prompts replaces the challenge judges' templates; with "
            f"open_scoring={open_scoring} its judge's built-in template is used, so drop it"
        )
    component_roles = roles or JUDGE_ROLE_BY_COMPONENT
    require_judge_roles(
        list(dict.fromkeys(component_roles.values())),
        scorer_args["allow_self_judging"],
        panels=True,
    )
    record = {
        "open_scoring": open_scoring,
        "roles": component_roles,
        "settings": asdict(settings),
        # The roles are bound after the task is built: what each judge was called with is in
        # every score's judge record ("generation"), the roles' own configs in the log's
        # model_roles.
        "generation_rule": GENERATION_RULE,
        "templates": templates.log_record(),
        "templates_sha256": templates.sha256,
        "allow_self_judging": scorer_args["allow_self_judging"],
        "panel_reduce": panel_reduce,
        # The judges of each panel, as far as the roles are known when the task is built
        # (every score's metadata names the models that judged it).
        "panels": {
            role: panel_roles(role, model_roles())
            for role in dict.fromkeys(component_roles.values())
        },
    }
    return scorer_args, record


def medreason_task(
    tracks: set[str],
    version: str,
    name: str,
    data: str | None,
    ground_truth: str | None,
    shuffle_choices: Any,
    seed: Any,
    images: Any,
    judge_args: dict[str, Any] | None,
    open_scorer: Callable[..., Scorer] | None = None,
    data_origin: dict[str, Any] | None = None,
) -> Task:
    """The one construction behind the MedReason and Med-CMR tasks: data and prompts for the
    given tracks, the solver, the scorer of each track, and the log record of every choice."""
    shuffle = coerce_bool(shuffle_choices, "shuffle_choices")
    shuffle_seed = coerce_int(seed, "seed")
    show_images = coerce_bool(images, "images")
    scorer_args: dict[str, Any] = {}
    judge_record = None
    if judge_args:
        options = dict(judge_args)
        scoring = {
            k: options.pop(k) for k in ("open_scoring", "roles", "templates") if k in options
        }
        scorer_args, judge_record = judge_choices(options, **scoring)
    dataset, loaded = build_dataset(
        data, ground_truth, tracks, shuffle_seed if shuffle else None, name, show_images
    )
    prompts = {track: TrackPrompts.load(track) for track in sorted(tracks)}
    scorers = []
    if "mcq" in tracks:
        scorers.append(mcq_scorer())
    if "open" in tracks:
        # The run's data folder, recorded with the scorer: re-scoring reads case images only
        # from it (or from one the user names), never from a folder written into a sample.
        scorer_args["data_dir"] = str(loaded.data_dir)
        scorers.append((open_scorer or open_ended_scorer)(**scorer_args))
    choices: dict[str, Any] = {"images": show_images}
    if not show_images:
        choices["images_read"] = (
            "for the judges only (the model is shown none)"
            if "open" in tracks
            else "none: no image file was opened or needed (images=false)"
        )
    if "mcq" in tracks:
        choices.update(shuffle_choices=shuffle, shuffle_seed=shuffle_seed if shuffle else None)
    if judge_record is not None:
        choices["judges"] = judge_record
    if data_origin is not None:
        choices["data_origin"] = data_origin
    return Task(
        dataset=dataset,
        solver=medreason_prompt(),
        scorer=scorers,
        config=DEFAULT_GENERATE_CONFIG,
        version=version,
        metadata=run_record(
            loaded,
            version,
            [template for track in sorted(tracks) for template in prompts[track].templates()],
            **choices,
        ),
    )


@task(version=MEDREASON_TASK_VERSION)
def mcq(
    data: str | None = None,
    ground_truth: str | None = None,
    shuffle_choices: bool = False,
    seed: int = 42,
    images: bool = True,
) -> Task:
    """The closed-ended track: pick one option label; exact-match accuracy.

    Args:
        data: A cases.json, a folder holding one, or a .jsonl (default: the shipped demo set).
        ground_truth: An official ground_truth.json (default: the one beside cases.json).
        shuffle_choices: Shuffle option texts per case (stable for a seed); answers map back.
        seed: Seed for shuffle_choices.
        images: False withholds the images (blind control) and says so in the prompt.
    """
    return medreason_task(
        {"mcq"},
        MEDREASON_TASK_VERSION,
        "medreason_mcq",
        data,
        ground_truth,
        shuffle_choices,
        seed,
        images,
        judge_args=None,
    )


@task(version=MEDREASON_TASK_VERSION)
def open_ended(
    data: str | None = None,
    ground_truth: str | None = None,
    images: bool = True,
    **judging: Any,
) -> Task:
    """The open-ended track: reasoning_trace + answer, judged on GT_final, VA_answer,
    RVF_trace (0-4) with the gated VA_final.

    Judges are model roles: ``--model-role grader=...`` (text-only GT judge) and
    ``--model-role vision_grader=...`` (vision judge for VA and RVF).

    Args:
        data: A cases.json, a folder holding one, or a .jsonl (default: the shipped demo set).
        ground_truth: An official ground_truth.json (default: the one beside cases.json).
        images: False withholds the images from the model (blind control); judges still see them.
        judging: The judge arguments (``-T``), declared once in
            ``core.judges.JUDGE_TASK_OPTIONS`` and ``PANEL_TASK_OPTIONS``; a judge's
            temperature, seed and max_tokens go with its role
            (``--model-role 'grader={model: ..., temperature: 0}'``).
    """
    judge_args = judge_arguments(judging, "open_ended", prompts=True, panel=True)
    return medreason_task(
        {"open"},
        MEDREASON_TASK_VERSION,
        "medreason_open_ended",
        data,
        ground_truth,
        False,
        0,
        images,
        judge_args,
    )


@task(version=MEDREASON_TASK_VERSION)
def medreason(
    data: str | None = None,
    ground_truth: str | None = None,
    shuffle_choices: bool = False,
    seed: int = 42,
    images: bool = True,
    **judging: Any,
) -> Task:
    """Both tracks from one mixed cases.json, reporting the three leaderboard metrics:
    MCQ Accuracy (``mcq_scorer``), Open-ended GT and Open-ended VA (``open_ended_scorer``).
    MCQ cases cost no judge call. Arguments as for ``mcq`` and ``open_ended``.
    """
    judge_args = judge_arguments(judging, "medreason", prompts=True, panel=True)
    return medreason_task(
        {"mcq", "open"},
        MEDREASON_TASK_VERSION,
        "medreason",
        data,
        ground_truth,
        shuffle_choices,
        seed,
        images,
        judge_args,
    )
