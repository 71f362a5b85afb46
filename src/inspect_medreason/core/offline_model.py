"""Built-in offline models: ``--model medreason/pipeline-check``,
``--model medreason/image-sensitive`` and ``medreason/reference-judge`` (a judge role).

``pipeline-check`` reads no image and knows no medicine. Like the official Docker template's smoke mode it
answers in the expected JSON format (MCQ: the first option; open-ended: a fixed placeholder;
as a judge or grader: a fixed verdict in the shape the grader asks for), so that a fresh machine with no API key and no network
can run every task end to end. Its numbers mean nothing about any model.

``image-sensitive`` is the reference model for image-quality shifts (docs/shift.md): it
measures the images it is sent (blur and noise, ``core.image_quality``) and answers well
only when it sees clearly enough, deterministically, so that ``medreason shift`` can be
watched detecting a drop before a real model is paid for. Each question needs its own
clarity, ``CLEAR_FROM + CLEAR_SPAN * h`` with ``h`` in [0, 1) a hash of the question's text:
seen that clearly, an MCQ is answered with its first option (or, given ``-M
answers=ground_truth.json`` with the case's true label, found by the question text through
``-M cases=cases.json``) and an open question with its reference answer (given those files;
else a fixed finding); less clearly, with the
option the hash picks among the others and "cannot assess: the image is too blurred or
noisy". As a judge it answers as ``pipeline-check``.

``reference-judge`` is the offline judge whose verdicts follow the answer's agreement with the
reference and what it measures of the image (``core.reference_judge``, docs/open_ended.md).
"""

from __future__ import annotations

import binascii
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentImage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from PIL import Image, UnidentifiedImageError

from inspect_medreason.core.errors import UserInputError
from inspect_medreason.core.image_quality import clarity, measure
from inspect_medreason.core.reference_judge import (
    image_bytes,
    load_patterns,
    read_references,
    reference_judge_reply,
)

PROVIDER_NAME = "medreason"
PIPELINE_CHECK_NOTE = "Pipeline check: no model inference was performed."
JUDGE_PIPELINE_SCORE = 2
# A grader's system prompt names the JSON it wants; the stand-in answers in that shape.
GRADER_REPLIES: dict[str, dict[str, object]] = {
    '"score"': {"score": JUDGE_PIPELINE_SCORE},
    '"correct"': {"correct": False},
    '"fluency"': {"fluency": 3, "relevance": 3, "completeness": 3, "proficiency": 3},
}
_OPTION_LINE = re.compile(r"^([A-Z])\. ", re.MULTILINE)


def _last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ChatMessageUser):
            return message.text
    return ""


def pipeline_check_reply(messages: list[ChatMessage]) -> str:
    """The fixed JSON reply for a request, chosen by what the request asks for."""
    text = _last_user_text(messages)
    system = " ".join(m.text for m in messages if m.role == "system")
    for marker, reply in GRADER_REPLIES.items():
        if marker in system:
            return json.dumps({**reply, "rationale": f"{PIPELINE_CHECK_NOTE} Fixed verdict."})
    options_at = text.find("Options:")
    labels = _OPTION_LINE.findall(text[options_at:]) if options_at >= 0 else []
    if labels:
        return json.dumps(
            {
                "reasoning_trace": f"{PIPELINE_CHECK_NOTE} Selected the first option.",
                "answer": labels[0],
            }
        )
    return json.dumps(
        {
            "reasoning_trace": PIPELINE_CHECK_NOTE,
            "answer": "Pipeline check answer; replace with a real model.",
        }
    )


CLEAR_FROM = 0.2
CLEAR_SPAN = 0.5
IMAGE_SENSITIVE_NOTE = "Image-sensitive reference model: answers from measured image quality."
UNCLEAR_ANSWER = "Cannot assess: the image is too blurred or noisy."
CLEAR_ANSWER = "The finding asked about is visible."


def question_hash(text: str) -> float:
    """A number in [0, 1) fixed by the question's text."""
    digest = hashlib.sha256(" ".join(text.split()).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def needed_clarity(text: str) -> float:
    return CLEAR_FROM + CLEAR_SPAN * question_hash(text)


def images_clarity(messages: list[ChatMessage]) -> float | None:
    """The least clarity among the images of the last user message (None without one)."""
    for message in reversed(messages):
        if isinstance(message, ChatMessageUser):
            parts = [] if isinstance(message.content, str) else message.content
            values = []
            for part in parts:
                if isinstance(part, ContentImage):
                    try:
                        with Image.open(io.BytesIO(image_bytes(part.image))) as picture:
                            picture.load()
                            values.append(clarity(measure(picture)))
                    except (OSError, ValueError, binascii.Error, UnidentifiedImageError):
                        values.append(0.0)  # an image it cannot read, it cannot see
            return min(values) if values else None
    return None


OPEN_QUESTION = re.compile(r"Question:\s*(.*?)\s*(?:\n\s*\n|\Z)", re.DOTALL)


def _open_question(text: str) -> str:
    """The question of an open-ended prompt, whitespace-flattened (the text after
    ``Question:`` up to a blank line; the whole prompt when it has no such label)."""
    found = OPEN_QUESTION.search(text)
    return " ".join((found.group(1) if found else text).split())


def _question(text: str) -> str:
    options_at = text.find("Options:")
    return text[:options_at] if options_at >= 0 else text


Answer = tuple[str, tuple[str, ...], str]  # question, option texts, true label


def _flat(text: str) -> str:
    return " ".join(text.split())


def _option_text(option: object) -> str:
    # the MedReason schema allows {"label", "text"} records or bare texts
    return _flat(str(option.get("text", "") if isinstance(option, dict) else option))


def read_answers(cases: str | None, answers: str | None) -> list[Answer]:
    """Each MCQ case's question, option texts and true label, from a MedReason cases file and
    its ground truth (a question may recur with other options: the options tell them apart)."""
    if not cases and not answers:
        return []
    if not (cases and answers):
        raise UserInputError(
            "medreason/image-sensitive: give both -M cases=<cases.json> and "
            "-M answers=<ground_truth.json>, or neither"
        )
    try:
        case_rows = json.loads(Path(cases).read_text(encoding="utf-8"))["cases"]
        truth_rows = json.loads(Path(answers).read_text(encoding="utf-8"))["cases"]
        truth = {str(row["case_id"]): str(row["answer"]) for row in truth_rows}
        return [
            (
                _flat(str(row["question"])),
                tuple(_option_text(option) for option in row.get("options") or []),
                truth[str(row["case_id"])],
            )
            for row in case_rows
            if str(row["case_id"]) in truth and row.get("options")
        ]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserInputError(
            f"medreason/image-sensitive: -M cases={cases} / -M answers={answers} cannot be "
            f"read as MedReason cases and ground truth ({type(error).__name__}: {error})"
        ) from error


def true_label(text: str, answers: list[Answer]) -> str | None:
    """The true label of the case whose question and every option the prompt shows."""
    flat = _flat(text)
    for question, options, label in answers:
        if question in flat and all(f". {option}" in flat for option in options):
            return label
    return None


def image_sensitive_reply(
    messages: list[ChatMessage],
    answers: list[Answer],
    open_answers: dict[str, list[str]] | None = None,
) -> str:
    """The reply of the image-sensitive reference model (module docstring)."""
    system = " ".join(m.text for m in messages if m.role == "system")
    if any(marker in system for marker in GRADER_REPLIES):
        return pipeline_check_reply(messages)
    text = _last_user_text(messages)
    seen = images_clarity(messages)
    needed = needed_clarity(_question(text))
    clear = seen is not None and seen >= needed
    sight = "no image" if seen is None else f"clarity {seen:.3f}, needed {needed:.3f}"
    options_at = text.find("Options:")
    labels = _OPTION_LINE.findall(text[options_at:]) if options_at >= 0 else []
    if labels:
        right = true_label(text, answers) or labels[0]
        others = [label for label in labels if label != right] or labels
        guess = others[int(question_hash(text) * len(others))]
        answer = right if clear else guess
        trace = "The image is clear." if clear else "The image is too blurred or noisy."
    else:
        known = (open_answers or {}).get(_open_question(text), [])
        finding = known[0] if len(known) == 1 else CLEAR_ANSWER
        answer = finding if clear else UNCLEAR_ANSWER
        trace = (
            f"The image is clear. It shows: {finding}"
            if clear
            else "The image is too blurred or noisy."
        )
    return json.dumps(
        {"reasoning_trace": f"{IMAGE_SENSITIVE_NOTE} {trace} ({sight})", "answer": answer}
    )


# The -M arguments each offline model takes.
OFFLINE_MODEL_ARGS: dict[str, tuple[str, ...]] = {
    "pipeline-check": (),
    "image-sensitive": ("cases", "answers"),
    "reference-judge": ("cases", "answers", "prompts"),
}
OFFLINE_MODELS = ("pipeline-check", "image-sensitive", "reference-judge")


class PipelineCheckModel(ModelAPI):
    """The built-in offline models (``OFFLINE_MODELS``), by name. Each answers instantly and
    deterministically and reports its own token usage (no tokenizer)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in OFFLINE_MODELS:
            raise UserInputError(
                f"medreason/{model_name} is not a built-in offline model; valid: "
                + ", ".join(f"medreason/{name}" for name in OFFLINE_MODELS)
            )
        unknown = sorted(set(model_args) - set(OFFLINE_MODEL_ARGS[model_name]))
        if unknown:
            raise UserInputError(
                f"medreason/{model_name}: unknown model argument(s) "
                + ", ".join(f"-M {name}" for name in unknown)
                + "; valid: "
                + (", ".join(f"-M {name}" for name in OFFLINE_MODEL_ARGS[model_name]) or "none")
            )
        self.answers = (
            read_answers(model_args.get("cases"), model_args.get("answers"))
            if model_name == "image-sensitive"
            else []
        )
        self.open_answers = (
            read_references(model_args.get("cases"), model_args.get("answers"), model_name)
            if model_name == "image-sensitive"
            else {}
        )
        self.patterns = (
            load_patterns(model_args.get("prompts")) if model_name == "reference-judge" else {}
        )
        self.references = (
            read_references(model_args.get("cases"), model_args.get("answers"))
            if model_name == "reference-judge"
            else {}
        )

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if self.model_name == "image-sensitive":
            reply = image_sensitive_reply(input, self.answers, self.open_answers)
        elif self.model_name == "reference-judge":
            reply = reference_judge_reply(input, self.patterns, self.references)
        else:
            reply = pipeline_check_reply(input)
        output = ModelOutput.from_content(model=self.model_name, content=reply)
        input_words = sum(len(message.text.split()) for message in input)
        output_words = len(reply.split())
        output.usage = ModelUsage(
            input_tokens=input_words,
            output_tokens=output_words,
            total_tokens=input_words + output_words,
        )
        return output
