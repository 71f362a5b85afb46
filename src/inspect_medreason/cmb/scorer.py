r"""CMB (Chinese medical benchmark), text only: CMB-Exam and CMB-Clin.

CMB-Exam: the upstream Chinese prompts (answer-only or chain-of-thought), optional
few-shot examples drawn from the validation split with a fixed seed, single- and
multi-answer questions. Two extraction modes are computed on every reply:

- ``cmb``: the upstream rule, first match of
  ``(答案|正确选项)(?:是|：|为|应该是|应该为)(.*?)(。|\.|$)`` keeping letters A-G, else every
  A-G letter anywhere in the reply (so "CT" or "DNA" count); single-answer questions keep
  the first letter;
- ``safe`` (default): the MedReason extraction for single answers; for multi answers the
  last stated answer's run of option letters (a run containing any other letter, as in
  "DNA", is not an answer). No stated answer is no answer.

The chosen mode scores; the other is reported beside it with the rate at which they
disagree. Answers compare as sets unless ``order_sensitive=true`` (upstream: string
equality). Accuracy per exam_class (subcategory) and per exam_type as macro means over
subcategories, as upstream.

CMB-Clin: the case description and its questions as one conversation, the model's own
previous answers kept in the history; every answer judged by the ``grader`` role on
fluency, relevance, completeness and medical proficiency (1-5); failures unscored.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from typing import cast

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    accuracy,
    mean,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState
from pydantic import BaseModel, Field

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.extraction import extract_label, json_objects, readable_text
from inspect_medreason.core.intervals import image_stderr
from inspect_medreason.core.judges import (
    JUDGE_DEFAULTS,
    JudgeSettings,
    LineageWatch,
    Verdict,
    fence_id,
    grader_templates,
    integer_score,
    judge_model,
    judge_request,
    run_judge,
    short_repr,
)
from inspect_medreason.core.metrics import component, component_mean
from inspect_medreason.core.params import coerce_bool

MULTI_ANSWER = "多项选择题"


CMB_ANSWER_PATTERN = re.compile(
    r"(答案|正确选项)(?:是|：|为|应该是|应该为)(.*?)(。|\.|$)", re.DOTALL
)


_LETTER_RUN = re.compile(r"(?<![A-Za-z])([A-Za-z]+)(?![A-Za-z])")


_STATED = re.compile(
    r"(?:答案|正确选项|\banswer\b)\s*(?:应该是|应该为|应为|是|为|选|is)?\s*[:：]?\s*"
    r"|(?:我|应|故|所以|因此|则)?选(?:择)?\s*[:：]?\s*(?=[(\[]?[A-Z])",
    re.IGNORECASE,
)


_LABEL_RUN = re.compile(r"[(\[]?([A-Z]+)[)\]]?(?![A-Za-z])")


_LABEL_SEPARATOR = re.compile(
    r"(?:\s*(?:[,，、/&+]|和|及|与|以及|\band\b)\s*)+|\s*(?=[(\[]?[A-Z])", re.IGNORECASE
)


CRITERIA = ("fluency", "relevance", "completeness", "proficiency")


CLIN_FORMAT = '{"fluency": <1-5>, "relevance": <1-5>, "completeness": <1-5>, "proficiency": <1-5>}'


EXTRACTION_MODES = ("safe", "cmb")


def extract_cmb_upstream(text: str, multi: bool) -> str:
    """The upstream extractor, kept as it is for comparability."""
    match = CMB_ANSWER_PATTERN.search(text)
    source = match.group(2) if match else text
    letters = "".join(re.findall(r"[A-G]", source))
    return letters if multi else letters[:1]


def _leading_labels(segment: str, labels: set[str]) -> str:
    """The option letters a stated answer begins with: "ACE", "A、C、E", "A, C and E".

    Reading stops at the first thing that is not a label or a separator, so the
    explanation after the answer ("CE，因为B项错误": CE) and words made of letters ("DNA")
    add nothing.
    """
    letters: list[str] = []
    # Matched in place from a position: slicing off what was read copied the rest of the
    # reply once per label (quadratic: "B B B ..." of 1.6 million characters took 23 s).
    position = len(segment) - len(segment.lstrip(" \t{\"'*"))
    while True:
        run = _LABEL_RUN.match(segment, position)
        if run is None or not set(run.group(1)) <= labels:
            break
        letters.append(run.group(1))
        separator = _LABEL_SEPARATOR.match(segment, run.end())
        if separator is None:
            break
        position = separator.end()
    return "".join(dict.fromkeys("".join(letters)))


def extract_cmb_safe(text: str, options: list[tuple[str, str]], multi: bool) -> str:
    """Letters of the last stated answer; '' when that statement names none.

    Single answers use the MedReason extraction. For multi answers the last answer
    statement is authoritative (an earlier one is never read instead); a reply that is
    nothing but option letters is its own answer.
    """
    labels = {label for label, _ in options}
    if not multi:
        return extract_label(text, options).label or ""
    normalised = readable_text(text)
    statements = list(_STATED.finditer(normalised))
    if statements:
        return _leading_labels(normalised[statements[-1].end() :], labels)
    whole = normalised.strip().strip("*`\"'")
    letters = _leading_labels(whole, labels)
    return letters if letters and not _LETTER_RUN.sub("", whole).strip(" ,、/&+和及与.。") else ""


def exam_correct(predicted: str, answer: str, order_sensitive: bool) -> bool:
    if order_sensitive:
        return predicted == answer
    return bool(predicted) and set(predicted) == set(answer)


READ_CORRECT = component("correct")


def _subcategory_means(scores: list[SampleScore]) -> dict[tuple[str, str], float]:
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in scores:
        value = s.score.value
        if isinstance(value, float) and math.isnan(value):
            continue
        meta = s.sample_metadata or {}
        groups[(str(meta.get("exam_type")), str(meta.get("exam_class")))].append(
            READ_CORRECT(value)
        )
    return {key: sum(v) / len(v) for key, v in groups.items()}


@metric(name="cmb_macro")
def cmb_macro() -> Metric:
    """Upstream averaging: accuracy per subcategory (exam_class), per category (exam_type)
    as the mean of its subcategories, and overall as the mean of all subcategories."""

    def compute(scores: list[SampleScore]) -> Value:
        per_class = _subcategory_means(scores)
        result: dict[str, float] = {}
        by_type: dict[str, list[float]] = defaultdict(list)
        for (exam_type, exam_class), value in sorted(per_class.items()):
            result[f"exam_class:{exam_class}"] = value
            by_type[exam_type].append(value)
        for exam_type, values in sorted(by_type.items()):
            result[f"exam_type:{exam_type}"] = sum(values) / len(values)
        result["macro_all"] = (
            sum(per_class.values()) / len(per_class) if per_class else float("nan")
        )
        return cast(Value, result)

    return compute


@metric(name="accuracy_other_mode")
def accuracy_other_mode() -> Metric:
    """Accuracy had the other extraction mode been used."""

    def compute(scores: list[SampleScore]) -> Value:
        return component_mean(scores, "other_mode_correct")

    return compute


@metric(name="mode_disagreement")
def mode_disagreement() -> Metric:
    """Share of replies where the two extraction modes read different answers."""

    def compute(scores: list[SampleScore]) -> Value:
        return component_mean(scores, "modes_disagree")

    return compute


@scorer(
    metrics=[
        accuracy(to_float=READ_CORRECT),
        image_stderr(to_float=READ_CORRECT),
        accuracy_other_mode(),
        mode_disagreement(),
        cmb_macro(),
    ]
)
def cmb_exam_scorer(extraction: str = "safe", order_sensitive: bool = False) -> Scorer:
    """Exact set (or upstream string) match of the extracted letters; both modes recorded."""
    if extraction not in EXTRACTION_MODES:
        raise TaskArgumentError(f"-T extraction={extraction!r}: choose one of {EXTRACTION_MODES}")
    ordered = coerce_bool(order_sensitive, "order_sensitive")

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        multi = meta["question_type"] == MULTI_ANSWER
        options = [(label, text) for label, text in meta["options"]]
        reply = state.output.completion
        predictions = {
            "safe": extract_cmb_safe(reply, options, multi),
            "cmb": extract_cmb_upstream(reply, multi),
        }
        correct = {mode: exam_correct(p, target.text, ordered) for mode, p in predictions.items()}
        other = "cmb" if extraction == "safe" else "safe"
        # Each number a metric reports is a key of the value: Inspect's epoch reducers
        # reduce the value key by key and keep only the first epoch's metadata.
        value = {
            "correct": float(correct[extraction]),
            "other_mode_correct": float(correct[other]),
            "modes_disagree": float(predictions["safe"] != predictions["cmb"]),
        }
        return Score(
            value=cast(Value, value),
            answer=predictions[extraction],
            explanation=f"{extraction}: {predictions[extraction]!r}, {other}: {predictions[other]!r}, "
            f"reference {target.text!r}",
            metadata={
                "predictions": predictions,
                "extraction": extraction,
                "order_sensitive": ordered,
            },
        )

    return score


class ClinVerdict(BaseModel):
    """Four 1-5 ratings of one answer."""

    fluency: int = Field(ge=1, le=5)
    relevance: int = Field(ge=1, le=5)
    completeness: int = Field(ge=1, le=5)
    proficiency: int = Field(ge=1, le=5)


def parse_clin(text: str) -> tuple[Verdict | None, str]:
    # Upstream's example uses typographic quotes; accept them as JSON quotes.
    normalised = text.replace("‘", '"').replace("’", '"').replace("“", '"').replace("”", '"')
    candidates = [c for c in json_objects(normalised) if all(k in c for k in CRITERIA)]
    if not candidates:
        return None, f"no JSON object with all of {list(CRITERIA)}"
    parts: dict[str, int] = {}
    for key in CRITERIA:
        value = integer_score(candidates[-1][key])
        if value is None or not 1 <= value <= 5:
            return None, f"{key} {short_repr(candidates[-1][key])} is not an integer from 1 to 5"
        parts[key] = value
    return Verdict(sum(parts.values()), "", parts), ""


def clin_metrics() -> dict[str, list[Metric]]:
    return {key: [mean(), image_stderr()] for key in CRITERIA} | {"turns_unscored": [mean()]}


@scorer(metrics=clin_metrics())
def cmb_clin_scorer(
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
) -> Scorer:
    """Each answer rated by the ``grader`` role; the case's score is the mean over turns."""
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
    templates = grader_templates("grader_clin", family="cmb")

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        answers: list[str] = meta.get("answers") or []
        turns: list[dict[str, object]] = []
        scored: list[dict[str, int]] = []
        history: list[str] = []
        for question, solution, answer in zip(
            meta["questions"], meta["solutions"], answers, strict=False
        ):
            text = templates.templates["grader_clin_user"].render(
                description=meta["description"],
                history="\n".join(history) or "(none)",
                question=question,
                solution=solution,
                candidate_answer=answer,
                fence_id=fence_id(answer),
            )
            messages = judge_request(templates.templates["grader_clin_system"].text, text, [])
            outcome = await run_judge(
                "clin",
                judge_model("grader", self_judging, lineage),
                messages,
                templates,
                settings,
                parse=parse_clin,
                expected=CLIN_FORMAT,
                schema=ClinVerdict,
                candidate=answer,
            )
            turns.append(outcome.as_metadata())
            if outcome.parts:
                scored.append(outcome.parts)
            history += [f"问：{question}", f"答：{answer}"]
        value = {
            key: (sum(p[key] for p in scored) / len(scored) if scored else math.nan)
            for key in CRITERIA
        }
        value["turns_unscored"] = float(len(turns) - len(scored))
        return Score(
            value=cast(Value, value),
            metadata={"turns": turns},
            explanation=json.dumps({k: v for k, v in value.items()}, ensure_ascii=False),
        )

    return score
