"""What the public-benchmark tasks share: samples, the free-text answer line, yes/no
normalisation, the correctness grader and subset metrics."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
)
from inspect_ai.scorer import Metric, SampleScore, Value, metric
from pydantic import BaseModel, Field

from inspect_medreason.extraction import json_objects, parse_reply
from inspect_medreason.judges import (
    JudgeOutcome,
    JudgeSettings,
    JudgeTemplates,
    Verdict,
    fence_id,
    rationale_text,
    run_judge,
    short_repr,
)
from inspect_medreason.loaders import case_turn
from inspect_medreason.prompts import load_template
from inspect_medreason.scorers import judge_model, scored_samples

_ANSWER_LINE = re.compile(r"^\s*(?:\*\*)?(?:final\s+)?answer(?:\*\*)?\s*[:：]\s*(.+?)\s*$",
                          re.IGNORECASE | re.MULTILINE)  # fmt: skip
_YES = {"yes", "y", "true", "present", "是", "是的", "有", "对", "正确"}
_NO = {"no", "n", "false", "absent", "not present", "否", "不是", "没有", "无", "不", "错", "错误"}
CORRECT_FORMAT = '{"correct": <true or false>, "rationale": "<one sentence>"}'


class CorrectnessVerdict(BaseModel):
    """Whether a candidate answer means the same as the reference."""

    correct: bool = Field(description="True when the candidate matches the reference")
    rationale: str = Field(description="One sentence")


def build_sample(
    sample_id: str,
    images: list[Path],
    question: str,
    prompt: dict[str, Any],
    target: str | list[str],
    metadata: dict[str, Any],
    show_images: bool = True,
    choices: list[str] | None = None,
) -> Sample:
    """A sample that carries the case: its images (file paths) and question as the user
    turn; ``prompt`` names the templates and values the task's solver renders."""
    metadata = {
        **metadata,
        "image_files": [str(p) for p in images],
        "images_withheld": bool(images) and not show_images,
        "prompt": prompt,
    }
    return Sample(id=sample_id, input=case_turn(images, question, show_images), target=target,
                  choices=choices, metadata=metadata)  # fmt: skip


def final_answer(completion: str) -> tuple[str, str]:
    """The answer a free-text reply commits to, and how it was found."""
    lines = list(_ANSWER_LINE.finditer(completion))
    if lines:
        return lines[-1].group(1).strip().strip("*$`").strip(), "answer_line"
    reply = parse_reply(completion)
    if reply.answer_field is not None:
        return reply.answer_field.strip(), "json_answer_field"
    stripped = completion.strip()
    if stripped and "\n" not in stripped and len(stripped) <= 100:
        return stripped, "bare_reply"
    return "", "unparsed"


def normalise_answer(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    text = re.sub(r"[\s.。!！,，;；:：\"'`*]+$", "", text)
    return re.sub(r"^[\s\"'`*]+", "", text)


_BOTH_POLARITIES = re.compile(
    r"^\s*(?P<first>yes|no|是|否|有|无)(?:\s*(?:,|/|\||&|\band\b|\bor\b|或者?|和|与|还是)\s*)*\s*"
    r"(?P<second>yes|no|是|否|有|无)(?![a-z])"
)


def yes_no(text: str) -> str | None:
    """``yes``/``no`` for an English or Chinese yes/no answer; None when neither or both
    ("yes and no", "yes or no", "是或否")."""
    normalised = normalise_answer(text)
    both = _BOTH_POLARITIES.match(normalised)
    if both and _polarity(both.group("first")) != _polarity(both.group("second")):
        return None
    if normalised in _YES:
        return "yes"
    if normalised in _NO:
        return "no"
    first = re.split(r"[\s,，.。;；]", normalised, maxsplit=1)[0]
    if first in _YES and first not in _NO:
        return "yes"
    if first in _NO:
        return "no"
    return None


def _polarity(word: str) -> str:
    return "yes" if word in _YES else "no"


def is_yes_no_reference(answer: str) -> bool:
    """A closed-ended question, as the VQA-RAD paper defines it: the reference is yes or no
    (not "no fracture", "present" or "true")."""
    return normalise_answer(answer) in {"yes", "no"}


def parse_correctness(text: str) -> tuple[Verdict | None, str]:
    candidates = [c for c in json_objects(text) if "correct" in c]
    if not candidates:
        return None, "no JSON object with a 'correct' field"
    value = candidates[-1]["correct"]
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        value = value.strip().lower() == "true"
    if not isinstance(value, bool):
        return None, f"'correct' is {short_repr(value)}, not true or false"
    return Verdict(int(value), rationale_text(candidates[-1].get("rationale"))), ""


@functools.cache
def grader_templates(prefix: str) -> JudgeTemplates:
    """A grader's system/user templates plus the shared retry template (read once, not once
    per graded answer)."""
    names = (f"{prefix}_system", f"{prefix}_user", "judge_retry")
    return JudgeTemplates({name: load_template(name) for name in names})


async def grade_correctness(
    question: str,
    reference: str,
    candidate: str,
    settings: JudgeSettings,
    allow_self_judging: bool,
) -> JudgeOutcome:
    """Ask the ``grader`` role whether a free-text answer matches the reference."""
    templates = grader_templates("grader_correct")
    text = templates.templates["grader_correct_user"].render(
        question=question,
        reference_answer=reference,
        candidate_answer=candidate,
        fence_id=fence_id(candidate),
    )
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=templates.templates["grader_correct_system"].text.strip()),
        ChatMessageUser(content=text),
    ]
    return await run_judge(
        "correct", judge_model("grader", allow_self_judging), messages, templates, settings,
        parse=parse_correctness, expected=CORRECT_FORMAT, schema=CorrectnessVerdict,
        candidate=candidate,
    )  # fmt: skip


def _subset_mean(scores: list[SampleScore], field: str, value: str) -> float:
    chosen = [s.score.as_float() for s in scored_samples(scores)
              if (s.sample_metadata or {}).get(field) == value]  # fmt: skip
    return sum(chosen) / len(chosen) if chosen else float("nan")


@metric(name="accuracy_closed")
def accuracy_closed() -> Metric:
    """Accuracy over closed (yes/no) questions."""

    def compute(scores: list[SampleScore]) -> Value:
        return _subset_mean(scores, "answer_type", "closed")

    return compute


@metric(name="accuracy_open")
def accuracy_open() -> Metric:
    """Accuracy over open questions (graded by the ``grader`` role)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _subset_mean(scores, "answer_type", "open")

    return compute


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
