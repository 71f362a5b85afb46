"""A built-in offline model for checking the pipeline: ``--model medreason/pipeline-check``.

It reads no image and knows no medicine. Like the official Docker template's smoke mode it
answers in the expected JSON format (MCQ: the first option; open-ended: a fixed placeholder;
as a judge or grader: a fixed verdict in the shape the grader asks for), so that a fresh machine with no API key and no network
can run every task end to end. Its numbers mean nothing about any model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

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


class PipelineCheckModel(ModelAPI):
    """Answers instantly and deterministically; reports its own token usage (no tokenizer)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
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
