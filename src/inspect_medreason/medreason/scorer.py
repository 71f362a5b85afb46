"""Scorers of the two MedReason tracks.

MCQ: exact match of the extracted option label (plus the official rule on the raw answer
field as ``strict_accuracy``, and on what the challenge's template and baseline containers
would have submitted, guesses included, as ``official_template_accuracy`` and
``official_baseline_accuracy``, with the number of cases each reads differently). Open-ended: the three judges ``GT_final``, ``VA_answer`` and
``RVF_trace``, with ``VA_final`` gated by ``RVF_trace``; a judge failure leaves its
component unscored, never zero.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from inspect_ai.scorer import (
    Metric,
    Score,
    Scorer,
    Target,
    Value,
    scorer,
)
from inspect_ai.solver import TaskState
from inspect_ai.util import collect, materialize_media

from inspect_medreason.core.extraction import extract_label, parse_open_reply
from inspect_medreason.core.extractor import (
    check_rate,
    extractor_bound,
    extractor_values,
    read_with_extractor,
    why_to_send,
)
from inspect_medreason.core.gate import gate_visual_accuracy
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.judges import (
    DEFAULT_PANEL_REDUCE,
    JUDGE_DEFAULTS,
    JUDGE_KINDS,
    JudgeArguments,
    JudgeKind,
    JudgeOutcome,
    JudgeSettings,
    JudgeTemplates,
    LineageWatch,
    ask_judge,
    check_panel_reduce,
    judge_messages,
    panel_component,
    panel_judges,
    panel_metadata,
    raise_judge_failures,
    scored_by_rule,
)
from inspect_medreason.core.metrics import (
    MCQ_GROUP_FIELDS,
    component_breakdowns,
    component_metrics,
    mcq_metrics,
)
from inspect_medreason.core.official_template import READERS, official_reading
from inspect_medreason.core.params import coerce_bool
from inspect_medreason.core.rescored_images import input_images, rescored_images_unlogged
from inspect_medreason.core.schema import sample_options
from inspect_medreason.core.shift import judge_image_files, wants_clean_judge_image
from inspect_medreason.medreason.image_folder import ImageFolder, image_folder

logger = logging.getLogger(__name__)


def official_mcq_correct(raw_answer: str | None, target: str) -> bool:
    """The official rule: ``answer.strip()`` equals the reference label, case-sensitive."""
    return raw_answer is not None and raw_answer.strip() == target.strip()


def score_mcq_reply(
    completion: str, metadata: dict[str, Any], target: str, choices: Sequence[str] = ()
) -> Score:
    """Score one MCQ reply; the work behind ``mcq_scorer`` with no Inspect state needed."""
    options = sample_options(metadata, choices)
    label_map: dict[str, str] = metadata.get("label_map") or {}
    extraction = extract_label(completion, options)
    # What a submission would carry: the JSON answer field, else the whole reply.
    strict_answer = extraction.answer_field if extraction.answer_field is not None else completion
    # The reply itself, its reasoning and the target are in the sample already, the label
    # read is the score's answer and how it was read is in the explanation; only what the
    # scorer adds is kept (Inspect copies and summarises every string of it per sample).
    score_metadata: dict[str, Any] = {
        "extraction_method": extraction.method,
        # the rule that made the reading, and whether it is proven (robust-v11): what only a
        # less-proven rule reads is unread, its tentative label kept here
        "extraction_rule": extraction.rule,
        "extraction_trust": extraction.trust,
        "tentative_label": extraction.tentative_label,
        "answer_field": extraction.answer_field,
    }
    if strict_answer != extraction.answer_field:
        score_metadata["strict_answer"] = strict_answer
    # What each official container would have submitted for this reply (a reply the
    # container would stop on submits nothing), and whether that differs from the label
    # read here; the answer is cut short: a container may submit a whole reply.
    readings: dict[str, float] = {}
    for reader in READERS:
        reading = official_reading(completion, options, reader)
        submitted = reading.submitted
        score_metadata[f"official_{reader}_answer"] = (
            submitted if submitted is None or len(submitted) <= 80 else f"{submitted[:77]}..."
        )
        readings[f"official_{reader}_differs"] = float(submitted != extraction.label)
        if target:
            readings[f"official_{reader}_correct"] = float(reading.correct(target))
    if label_map:  # the options were shuffled: the case's own labels
        score_metadata["original_label"] = (
            label_map.get(extraction.label, extraction.label) if extraction.label else None
        )
        score_metadata["original_target"] = label_map.get(target, target) if target else None
    if not metadata.get("has_reference", bool(target)):
        return Score.unscored(
            reason="no reference answer for this case (unlabeled split)",
            answer=extraction.label or "",
            explanation=extraction.detail,
            metadata=score_metadata | readings,
        )
    correct = extraction.label == target
    explanation = (
        f"extracted {extraction.label!r} via {extraction.method} ({extraction.detail}); "
        f"reference {target!r}"
        if extraction.parsed
        else f"no answer extracted ({extraction.method}: {extraction.detail}); "
        f"counted wrong; reference {target!r}"
    )
    # Every number the metrics report is a key of the value, which Inspect's epoch reducers
    # reduce key by key (they keep only the first epoch's metadata).
    value: dict[str, float] = {
        "correct": float(correct),
        "strict_correct": float(official_mcq_correct(strict_answer, target)),
        "parsed": float(extraction.parsed),
        **readings,
    }
    return Score(
        value=cast(Value, value),
        answer=extraction.label or "",
        explanation=explanation,
        metadata=score_metadata,
    )


async def add_extractor_reading(
    score: Score, state: TaskState, target: str, rate: float, settings: JudgeSettings
) -> Score:
    """With the ``extractor`` role bound (``core.extractor``): send an unread reply (or a
    read one in the agreement sample) to the extractor and add its keys to the score."""
    if not isinstance(score.value, dict):
        return score  # unscored (no reference): nothing to measure the extractor by
    options = sample_options(state.metadata, [choice.value for choice in state.choices])
    extraction = extract_label(state.output.completion, options)
    why = why_to_send(extraction, state.sample_id, rate)
    reading = None
    if why is not None:
        question = str(state.metadata.get("question", ""))
        reading = await read_with_extractor(
            question, options, state.output.completion, settings, why
        )
    value = {**score.value, **extractor_values(extraction, reading, target)}
    metadata = dict(score.metadata or {})
    metadata["extractor"] = (
        reading.as_metadata() if reading is not None else {"why_sent": None, "said": None}
    )
    explanation = score.explanation or ""
    if reading is not None:
        explanation += f"; extractor ({reading.why_sent}) said {reading.said()}" + (
            f": {reading.failure}" if reading.failure else ""
        )
    return Score(
        value=cast(Value, value),
        answer=score.answer,
        explanation=explanation,
        metadata=metadata,
    )


@scorer(metrics=mcq_metrics())
def mcq_scorer(extractor_check_rate: float = 0.0) -> Scorer:
    """Exact-match accuracy on the extracted option label, plus the official strict rule.
    With ``--model-role extractor=...``, also ``accuracy_extracted`` (``core.extractor``):
    unread replies, and a share ``extractor_check_rate`` of read ones, go to the extractor."""
    rate = check_rate(extractor_check_rate)
    settings = JudgeSettings()

    async def score(state: TaskState, target: Target) -> Score:
        if state.metadata.get("task_type") != "mcq":
            return Score.unscored(reason="open-ended case: scored by open_ended_scorer")
        choices = [choice.value for choice in state.choices]
        scored = score_mcq_reply(state.output.completion, state.metadata, target.text, choices)
        if extractor_bound():
            scored = await add_extractor_reading(scored, state, target.text, rate, settings)
        return scored

    return score


JUDGE_ROLES = {"gt": "grader", "va": "vision_grader", "rvf": "vision_grader"}


OPEN_COMPONENTS = {"gt": "gt_final", "va": "va_answer", "rvf": "rvf_trace"}
# The keys of the open-ended score's value: the three judges' components and the gated one.
OPEN_COMPONENT_KEYS = (*OPEN_COMPONENTS.values(), "va_final")


OPEN_GROUP_FIELDS = MCQ_GROUP_FIELDS


def open_ended_metrics() -> list[Metric | dict[str, list[Metric]]]:
    """Inspect's shape for a dictionary score: per component a score named for it
    (``gt_final``, ``va_answer``, ``rvf_trace``, ``va_final``) with ``mean``, ``stderr`` and
    the 95% ``image_ci``, both counting images, not cases; beside them,
    among ``open_ended_scorer``'s own metrics, a ``grouped()`` breakdown per field of the
    two leaderboard components (``gt_final by modality:CT``).

    An unscored component is NaN: left out of its metrics and counted in its score's
    ``unscored_samples`` (which also counts a case the scorer does not score at all, an MCQ
    case in the combined task)."""
    fields = list(OPEN_GROUP_FIELDS)
    return [
        {key: component_metrics() for key in OPEN_COMPONENT_KEYS},
        *component_breakdowns({"gt_final": fields, "va_final": fields}),
    ]


async def case_image_uris(state: TaskState, folder: ImageFolder) -> list[str]:
    """The case images as data URIs, which every provider accepts (file paths are not).

    During an eval Inspect has materialised the input's images as data URIs, and those are
    reused. A blind-control run has none in its input, and a log re-scored with ``inspect
    score`` may hold placeholders (``--no-log-images``) or paths: then each of the case's
    ``image_paths`` is resolved again under ``folder`` (the one data folder in force, never
    one the sample names), with the loader's confinement and decoding checks, so an edited
    log cannot send another file to a judge (and degraded again as the model saw it, unless
    the run chose the clean image). Raises ImagePathError when an image is refused.
    """
    images = input_images(state)
    clean = wants_clean_judge_image(state.metadata)  # -T shift_judge_image=clean
    if images and all(image.startswith("data:") for image in images) and not clean:
        return images
    if not state.metadata.get("image_paths"):
        return []
    files = judge_image_files(folder.files(state), state.metadata, state.sample_id)
    return [await materialize_media(str(path)) for path in files]


def _component_value(outcome: JudgeOutcome | None) -> float:
    return float(outcome.score) if outcome is not None and outcome.score is not None else math.nan


def _explain(judges: dict[str, dict[str, Any]], va_final: float) -> str:
    lines = []
    for name, record in judges.items():
        if record["score"] is None:
            lines.append(f"{name}: UNSCORED ({record['failure']})")
            continue
        if record.get("by_rule"):
            source = "by rule"
        elif "panel" not in record:
            source = f"judge {record['role']}"
        else:
            scores = ", ".join(
                f"{m['role']}={m['score'] if m['score'] is not None else 'failed'}"
                for m in record["panel"]
            )
            source = f"panel {record['panel_reduce']} of {scores}"
            lines.append(f"{name} = {record['score']:g} ({source})")
            lines.extend(
                f"  {m['role']}: {m['rationale'] or m['failure'] or '(no rationale)'}"
                for m in record["panel"]
            )
            continue
        lines.append(f"{name} = {record['score']:g} ({source}): {record['rationale']}")
    lines.append(
        f"va_final = {'UNSCORED' if math.isnan(va_final) else f'{va_final:g}'} "
        "(official gate: rvf_trace <= 1 caps va_answer at 1, rvf_trace == 2 caps it at 3)"
    )
    return "\n".join(lines)


async def score_open_reply(
    state: TaskState,
    templates: JudgeTemplates,
    settings: JudgeSettings,
    allow_self_judging: bool,
    panel_reduce: str = DEFAULT_PANEL_REDUCE,
    lineage: LineageWatch | None = None,
    folder: ImageFolder | None = None,
) -> Score:
    """Judge one open-ended reply on the three components (each by its role's panel) and
    apply the official gate. Case images not in the input are read only from ``folder``
    (none is read without one)."""
    metadata = state.metadata
    reply = parse_open_reply(state.output.completion)
    reference = metadata.get("reference_answer")
    question, context = str(metadata.get("question", "")), metadata.get("context")
    image_problem: str | None = None
    try:
        images = await case_image_uris(state, folder or ImageFolder(None, "none given"))
    except ImagePathError as error:
        images, image_problem = [], f"case image refused: {error}"

    outcomes: dict[JudgeKind, JudgeOutcome] = {}
    calls: dict[tuple[JudgeKind, str], Any] = {}
    models: dict[str, list[str]] = {}
    judge_names: dict[tuple[JudgeKind, str], str] = {}
    lineage_notes: list[str] = []  # judges of the tested model's lineage (core.lineage)
    if not reply.answer:
        outcomes["gt"] = scored_by_rule("gt", "empty final answer: GT_final = 0 by rule")
        outcomes["va"] = scored_by_rule("va", "empty final answer: VA_answer = 0 by rule")
    if not reply.reasoning_trace:
        outcomes["rvf"] = scored_by_rule("rvf", "empty reasoning trace: RVF_trace = 0 by rule")
    if image_problem is not None:
        for kind in ("va", "rvf"):
            outcomes.setdefault(
                kind, JudgeOutcome(kind=kind, score=None, rationale="", failure=image_problem)
            )
    if "gt" not in outcomes and not (reference and str(reference).strip()):
        outcomes["gt"] = JudgeOutcome(
            kind="gt", score=None, rationale="", failure="no reference answer for this case"
        )
    for kind in JUDGE_KINDS:
        if kind in outcomes:
            continue
        candidate = reply.reasoning_trace if kind == "rvf" else reply.answer
        messages = judge_messages(kind, templates, question, context, candidate, reference, images)
        for role, model in panel_judges(JUDGE_ROLES[kind], allow_self_judging, lineage):
            models.setdefault(OPEN_COMPONENTS[kind], []).append(str(model))
            note = lineage.check(role, model) if lineage is not None else None
            if note is not None and note not in lineage_notes:
                lineage_notes.append(note)
            judge_names[kind, role] = str(model)
            calls[kind, role] = ask_judge(
                kind, model, messages, templates, settings, candidate=candidate, role=role
            )
    # Every judge call of a case is independent: run them concurrently (ask_judge never
    # raises a judge's failure; under -T judge_failure=error it is raised here, after all).
    with rescored_images_unlogged(state, images):
        judged = dict(zip(calls, await collect(*calls.values()), strict=True))
    raise_judge_failures(
        settings, [(role, judge_names[kind, role], out) for (kind, role), out in judged.items()]
    )
    panels: dict[JudgeKind, list[tuple[str, JudgeOutcome]]] = {
        kind: [("rule" if outcomes[kind].by_rule else JUDGE_ROLES[kind], outcomes[kind])]
        if kind in outcomes
        else [(role, outcome) for (k, role), outcome in judged.items() if k == kind]
        for kind in JUDGE_KINDS
    }
    gt, va, rvf = (panel_component(kind, panels[kind], panel_reduce) for kind in JUDGE_KINDS)
    va_final = math.nan if math.isnan(va) or math.isnan(rvf) else gate_visual_accuracy(va, rvf)
    value: dict[str, float] = {
        "gt_final": gt,
        "va_answer": va,
        "rvf_trace": rvf,
        "va_final": va_final,
    }
    judges = {
        OPEN_COMPONENTS[kind]: panel_metadata(panels[kind], component, panel_reduce)
        for kind, component in zip(JUDGE_KINDS, (gt, va, rvf), strict=True)
    }
    # What judging this case cost, per role (every component and attempt it judged).
    cost: dict[str, dict[str, float]] = {}
    for (_, role), outcome in judged.items():
        spent = cost.setdefault(role, {"input_tokens": 0, "output_tokens": 0, "seconds": 0.0})
        spent["input_tokens"] += outcome.input_tokens
        spent["output_tokens"] += outcome.output_tokens
        spent["seconds"] = round(spent["seconds"] + outcome.seconds, 3)
    return Score(
        value=cast(Value, value),
        answer=reply.answer,
        explanation=_explain(judges, va_final),
        metadata={
            "answer": reply.answer,
            "reasoning_trace": reply.reasoning_trace,
            "parse_method": reply.method,
            "judges": judges,
            "judge_models": models,
            **({"judge_lineage": lineage_notes} if lineage_notes else {}),
            "judge_cost": cost,
            # The settings and each template are recorded once, in the task's metadata and
            # the scorer's parameters; this fingerprint ties the case to that template set
            # (it differs when a re-score used other templates).
            "judge_templates_sha256": templates.sha256,
        },
    )


@scorer(metrics=open_ended_metrics())
def open_ended_scorer(
    judge_prompts: str | None = None,
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
    """GT_final (text judge, role ``grader``), VA_answer and RVF_trace (vision judge, role
    ``vision_grader``), 0-4 each, and VA_final by the official gate. Each role may be a
    panel (``grader_2``, ``grader_3``, ...), reduced by ``panel_reduce``. MCQ cases are left
    unscored here (they belong to ``mcq_scorer``). Case images not held in the log are read
    from ``data_dir`` (``-S data_dir=`` when re-scoring), else from the folder this process
    loaded under ``data_key`` (the digest of the cases file the task gives; a log names no
    folder): see ``medreason.image_folder``."""
    panel_reduce = check_panel_reduce(panel_reduce)
    templates = JudgeTemplates.load(judge_prompts)
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
            return Score.unscored(reason="MCQ case: scored by mcq_scorer, not by the judges")
        return await score_open_reply(
            state, templates, settings, self_judging, panel_reduce, lineage=lineage, folder=folder
        )

    return score


def challenge_scorer(judges: JudgeArguments, data_key: str) -> Scorer:
    """The open-ended track scored the challenge's way, with the task's judge arguments."""
    return open_ended_scorer(
        judge_prompts=judges.prompts,
        panel_reduce=judges.panel_reduce,
        data_key=data_key,
        **judges.scorer_arguments(),
    )


# The open-ended scoring a task uses lives here, not in the task file: Inspect loads a task
# file by path (``inspect eval <path>/medreason.py@mcq``, as register entries run it) as a
# module it does not register, where a dataclass with string annotations cannot be built.
# How a task scores the open-ended track: from its judge arguments and the key of the run's
# data folder (medreason.image_folder.register_data_folder).
OpenScorer = Callable[[JudgeArguments, str], Scorer]


@dataclass(frozen=True)
class OpenScoring:
    """How the open-ended track is scored: its name for the log, the scorer, and the roles
    (component -> role) and built-in templates of a scoring other than the challenge's."""

    name: str = "challenge"
    scorer: OpenScorer = challenge_scorer
    roles: dict[str, str] | None = None
    templates: JudgeTemplates | None = None
