"""Judge lineage: which judges share the tested model's line, read from model names."""

from __future__ import annotations

import pytest

from inspect_medreason.core.lineage import judge_lineage, role_lineage


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("openai/gpt-4o", "openai/gpt-4o-mini"),
        ("openai/gpt-4o", "azureai/gpt-4.1"),  # another API serving the same developer's model
        ("openai/o3-mini", "openrouter/openai/gpt-4o"),
        ("anthropic/claude-sonnet-4-0", "bedrock/anthropic.claude-3-5-haiku"),
        ("google/gemini-2.5-pro", "vllm/google/medgemma-4b-it"),
        ("vllm/Qwen/Qwen2.5-VL-72B-Instruct", "openai-api/together/Qwen/QVQ-72B-Preview"),
        ("hf/meta-llama/Llama-3.2-11B-Vision", "ollama/llama3.2-vision"),
        ("mistral/pixtral-large-latest", "vllm/mistralai/Mistral-Small-3.1-24B"),
        ("vllm/medvlm-7b", "vllm/medvlm-13b"),  # outside the table: its leading word
        # a family word anywhere in the name, and Bedrock's region prefixes
        ("anthropic/claude-3-5-sonnet-latest", "bedrock/us.anthropic.claude-3-5-sonnet-v2:0"),
        ("hf/lmms-lab/llava-onevision-qwen2-7b-ov", "vllm/Qwen/Qwen2.5-VL-7B-Instruct"),
        ("together/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "vllm/Qwen/Qwen2.5-72B"),
        ("together/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek/deepseek-chat"),
        ("hf/ContactDoctor/Bio-Medical-Llama-3-8B", "together/meta-llama/Llama-3.3-70B"),
        ("vllm/microsoft/llava-med-v1.5-mistral-7b", "mistral/mistral-large-latest"),
    ],
)
def test_one_family(first: str, second: str) -> None:
    warning = judge_lineage("grader", first, second)
    assert warning is not None and "same family" in warning.relation
    assert first in warning.message() and second in warning.message()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("openai/gpt-4o", "anthropic/claude-sonnet-4-0"),
        ("vllm/Qwen/Qwen2.5-VL-7B-Instruct", "vllm/OpenGVLab/InternVL3-8B"),
        ("openai-api/deepinfra/microsoft/phi-4", "vllm/philosopher-7b"),  # phi is no prefix
        ("vllm/llava-med-7b", "hf/meta-llama/Llama-3.2-11B-Vision"),
        ("google/gemini-2.5-pro", "openai/o3"),
        ("bedrock/us.meta.llama3-2-90b-instruct-v1:0", "bedrock/us.anthropic.claude-3-5-v2:0"),
        ("openai-api/local/my-judge", "openai-api/local/my-model"),  # a generic leading word
    ],
)
def test_other_families(first: str, second: str) -> None:
    assert judge_lineage("grader", first, second) is None


def test_the_same_model_is_named_as_such() -> None:
    warning = judge_lineage("vision_grader", "openai/gpt-4o", "OpenAI/GPT-4o")
    assert warning is not None and warning.relation == "is the same model"


def test_the_offline_stand_in_judging_itself_is_no_lineage() -> None:
    """Its verdicts are fixed whatever it judges: no preference to warn of."""
    assert judge_lineage("grader", "medreason/pipeline-check", "medreason/pipeline-check") is None


def test_a_run_lists_every_panel_member_and_self_judged_role() -> None:
    warnings = role_lineage(
        "openai/gpt-4o",
        {"grader": ["anthropic/claude-sonnet-4-0", "openai/gpt-4.1"], "vision_grader": "x/y"},
        self_judged_roles=["vision_grader"],
    )
    assert [(w.role, w.judge) for w in warnings] == [
        ("grader", "openai/gpt-4.1"),
        ("vision_grader", "openai/gpt-4o"),
    ]
    assert "allow_self_judging" in warnings[1].relation
