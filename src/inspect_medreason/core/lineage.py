"""Judge lineage: is a judge the model under test, or of its family?

LLM judges are known to favour their own outputs and their own family's (self-preference
bias), so a run whose judge shares the tested model's lineage is flagged, at run time and by
``medreason leaderboard`` beside the row. Never refused: ``allow_self_judging`` and a
deliberate same-family judge stay the user's choice, only not a silent one.

A family is the developer's line of models (OpenAI's GPT and o-series, Claude, Gemini and
Gemma, Qwen, Llama, ...), read from the model's name whatever API serves it
(``openai/gpt-4o``, ``openrouter/openai/gpt-4o-mini`` and ``azureai/gpt-4.1`` are one family;
``vllm/Qwen/Qwen2.5-VL-72B-Instruct`` and ``openai-api/together/Qwen/Qwen2-VL-7B`` another). A
name outside the table is its own family by its leading word (``vllm/medvlm-7b`` and
``vllm/medvlm-13b`` are one). A fine-tune renamed by its maker (a Qwen-based medical model
with a name of its own) cannot be told from its name: the table is a floor, not a proof.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Family -> the name words that belong to it (matched at the start of a name or org part,
# lower case). A developer's lines that share training are one family (Gemma and Gemini).
FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "OpenAI GPT/o-series": ("gpt", "chatgpt", "o1", "o3", "o4", "davinci", "openai"),
    "Anthropic Claude": ("claude", "anthropic"),
    "Google Gemini/Gemma": ("gemini", "gemma", "medgemma", "palm", "med-palm", "google"),
    "Qwen": ("qwen", "qwq", "qvq"),
    "Meta Llama": ("llama", "meta-llama", "meta"),
    "Mistral": ("mistral", "mixtral", "pixtral", "ministral", "magistral", "codestral"),
    "DeepSeek": ("deepseek",),
    "xAI Grok": ("grok", "xai"),
    "Microsoft Phi": ("phi",),
    "InternVL": ("internvl", "internlm", "opengvlab"),
    "GLM": ("glm", "chatglm", "zai-org", "thudm"),
    "Moonshot Kimi": ("kimi", "moonshot"),
}
# Inspect providers that serve other developers' models: their name says nothing of lineage.
SERVING_PROVIDERS = frozenset(
    {
        "openai-api",
        "vllm",
        "sglang",
        "hf",
        "ollama",
        "llama-cpp-python",
        "together",
        "openrouter",
        "fireworks",
        "groq",
        "azureai",
        "bedrock",
        "vertex",
        "cf",
        "perplexity",
        "nnterp",
        "transformer_lens",
        "mockllm",
        "none",
    }
)
_LEADING_WORD = re.compile(r"[a-z]+")
_TOKEN_SEPARATORS = re.compile(r"[._:\-\s]+")
# Region prefixes of cloud model ids (Bedrock's cross-region inference: us.anthropic.claude-...)
_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|global|us-gov|jp|au|ca)\.")
# Leading words that name no line of models: two names sharing one are not a family.
GENERIC_WORDS = frozenset(
    {
        "my",
        "local",
        "model",
        "judge",
        "test",
        "base",
        "custom",
        "chat",
        "instruct",
        "default",
        "gateway",
        "server",
        "api",
        "llm",
        "the",
        "new",
        "finetuned",
        "ft",
        "v",
    }
)


def model_families(model: str) -> frozenset[str]:
    """The families of an Inspect model name (``provider/name``, with any org in between):
    every family a word of its name, its org or a developer provider names, anywhere in the
    name (``DeepSeek-R1-Distill-Qwen-32B`` is DeepSeek and Qwen; ``llava-med-v1.5-mistral-7b``
    is Mistral); empty when the table knows none."""
    provider, _, rest = model.strip().lower().partition("/")
    parts = [part for part in rest.split("/") if part] if rest else [provider]
    if provider not in SERVING_PROVIDERS and rest:
        parts.append(provider)
    words = {token for part in parts for token in (part, *_TOKEN_SEPARATORS.split(part))}
    return frozenset(
        family
        for family, family_words in FAMILY_WORDS.items()
        if any(_starts_with_word(word, name) for word in words for name in family_words)
    )


def _leading_word(model: str) -> str:
    name = _REGION_PREFIX.sub("", model.strip().lower().rsplit("/", 1)[-1])
    stem = _LEADING_WORD.match(name)
    return stem.group(0) if stem else name


def _starts_with_word(part: str, word: str) -> bool:
    """``gpt-4o`` starts with the word ``gpt``, ``o3-mini`` with ``o3``; ``phi`` is not the
    start of ``philosopher-7b`` nor ``o1`` of ``o1x``: the next character is no letter."""
    if not part.startswith(word):
        return False
    rest = part[len(word) :]
    return not rest or not rest[0].isalpha()


@dataclass(frozen=True)
class LineageWarning:
    """A judge that shares the tested model's lineage."""

    role: str
    judge: str
    tested: str
    relation: str  # "is the model under test" or "is of the same family (...)"

    def message(self) -> str:
        return (
            f"judge lineage: the {self.role} judge {self.judge} {self.relation} as the model "
            f"under test {self.tested}; judges favour their own outputs and family, so its "
            "scores may be inflated. Bind a judge of another family to compare fairly."
        )

    def as_record(self) -> dict[str, str]:
        return {
            "role": self.role,
            "judge": self.judge,
            "tested": self.tested,
            "relation": self.relation,
        }


# The built-in offline stand-in (``medreason/pipeline-check``): its verdicts are fixed, so it
# has no preference to warn of when it judges itself in the pipeline check.
OFFLINE_PROVIDER = "medreason/"


def judge_lineage(role: str, judge: str, tested: str) -> LineageWarning | None:
    """A warning when ``judge`` is ``tested`` or of its family; None otherwise."""
    if judge.strip().lower().startswith(OFFLINE_PROVIDER):
        return None
    if judge.strip().lower() == tested.strip().lower():
        return LineageWarning(role, judge, tested, "is the same model")
    shared = model_families(judge) & model_families(tested)
    if shared:
        family = ", ".join(sorted(shared))
        return LineageWarning(role, judge, tested, f"is of the same family ({family})")
    if not model_families(judge) and not model_families(tested):
        stem = _leading_word(judge)
        if stem == _leading_word(tested) and stem not in GENERIC_WORDS and len(stem) > 2:
            return LineageWarning(role, judge, tested, f"is of the same family ({stem})")
    return None


def role_lineage(
    tested: str,
    roles: Mapping[str, str | Iterable[str]],
    self_judged_roles: Iterable[str] = (),
) -> list[LineageWarning]:
    """Every lineage warning of a run: each model bound to each judge role (a panel binds
    several), and each role left to the model under test (``allow_self_judging``)."""
    warnings: list[LineageWarning] = []
    for role, bound in roles.items():
        for judge in [bound] if isinstance(bound, str) else bound:
            found = judge_lineage(role, judge, tested)
            if found is not None:
                warnings.append(found)
    for role in self_judged_roles:
        if judge_lineage(role, tested, tested) is not None:
            warnings.append(
                LineageWarning(role, tested, tested, "is the same model (allow_self_judging)")
            )
    return warnings
