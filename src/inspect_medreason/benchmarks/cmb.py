"""CMB (Chinese medical benchmark), text only: CMB-Exam and CMB-Clin.

CMB-Exam: the upstream Chinese prompts (answer-only or chain-of-thought), optional
few-shot examples drawn from the validation split with a fixed seed, single- and
multi-answer questions. Two extraction modes are computed on every reply:

- ``cmb``: the upstream rule, first match of
  ``(答案|正确选项)(?:是|：|为|应该是|应该为)(.*?)(。|\\.|$)`` keeping letters A-G, else every
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

import ast
import json
import math
import random
import re
import unicodedata
from collections import defaultdict
from typing import Any, cast

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
)
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
    stderr,
)
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from pydantic import BaseModel, Field

from inspect_medreason.benchmarks.common import grader_templates
from inspect_medreason.benchmarks.hub import HubSource, load_rows
from inspect_medreason.errors import TaskArgumentError
from inspect_medreason.extraction import extract_label, json_objects
from inspect_medreason.judges import (
    JudgeSettings,
    Verdict,
    fence_id,
    integer_score,
    run_judge,
    short_repr,
)
from inspect_medreason.loaders import DatasetError, Problem
from inspect_medreason.params import coerce_bool, coerce_int
from inspect_medreason.prompts import load_template
from inspect_medreason.scorers import judge_model, metadata_mean, require_judge_roles
from inspect_medreason.tasks import DEFAULT_GENERATE_CONFIG

CMB_TASK_VERSION = "1.1.0"
CMB_EXAM_HUB = HubSource(
    "FreedomIntelligence/CMB",
    name="exam",
    split="test",
    layout="CMB-Exam test as JSON/JSONL rows with exam_type, exam_class, exam_subject, question, answer, question_type, option {A..E}",
)
CMB_VAL_HUB = HubSource(
    "FreedomIntelligence/CMB",
    name="exam",
    split="val",
    layout="CMB-Exam val as JSON/JSONL rows (as test, plus explanation); pass it as -T fewshot_data=PATH",
)
CMB_CLIN_HUB = HubSource(
    "FreedomIntelligence/CMB",
    name="clin",
    split="test",
    layout="CMB-Clin as JSON rows with id, title, description, QA_pairs [{question, solution}]",
)
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
_LABEL_SEPARATOR = re.compile(
    r"(?:\s*(?:[,，、/&+]|和|及|与|以及|\band\b)\s*)+|\s*(?=[(\[]?[A-Z])", re.IGNORECASE
)
CRITERIA = ("fluency", "relevance", "completeness", "proficiency")
CLIN_FORMAT = '{"fluency": <1-5>, "relevance": <1-5>, "completeness": <1-5>, "proficiency": <1-5>}'
EXTRACTION_MODES = ("safe", "cmb")


# --- CMB-Exam ---------------------------------------------------------------------------


def exam_options(row: dict[str, Any]) -> list[tuple[str, str]]:
    """``option`` as a dict {"A": text}, the HF list of {key, value}, or a dict's text."""
    raw = row.get("option") or {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raw = ast.literal_eval(raw) if raw.strip().startswith("{") else {}
    if isinstance(raw, list):
        raw = {item.get("key"): item.get("value") for item in raw if isinstance(item, dict)}
    return [(str(k), str(v)) for k, v in sorted(raw.items()) if v not in (None, "")]


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
    rest = segment.lstrip(" \t{\"'*")
    while True:
        run = re.match(r"[(\[]?([A-Z]+)[)\]]?(?![A-Za-z])", rest)
        if run is None or not set(run.group(1)) <= labels:
            break
        letters.append(run.group(1))
        rest = rest[run.end() :]
        separator = _LABEL_SEPARATOR.match(rest)
        if separator is None:
            break
        rest = rest[separator.end() :]
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
    normalised = unicodedata.normalize("NFKC", text)
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


def render_exam_question(template: Any, row: dict[str, Any]) -> str:
    options = "\n".join(f"{label}. {text}" for label, text in exam_options(row))
    return cast(str, template.render(
        exam_type=row.get("exam_type", ""), exam_class=row.get("exam_class", ""),
        question_type=row.get("question_type", ""), question=row.get("question", ""), options=options,
    )).strip()  # fmt: skip


def fewshot_messages(
    pool: list[dict[str, Any]], row: dict[str, Any], shots: int, seed: int, template: Any, cot: bool
) -> list[ChatMessage]:
    """``shots`` worked examples from the validation pool, same exam_class when possible,
    drawn with a seed fixed per question so runs and subsets agree."""
    same = [r for r in pool if r.get("exam_class") == row.get("exam_class")]
    candidates = same if len(same) >= shots else pool
    rng = random.Random(f"{seed}:{row.get('exam_class')}:{row.get('question')}")
    examples = rng.sample(candidates, min(shots, len(candidates)))
    messages: list[ChatMessage] = []
    for example in examples:
        answer = str(example.get("answer", ""))
        reply = (
            f"{str(example.get('explanation') or '').strip()}所以答案是{answer}" if cot else answer
        )
        messages.append(ChatMessageUser(content=render_exam_question(template, example)))
        messages.append(ChatMessageAssistant(content=reply))
    return messages


def _subcategory_means(scores: list[SampleScore]) -> dict[tuple[str, str], float]:
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in scores:
        value = s.score.value
        if isinstance(value, float) and math.isnan(value):
            continue
        meta = s.sample_metadata or {}
        groups[(str(meta.get("exam_type")), str(meta.get("exam_class")))].append(s.score.as_float())
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
        return metadata_mean(scores, "other_mode_correct")

    return compute


@metric(name="mode_disagreement")
def mode_disagreement() -> Metric:
    """Share of replies where the two extraction modes read different answers."""

    def compute(scores: list[SampleScore]) -> Value:
        return metadata_mean(scores, "modes_disagree")

    return compute


@scorer(metrics=[accuracy(), stderr(), accuracy_other_mode(), mode_disagreement(), cmb_macro()])
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
        return Score(
            value=float(correct[extraction]),
            answer=predictions[extraction],
            explanation=f"{extraction}: {predictions[extraction]!r}, {other}: {predictions[other]!r}, "
            f"reference {target.text!r}",
            metadata={
                "predictions": predictions,
                "other_mode_correct": float(correct[other]),
                "modes_disagree": float(predictions["safe"] != predictions["cmb"]),
                "extraction": extraction,
                "order_sensitive": ordered,
            },
        )

    return score


@task(version=CMB_TASK_VERSION)
def cmb_exam(
    data: str | None = None,
    fewshot: int = 0,
    fewshot_data: str | None = None,
    prompt: str = "answer_only",
    extraction: str = "safe",
    order_sensitive: bool = False,
    seed: int = 42,
    revision: str | None = None,
) -> Task:
    """CMB-Exam test split (11,200 questions). ``prompt=answer_only|cot``; ``fewshot=N``
    examples from the validation split (``fewshot_data`` for a local copy)."""
    if prompt not in {"answer_only", "cot"}:
        raise TaskArgumentError(f"-T prompt={prompt!r}: choose answer_only or cot")
    shots, fewshot_seed = coerce_int(fewshot, "fewshot"), coerce_int(seed, "seed")
    loaded = load_rows(data, CMB_EXAM_HUB, revision)
    source = str(data or CMB_EXAM_HUB.path)
    pool = load_rows(fewshot_data, CMB_VAL_HUB, revision).rows if shots else []
    template = load_template(f"cmb_{prompt}_user")
    problems: list[Problem] = []
    samples = []
    for index, row in enumerate(loaded.rows):
        case_id = str(row.get("id", f"cmb_exam_{index:05d}"))
        options = exam_options(row)
        answer = str(row.get("answer", "")).strip()
        if not options or not answer or not set(answer) <= {label for label, _ in options}:
            problems.append(
                Problem(source, case_id, "answer", f"{answer!r} is not made of option labels")
            )
            continue
        messages = [*fewshot_messages(pool, row, shots, fewshot_seed, template, prompt == "cot"),
                    ChatMessageUser(content=render_exam_question(template, row))]  # fmt: skip
        samples.append(Sample(id=case_id, input=messages, target=answer, metadata={
            "exam_type": str(row.get("exam_type") or "unknown"), "exam_class": str(row.get("exam_class") or "unknown"),
            "exam_subject": str(row.get("exam_subject") or "unknown"),
            "question_type": str(row.get("question_type") or ""), "options": [list(o) for o in options],
        }))  # fmt: skip
    if problems:
        raise DatasetError(problems)
    return Task(
        dataset=MemoryDataset(samples, name="cmb_exam", location=source),
        solver=generate(),
        scorer=cmb_exam_scorer(extraction=extraction, order_sensitive=order_sensitive),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": loaded.origin,
            "prompt": prompt,
            "fewshot": shots,
            "fewshot_seed": fewshot_seed if shots else None,
            "extraction": extraction,
            "order_sensitive": order_sensitive,
            "prompts": {template.name: template.log_record()},
            "scoring": __doc__,
        },
    )


# --- CMB-Clin ---------------------------------------------------------------------------


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


@solver
def clinical_conversation() -> Solver:
    """Ask the case's questions in turn, keeping the model's own answers in the history."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        questions: list[str] = state.metadata["questions"]
        answers: list[str] = []
        for turn, question in enumerate(questions):
            if turn > 0:
                state.messages.append(ChatMessageUser(content=question))
            state = await generate(state)
            answers.append(state.output.completion)
        state.metadata["answers"] = answers
        return state

    return solve


def clin_metrics() -> dict[str, list[Metric]]:
    return {key: [mean(), stderr()] for key in CRITERIA} | {"turns_unscored": [mean()]}


@scorer(metrics=clin_metrics())
def cmb_clin_scorer(allow_self_judging: bool = False, **judge_args: Any) -> Scorer:
    """Each answer rated by the ``grader`` role; the case's score is the mean over turns."""
    settings = JudgeSettings.from_judge_args(judge_args)
    self_judging = coerce_bool(allow_self_judging, "allow_self_judging")
    templates = grader_templates("grader_clin")

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
                description=meta["description"], history="\n".join(history) or "(none)",
                question=question, solution=solution, candidate_answer=answer, fence_id=fence_id(answer),
            )  # fmt: skip
            messages: list[ChatMessage] = [
                ChatMessageSystem(content=templates.templates["grader_clin_system"].text.strip()),
                ChatMessageUser(content=text),
            ]
            outcome = await run_judge("clin", judge_model("grader", self_judging), messages, templates,
                                      settings, parse=parse_clin, expected=CLIN_FORMAT, schema=ClinVerdict,
                                      candidate=answer)  # fmt: skip
            turns.append(outcome.as_metadata())
            if outcome.parts:
                scored.append(outcome.parts)
            history += [f"问：{question}", f"答：{answer}"]
        value = {
            key: (sum(p[key] for p in scored) / len(scored) if scored else math.nan)
            for key in CRITERIA
        }
        value["turns_unscored"] = float(len(turns) - len(scored))
        return Score(value=cast(Value, value), metadata={"turns": turns},
                     explanation=json.dumps({k: v for k, v in value.items()}, ensure_ascii=False))  # fmt: skip

    return score


@task(version=CMB_TASK_VERSION)
def cmb_clin(
    data: str | None = None,
    revision: str | None = None,
    allow_self_judging: bool = False,
    judge_temperature: float = 0.0,
    judge_seed: int = 42,
    judge_max_tokens: int = 256,
    judge_retries: int = 2,
    judge_structured_output: bool = True,
    judge_cache: bool = True,
    judge_timeout: float = 120.0,
) -> Task:
    """CMB-Clin (74 cases): a multi-turn consultation per case, judged per answer."""
    loaded = load_rows(data, CMB_CLIN_HUB, revision)
    source = str(data or CMB_CLIN_HUB.path)
    template = load_template("cmb_clin_user")
    problems: list[Problem] = []
    samples = []
    for index, row in enumerate(loaded.rows):
        case_id = str(row.get("id", index))
        pairs = row.get("QA_pairs") or []
        if not pairs or not str(row.get("description", "")).strip():
            problems.append(
                Problem(source, case_id, "QA_pairs", "a case needs a description and questions")
            )
            continue
        questions = [str(p["question"]) for p in pairs]
        first = template.render(
            description=str(row["description"]).strip(), question=questions[0]
        ).strip()
        samples.append(Sample(id=f"cmb_clin_{case_id}", input=[ChatMessageUser(content=first)], metadata={
            "title": str(row.get("title", "")), "description": str(row["description"]),
            "questions": questions, "solutions": [str(p.get("solution", "")) for p in pairs],
        }))  # fmt: skip
    if problems:
        raise DatasetError(problems)
    judge_args = {k: v for k, v in locals().items() if k.startswith(("judge_", "allow_"))}
    require_judge_roles(["grader"], coerce_bool(allow_self_judging, "allow_self_judging"))
    return Task(
        dataset=MemoryDataset(samples, name="cmb_clin", location=source),
        solver=clinical_conversation(),
        scorer=cmb_clin_scorer(**judge_args),
        config=DEFAULT_GENERATE_CONFIG,
        version=CMB_TASK_VERSION,
        metadata={
            "task_version": CMB_TASK_VERSION,
            "data": loaded.origin,
            "history": "the model's own previous answers",
            "prompts": {template.name: template.log_record()},
        },
    )
