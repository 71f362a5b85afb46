"""The MedReason tasks. Each task function reads as a table of contents: data, prompt, scorer."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import model_roles

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.extraction import EXTRACTION_MODE, PROVEN_RULES
from inspect_medreason.core.extraction import __doc__ as EXTRACTION_RULES
from inspect_medreason.core.extractor import check_rate, extractor_record
from inspect_medreason.core.files import file_sha256
from inspect_medreason.core.judges import (
    GENERATION_RULE,
    JudgeArguments,
    JudgeTemplates,
    judge_parameters,
    panel_roles,
)
from inspect_medreason.core.loaders import LoadedCases
from inspect_medreason.core.log_paths import files_for_log, path_for_log
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    coerce_int,
    task_parameters,
)
from inspect_medreason.core.prompts import PromptTemplate
from inspect_medreason.core.shift import ShiftPlan, apply_shift, parse_shift, shift_parameters
from inspect_medreason.core.solvers import TrackPrompts, judge_roles_check, medreason_prompt
from inspect_medreason.medreason.dataset import build_dataset
from inspect_medreason.medreason.image_folder import register_data_folder
from inspect_medreason.medreason.scorer import (
    JUDGE_ROLES,
    OPEN_COMPONENTS,
    OpenScoring,
    mcq_scorer,
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
    # Files by their names in the data folder, never its local path (core.log_paths).
    record_files = files_for_log(loaded.record_files, loaded.data_dir)
    cases_file = path_for_log(loaded.cases_file, loaded.data_dir)
    truth = loaded.ground_truth_file
    return {
        "task_version": version,
        "data": {
            "cases_file": cases_file,
            "cases_sha256": record_files[cases_file],
            "ground_truth_file": path_for_log(truth, loaded.data_dir) if truth else None,
            "ground_truth_sha256": file_sha256(truth) if truth else None,
            "record_files": record_files,
            "num_cases": len(loaded.cases),
            "unknown_keys": loaded.unknown_keys,
        },
        "prompts": {template.name: template.log_record() for template in prompts},
        "extraction": {
            "mode": EXTRACTION_MODE,
            "proven_rules": sorted(PROVEN_RULES),
            "rules": (EXTRACTION_RULES or "").strip(),
        },
        **choices,
    }


def judge_choices(
    judges: JudgeArguments,
    open_scoring: str = "challenge",
    roles: dict[str, str] | None = None,
    templates: JudgeTemplates | None = None,
) -> dict[str, Any]:
    """Check the judge templates at task creation (not at the first score), and the record
    of every judge choice for the eval log. Another open scoring (``open_scoring``) brings
    its own ``roles`` (component -> role) and built-in ``templates``. The roles themselves
    are checked where Inspect binds them: a bad binding by the task's set-up step
    (``judge_roles_check``), a missing role at the first score (a ``--no-score`` run,
    however it is asked for, needs no judge)."""
    if templates is None:
        templates = JudgeTemplates.load(judges.prompts)
    elif judges.prompts:
        raise TaskArgumentError(
            f"-T judge_prompts replaces the challenge judges' templates; with "
            f"open_scoring={open_scoring} its judge's built-in template is used, so drop it"
        )
    component_roles = roles or JUDGE_ROLE_BY_COMPONENT
    return {
        "open_scoring": open_scoring,
        "roles": component_roles,
        "settings": asdict(judges.settings),
        # The roles are bound after the task is built: what each judge was called with is in
        # every score's judge record ("generation"), the roles' own configs in the log's
        # model_roles.
        "generation_rule": GENERATION_RULE,
        "templates": templates.log_record(),
        "templates_sha256": templates.sha256,
        "allow_self_judging": judges.allow_self_judging,
        "panel_reduce": judges.panel_reduce,
        # The judges of each panel, as far as the roles are known when the task is built
        # (every score's metadata names the models that judged it).
        "panels": {
            role: panel_roles(role, model_roles())
            for role in dict.fromkeys(component_roles.values())
        },
    }


def medreason_task(
    tracks: set[str],
    version: str,
    name: str,
    data: str | None,
    ground_truth: str | None,
    shuffle_choices: Any,
    seed: Any,
    images: Any,
    judges: JudgeArguments | None,
    open_scoring: OpenScoring | None = None,
    data_origin: dict[str, Any] | None = None,
    shift: ShiftPlan | None = None,
    extractor_check_rate: Any = 0.0,
) -> Task:
    """The one construction behind the MedReason and Med-CMR tasks: data and prompts for the
    given tracks, the solver, the scorer of each track, and the log record of every choice."""
    shuffle = coerce_bool(shuffle_choices, "shuffle_choices")
    shuffle_seed = coerce_int(seed, "seed")
    show_images = coerce_bool(images, "images")
    scoring = open_scoring or OpenScoring()
    judge_record = None
    judge_roles = list(dict.fromkeys((scoring.roles or JUDGE_ROLE_BY_COMPONENT).values()))
    if judges is not None:
        judge_record = judge_choices(judges, scoring.name, scoring.roles, scoring.templates)
    dataset, loaded = build_dataset(
        data, ground_truth, tracks, shuffle_seed if shuffle else None, name, show_images
    )
    prompts = {track: TrackPrompts.load(track) for track in sorted(tracks)}
    scorers = []
    rate = check_rate(extractor_check_rate)
    if "mcq" in tracks:
        scorers.append(mcq_scorer(extractor_check_rate=rate))
    if "open" in tracks:
        if judges is None:
            raise ValueError(f"{name}: the open-ended track needs its judge arguments")
        # The scorer finds the run's data folder in this process by the digest of its cases
        # file (the log names no folder); re-scoring in another reads it from -S data_dir.
        key = register_data_folder(file_sha256(loaded.cases_file), loaded.data_dir)
        scorers.append(scoring.scorer(judges, key))
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
    if "mcq" in tracks:
        choices["extractor"] = extractor_record(rate)
    if data_origin is not None:
        choices["data_origin"] = data_origin
    task = Task(
        dataset=dataset,
        setup=judge_roles_check(judge_roles, panels=True) if judges is not None else None,
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
    return apply_shift(task, shift or parse_shift(None, 0, 0))


@task(version=MEDREASON_TASK_VERSION)
@task_parameters(image_shift=shift_parameters())
def mcq(
    data: str | None = None,
    ground_truth: str | None = None,
    shuffle_choices: bool = False,
    seed: int = 42,
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    extractor_check_rate: float = 0.0,
) -> Task:
    """The closed-ended track: pick one option label; exact-match accuracy.

    Args:
        data: A cases.json, a folder holding one, or a .jsonl (default: the shipped demo set).
        ground_truth: An official ground_truth.json (default: the one beside cases.json).
        shuffle_choices: Shuffle option texts per case (stable for a seed); answers map back.
        seed: Seed for shuffle_choices.
        images: False withholds the images (blind control) and says so in the prompt.
        extractor_check_rate: With ``--model-role extractor=...``, the share of replies the
            rules read that are sent to the extractor too, for the rules-extractor agreement
            (unread replies are always sent; see docs/mcq.md).
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
        judges=None,
        shift=image_shift,
        extractor_check_rate=extractor_check_rate,
    )


@task(version=MEDREASON_TASK_VERSION)
@task_parameters(image_shift=shift_parameters(), judges=judge_parameters(prompts=True, panel=True))
def open_ended(
    data: str | None = None,
    ground_truth: str | None = None,
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
) -> Task:
    """The open-ended track: reasoning_trace + answer, judged on GT_final, VA_answer,
    RVF_trace (0-4) with the gated VA_final.

    Judges are model roles: ``--model-role grader=...`` (text-only GT judge) and
    ``--model-role vision_grader=...`` (vision judge for VA and RVF); a judge's temperature,
    seed and max_tokens go with its role (``--model-role 'grader={model: ...,
    temperature: 0}'``).

    Args:
        data: A cases.json, a folder holding one, or a .jsonl (default: the shipped demo set).
        ground_truth: An official ground_truth.json (default: the one beside cases.json).
        images: False withholds the images from the model (blind control); judges still see them.
    """
    return medreason_task(
        {"open"},
        MEDREASON_TASK_VERSION,
        "medreason_open_ended",
        data,
        ground_truth,
        False,
        0,
        images,
        judges,
        shift=image_shift,
    )


@task(version=MEDREASON_TASK_VERSION)
@task_parameters(image_shift=shift_parameters(), judges=judge_parameters(prompts=True, panel=True))
def medreason(
    data: str | None = None,
    ground_truth: str | None = None,
    shuffle_choices: bool = False,
    seed: int = 42,
    images: bool = True,
    *,
    image_shift: ShiftPlan,
    judges: JudgeArguments,
) -> Task:
    """Both tracks from one mixed cases.json, reporting the three leaderboard metrics:
    MCQ Accuracy (``mcq_scorer``), Open-ended GT and Open-ended VA (``open_ended_scorer``).
    MCQ cases cost no judge call; judges as for ``open_ended``.

    Args:
        data: A cases.json, a folder holding one, or a .jsonl (default: the shipped demo set).
        ground_truth: An official ground_truth.json (default: the one beside cases.json).
        shuffle_choices: Shuffle MCQ option texts per case (stable for a seed); answers map
            back.
        seed: Seed for shuffle_choices.
        images: False withholds the images from the model (blind control); judges still see them.
    """
    return medreason_task(
        {"mcq", "open"},
        MEDREASON_TASK_VERSION,
        "medreason",
        data,
        ground_truth,
        shuffle_choices,
        seed,
        images,
        judges,
        shift=image_shift,
    )
