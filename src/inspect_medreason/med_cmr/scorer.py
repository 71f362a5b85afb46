"""Med-CMR's own open-ended scoring, as an alternative to the challenge's three judges.

The Med-CMR paper (arXiv 2512.00818) has one judge rate each reply on four criteria —
consistency, coherence, visual accuracy, ground-truth correctness — combines them with
weights 1/1/4/4 and normalises the weighted mean to 0-100. This is an APPROXIMATION of that
protocol: the paper's exact judge prompt is in its supplement and its judge model is no
longer served, so the rubric wording and the 0-10 scale per criterion are ours. Numbers from
it are comparable with each other, not with the paper's table.

The judge is the ``vision_grader`` role (it needs the images), optionally a panel
(``vision_grader_2``, ...), whose members' 0-100 scores are reduced by ``panel_reduce``. A
reply the judge cannot rate leaves the case unscored, never zero.
"""

from __future__ import annotations

import math
from typing import Any, cast

from inspect_ai.model import ChatMessage
from inspect_ai.scorer import Metric, Score, Scorer, Target, Value, mean, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import collect
from pydantic import BaseModel, Field

from inspect_medreason.core.extraction import json_objects, parse_open_reply
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.intervals import image_ci, image_stderr
from inspect_medreason.core.judges import (
    DEFAULT_PANEL_REDUCE,
    JUDGE_DEFAULTS,
    JudgeOutcome,
    JudgeSettings,
    JudgeTemplates,
    LineageWatch,
    Verdict,
    ask_judge,
    check_panel_reduce,
    fence_id,
    grader_templates,
    integer_score,
    judge_request,
    panel_judges,
    raise_judge_failures,
    rationale_text,
    reduce_panel,
    short_repr,
)
from inspect_medreason.core.metrics import breakdown
from inspect_medreason.core.params import coerce_bool
from inspect_medreason.core.prompts import context_block
from inspect_medreason.core.rescored_images import rescored_images_unlogged
from inspect_medreason.medreason.image_folder import image_folder
from inspect_medreason.medreason.scorer import case_image_uris

# Criterion -> weight, as the paper gives them.
CRITERIA: dict[str, int] = {
    "consistency": 1,
    "coherence": 1,
    "visual_accuracy": 4,
    "ground_truth_correctness": 4,
}
CRITERION_MAX = 10
MED_CMR_ROLE = "vision_grader"
TEMPLATE_PREFIX = "med_cmr_judge"
MED_CMR_FORMAT = (
    '{"consistency": <0-10>, "coherence": <0-10>, "visual_accuracy": <0-10>, '
    '"ground_truth_correctness": <0-10>, "rationale": "<one or two sentences>"}'
)


class MedCmrRating(BaseModel):
    """What the Med-CMR judge must return: four criteria, 0 to 10 each."""

    consistency: int = Field(ge=0, le=CRITERION_MAX)
    coherence: int = Field(ge=0, le=CRITERION_MAX)
    visual_accuracy: int = Field(ge=0, le=CRITERION_MAX)
    ground_truth_correctness: int = Field(ge=0, le=CRITERION_MAX)
    rationale: str


def weighted_score(parts: dict[str, int]) -> float:
    """The four criteria (0-10) weighted 1/1/4/4, as a 0-100 score."""
    total = sum(CRITERIA.values())
    return 100.0 * sum(CRITERIA[name] * parts[name] for name in CRITERIA) / (total * CRITERION_MAX)


def parse_med_cmr_reply(text: str) -> tuple[Verdict | None, str]:
    """The four integer criteria from a judge reply, or None with what was wrong."""
    candidates = [c for c in json_objects(text) if any(name in c for name in CRITERIA)]
    if not candidates:
        return None, f"no JSON object with the criteria {', '.join(CRITERIA)}"
    candidate = candidates[-1]
    parts: dict[str, int] = {}
    for name in CRITERIA:
        if name not in candidate:
            return None, f"criterion {name!r} is missing"
        value = integer_score(candidate[name])
        if value is None:
            return None, f"{name} {short_repr(candidate[name])} is not an integer"
        if not 0 <= value <= CRITERION_MAX:
            return None, f"{name} {value} is outside 0-{CRITERION_MAX}"
        parts[name] = value
    # Verdict.score is the rounded 0-100 total; the exact value is recomputed from parts.
    return Verdict(
        round(weighted_score(parts)), rationale_text(candidate.get("rationale")), parts
    ), ""


def candidate_text(trace: str, answer: str) -> str:
    """The candidate's whole reply as the judge sees it between its markers (fenced and
    scrubbed from the judge's echo as one text)."""
    return f"{trace}\n{answer}"


def med_cmr_messages(
    templates: JudgeTemplates, metadata: dict[str, Any], trace: str, answer: str, images: list[str]
) -> list[ChatMessage]:
    text = templates.templates[f"{TEMPLATE_PREFIX}_user"].render(
        question=str(metadata.get("question", "")),
        context_block=context_block(metadata.get("context")),
        reference_answer=str(metadata.get("reference_answer") or ""),
        candidate_trace=trace,
        candidate_answer=answer,
        fence_id=fence_id(candidate_text(trace, answer)),
    )
    return judge_request(templates.templates[f"{TEMPLATE_PREFIX}_system"].text, text, images)


def reduce_scores(values: list[float], how: str) -> float:
    """A panel's values as one, as the challenge's panels are reduced; NaN for none."""
    reduced = reduce_panel(values, how)
    return math.nan if reduced is None else reduced


def med_cmr_metrics() -> dict[str, list[Metric]]:
    # By task, the paper's own breakdown. One grouped() per score key: Inspect keeps only
    # one of several grouped metrics on the same key.
    return {
        "med_cmr_score": [mean(), image_stderr(), image_ci(top=100.0), *breakdown(["task"])],
        **{name: [mean()] for name in CRITERIA},
        "med_cmr_unscored": [mean()],
    }


@scorer(metrics=med_cmr_metrics())
def med_cmr_scorer(
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
    panel_reduce: str = DEFAULT_PANEL_REDUCE,
    data_dir: str | None = None,
    data_key: str | None = None,
) -> Scorer:
    """Med-CMR's four-criterion open-ended score (approximation, see the module): the
    ``vision_grader`` role rates consistency, coherence, visual accuracy and ground-truth
    correctness 0-10; weighted 1/1/4/4 and normalised to 0-100. MCQ cases are left
    unscored here (they belong to ``mcq_scorer``). ``data_dir`` and ``data_key``: where case
    images not held in the log are read from, as for ``open_ended_scorer``."""
    how = check_panel_reduce(panel_reduce)
    templates = grader_templates(TEMPLATE_PREFIX, family="med_cmr")
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
    self_judging = coerce_bool(allow_self_judging, "allow_self_judging")
    lineage = LineageWatch()
    folder = image_folder(data_dir, data_key)

    async def score(state: TaskState, target: Target) -> Score:
        if state.metadata.get("task_type") != "open":
            return Score.unscored(reason="MCQ case: scored by mcq_scorer, not by the judge")
        reply = parse_open_reply(state.output.completion)
        unscored = {
            "med_cmr_score": math.nan,
            **dict.fromkeys(CRITERIA, math.nan),
            "med_cmr_unscored": 1.0,
        }
        base = {
            "answer": reply.answer,
            "reasoning_trace": reply.reasoning_trace,
            "parse_method": reply.method,
        }
        if not state.metadata.get("reference_answer"):
            return Score(
                value=cast(Value, unscored),
                explanation="no reference answer",
                metadata={**base, "failure": "no reference answer"},
            )
        try:
            images = await case_image_uris(state, folder)
        except ImagePathError as error:
            return Score(
                value=cast(Value, unscored),
                explanation=f"case image refused: {error}",
                metadata={**base, "failure": f"case image refused: {error}"},
            )
        if not reply.answer and not reply.reasoning_trace:
            zero = {"med_cmr_score": 0.0, **dict.fromkeys(CRITERIA, 0.0), "med_cmr_unscored": 0.0}
            return Score(
                value=cast(Value, zero),
                answer="",
                explanation="empty reply: 0 on every criterion by rule",
                metadata={**base, "by_rule": True},
            )
        messages = med_cmr_messages(
            templates, state.metadata, reply.reasoning_trace, reply.answer, images
        )
        panel = panel_judges(MED_CMR_ROLE, self_judging, lineage)
        roles = [role for role, _ in panel]
        candidate = candidate_text(reply.reasoning_trace, reply.answer)
        with rescored_images_unlogged(state, images):
            outcomes: list[JudgeOutcome] = await collect(
                *[
                    ask_judge(
                        "med_cmr",
                        model,
                        messages,
                        templates,
                        settings,
                        parse=parse_med_cmr_reply,
                        expected=MED_CMR_FORMAT,
                        schema=MedCmrRating,
                        candidate=candidate,
                        role=role,
                    )
                    for role, model in panel
                ]
            )
        # ask_judge never raises a judge's failure: under -T judge_failure=error it is
        # raised here, naming the judge (not the task group the calls ran in).
        raise_judge_failures(
            settings,
            [(role, str(model), out) for (role, model), out in zip(panel, outcomes, strict=True)],
        )
        rated = [outcome for outcome in outcomes if outcome.score is not None]
        judges = [
            {"role": role, **outcome.as_metadata()}
            for role, outcome in zip(roles, outcomes, strict=True)
        ]
        if not rated:
            failures = "; ".join(str(outcome.failure) for outcome in outcomes)
            return Score(
                value=cast(Value, unscored),
                answer=reply.answer,
                explanation=f"UNSCORED: {failures}",
                metadata={**base, "judges": judges},
            )
        value: dict[str, float] = {
            "med_cmr_score": reduce_scores([weighted_score(o.parts) for o in rated], how),
            **{
                name: reduce_scores([float(o.parts[name]) for o in rated], how) for name in CRITERIA
            },
            "med_cmr_unscored": 0.0,
        }
        explanation = (
            f"Med-CMR score {value['med_cmr_score']:.1f}/100 (approximation; weights 1/1/4/4): "
            + ", ".join(f"{name} {value[name]:g}" for name in CRITERIA)
            + f". {rated[0].rationale}"
        )
        return Score(
            value=cast(Value, value),
            answer=reply.answer,
            explanation=explanation,
            metadata={**base, "judges": judges, "panel_failed": len(outcomes) - len(rated)},
        )

    return score
