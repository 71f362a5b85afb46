"""The judge meta-evaluation: the judges are under test, not a model.

``inspect eval inspect_medreason/judge_meta --model-role grader=... --model-role
vision_grader=...`` (no model under test: the task's own model is ``none``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.judges import judge_arguments
from inspect_medreason.judge_meta.dataset import BANDS, build_probes
from inspect_medreason.judge_meta.scorer import __doc__ as SCORING_RULES
from inspect_medreason.judge_meta.scorer import judge_meta_scorer
from inspect_medreason.medreason.medreason import judge_choices

JUDGE_META_TASK_VERSION = family_version(__file__)


@task(version=JUDGE_META_TASK_VERSION)
def judge_meta(
    **judging: Any,
) -> Task:
    """110 probes on the demo cases with known score bands: accuracy within band per
    component, injection resistance, test-retest consistency of the two judge roles."""
    scorer_args, record = judge_choices(judge_arguments(judging, "judge_meta", prompts=True))
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
