"""The judge meta-evaluation: the judges are under test, not a model.

``inspect eval inspect_medreason/judge_meta --model-role grader=... --model-role
vision_grader=...`` (no model under test: the task's own model is ``none``).
"""

from __future__ import annotations

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import JudgeArguments, judge_parameters
from inspect_medreason.core.params import task_parameters
from inspect_medreason.core.solvers import judge_roles_check
from inspect_medreason.judge_meta.dataset import BANDS, build_probes
from inspect_medreason.judge_meta.scorer import __doc__ as SCORING_RULES
from inspect_medreason.judge_meta.scorer import judge_meta_scorer
from inspect_medreason.medreason.medreason import JUDGE_ROLE_BY_COMPONENT, judge_choices

JUDGE_META_TASK_VERSION = family_version(__file__)


@task(version=JUDGE_META_TASK_VERSION)
@task_parameters(judges=judge_parameters(prompts=True))
def judge_meta(*, judges: JudgeArguments) -> Task:
    """110 probes on the demo cases with known score bands: accuracy within band per
    component, injection resistance, test-retest consistency of the two judge roles
    (``grader`` and ``vision_grader``, one model each: panels are not meta-evaluated).
    """
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
