"""GEMeX: groundable, explainable chest X-ray VQA in four question types.

- closed (``"Yes."``/``"No."``), single-choice (one label) and multi-choice (a set of labels):
  A-score accuracy; multi-choice by set equality, with Jaccard and per-label precision and
  recall as partial credit; a closed answer is the final yes or no it commits to
  (``short_answers.read_committed_yes_no``: "No. Wait, actually yes." is yes, "Yes. No." no
  answer);
- open-ended: the ``grader`` role rates answer + reason against the reference on 1-10, and
  the reference against itself; the AR-score is their ratio (GEMeX's relative score);
- every type: the V-score, mean IoU after Hungarian matching of predicted to reference
  boxes (unmatched boxes count 0), and BLEU and ROUGE-L of answer + reason.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, cast

import numpy as np
from inspect_ai.scorer import Metric, Score, Scorer, Target, Value, mean, scorer
from inspect_ai.solver import TaskState
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from inspect_medreason.core.extraction import extract_label, json_objects
from inspect_medreason.core.intervals import image_stderr
from inspect_medreason.core.judges import (
    JUDGE_DEFAULTS,
    GraderKind,
    JudgeOutcome,
    JudgeSettings,
    LineageWatch,
    Verdict,
    grade_answer,
    integer_score,
    rationale_text,
    short_repr,
)
from inspect_medreason.core.metrics import breakdown
from inspect_medreason.core.params import coerce_bool
from inspect_medreason.core.short_answers import (
    ShortAnswer,
    read_committed_yes_no,
    read_short_answer,
    read_yes_no,
)
from inspect_medreason.gemex.dataset import Box, answer_as_text, parse_boxes, parse_label_set

SCORE_KEYS = (
    "accuracy",
    "jaccard",
    "precision",
    "recall",
    "v_score",
    "ar_score",
    "bleu",
    "rouge_l",
)


AR_FORMAT = '{"score": <integer 1-10>, "rationale": "<one sentence>"}'


_TAGGED = re.compile(
    r"<answer>(?P<answer>.*?)(?:<reason>(?P<reason>.*?))?(?:<location>(?P<location>.*))?$",
    re.DOTALL,
)


class ArVerdict(BaseModel):
    """A 1-10 rating of an answer and explanation against the reference."""

    score: int = Field(ge=1, le=10)
    rationale: str


def iou(a: Box, b: Box) -> float:
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    area = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1]) + max(0.0, b[2] - b[0]) * max(
        0.0, b[3] - b[1]
    )
    return inter / (area - inter) if area - inter > 0 else 0.0


def v_score(predicted: list[Box], reference: list[Box]) -> float:
    """Mean IoU over max(#pred, #ref) after a maximum-IoU one-to-one matching."""
    if not reference and not predicted:
        return 1.0
    if not reference or not predicted:
        return 0.0
    from scipy.optimize import linear_sum_assignment  # imported here: keeps task discovery fast

    matrix: NDArray[Any] = np.array([[iou(p, r) for r in reference] for p in predicted])
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return float(matrix[rows, cols].sum()) / max(len(predicted), len(reference))


def parse_gemex_reply(text: str) -> dict[str, Any]:
    """answer, reason and boxes from the JSON reply, or the training ``<answer>`` tag form."""
    for candidate in reversed(json_objects(text)):
        if "answer" in candidate:
            location = candidate.get("location", candidate.get("locations", []))
            return {
                "answer": candidate["answer"],
                "reason": str(candidate.get("reason", "") or ""),
                "boxes": parse_boxes(json.dumps(location)),
                "method": "json",
            }
    tagged = _TAGGED.search(text)
    if tagged:
        return {
            "answer": tagged.group("answer").strip(),
            "reason": (tagged.group("reason") or "").strip(),
            "boxes": parse_boxes(tagged.group("location") or ""),
            "method": "tagged",
        }
    return {
        "answer": text.strip(),
        "reason": "",
        "boxes": parse_boxes(text),
        "method": "plain_text",
    }


@functools.cache
def _rouge_l_scorer() -> Any:
    from rouge_score import rouge_scorer  # imported here: keeps task discovery fast

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def text_overlap(candidate: str, reference: str) -> tuple[float, float]:
    """Sentence BLEU (sacrebleu, 0-1) and ROUGE-L F1 (rouge-score)."""
    import sacrebleu

    if not candidate.strip():
        return 0.0, 0.0
    bleu = sacrebleu.sentence_bleu(candidate, [reference]).score / 100.0
    rouge = _rouge_l_scorer().score(reference, candidate)
    return bleu, float(rouge["rougeL"].fmeasure)


def parse_ar(text: str) -> tuple[Verdict | None, str]:
    candidates = [c for c in json_objects(text) if "score" in c]
    if not candidates:
        return None, "no JSON object with a 'score' field"
    score = integer_score(candidates[-1]["score"])
    if score is None or not 1 <= score <= 10:
        return None, f"score {short_repr(candidates[-1]['score'])} is not an integer from 1 to 10"
    return Verdict(score, rationale_text(candidates[-1].get("rationale"))), ""


AR_GRADER = GraderKind("ar", "grader_ar", parse_ar, AR_FORMAT, ArVerdict, family="gemex")


async def ar_rating(
    question: str,
    reference: str,
    candidate: str,
    settings: JudgeSettings,
    allow_self_judging: bool,
    lineage: LineageWatch | None = None,
) -> JudgeOutcome:
    return await grade_answer(
        AR_GRADER, question, reference, candidate, settings, allow_self_judging, lineage
    )


def gemex_metrics() -> dict[str, list[Metric]]:
    by_type = breakdown(["question_type"])
    return {key: [mean(), image_stderr(), *by_type] for key in SCORE_KEYS}


@scorer(metrics=gemex_metrics())
def gemex_scorer(
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
    """A-score (closed/single/multi), AR-score (open), V-score, BLEU, ROUGE-L."""
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

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        kind = meta["question_type"]
        reply = parse_gemex_reply(state.output.completion)
        values = dict.fromkeys(SCORE_KEYS, math.nan)
        details: dict[str, Any] = {"parsed": {**reply, "boxes": [list(b) for b in reply["boxes"]]}}
        answer_text = (
            reply["answer"] if isinstance(reply["answer"], str) else json.dumps(reply["answer"])
        )
        no_answer = ""
        if kind == "closed":
            # A reply in neither the JSON nor the tagged form is read as the short-answer
            # reader reads any reply ("The answer is yes.", "<answer>no</answer>", "No, ...").
            # The final yes or no it commits to: "No. Wait, actually yes." is yes, "Yes.\nNo."
            # no answer (read_committed_yes_no); a JSON or tagged answer is read on its own.
            read = ShortAnswer(answer_text, str(reply["method"]))
            if reply["method"] == "plain_text":
                read = read_short_answer(state.output.completion)
                no_answer = read.detail
            said, why = read_committed_yes_no(read)
            no_answer = no_answer or ("" if said is not None else why)
            values["accuracy"] = float(
                said is not None and said == read_yes_no(meta["reference_answer"])[0]
            )
        elif kind == "single":
            extraction = extract_label(answer_text, [(c[0], c[1]) for c in meta["choices"]])
            values["accuracy"] = float(extraction.label == meta["reference_answer"])
            details["extraction"] = {"label": extraction.label, "method": extraction.method}
            if extraction.label is None:
                no_answer = f"{extraction.method}: {extraction.detail}"
        elif kind == "multi":
            labels = {label for label, _ in meta["choices"]}
            predicted, expected = (
                parse_label_set(reply["answer"], labels),
                set(meta["reference_answer"]),
            )
            overlap = len(predicted & expected)
            values["accuracy"] = float(predicted == expected)
            values["jaccard"] = overlap / len(predicted | expected) if predicted | expected else 1.0
            values["precision"] = overlap / len(predicted) if predicted else 0.0
            values["recall"] = overlap / len(expected) if expected else 1.0
            details["predicted_labels"] = sorted(predicted)
        reference_boxes = [cast(Box, tuple(b)) for b in meta["reference_boxes"]]
        if reference_boxes:
            values["v_score"] = v_score(reply["boxes"], reference_boxes)
        choices = [(c[0], c[1]) for c in meta["choices"]]
        candidate_text = (
            f"{answer_as_text(kind, reply['answer'], choices)} {reply['reason']}".strip()
        )
        reference_text = str(meta["reference_text"]).strip()
        values["bleu"], values["rouge_l"] = text_overlap(candidate_text, reference_text)
        if kind == "open":
            candidate = await ar_rating(
                meta["question"], reference_text, candidate_text, settings, self_judging, lineage
            )
            own = await ar_rating(
                meta["question"], reference_text, reference_text, settings, self_judging, lineage
            )
            details["ar"] = {"candidate": candidate.as_metadata(), "reference": own.as_metadata()}
            if candidate.score is not None and own.score:
                values["ar_score"] = candidate.score / own.score
        explanation = json.dumps({k: v for k, v in values.items() if not math.isnan(v)})
        if no_answer:
            explanation += f"\nno answer, counted wrong: {no_answer}"
        return Score(
            value=cast(Value, values),
            answer=answer_text,
            metadata=details,
            explanation=explanation,
        )

    return score
