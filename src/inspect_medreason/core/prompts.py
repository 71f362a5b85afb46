"""Prompt templates: loaded from text files, filled with ``string.Template`` placeholders.

``string.Template`` (``${name}``) is used instead of ``str.format`` because the templates
show JSON objects whose braces would otherwise need escaping.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

# Each family keeps its prompts in its own prompts/ folder; what several families share
# (the track prompts, the challenge's judges) is in core/prompts/.
PROMPT_FOLDER = "prompts"
SHARED = "core"


@dataclass(frozen=True)
class PromptTemplate:
    """One template, with where it came from and a digest for the eval log."""

    name: str
    text: str
    source: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **values: Any) -> str:
        return Template(self.text).substitute(**values)

    def log_record(self) -> dict[str, str]:
        return {"source": self.source, "sha256": self.sha256, "text": self.text}


def load_template(
    name: str, directory: str | Path | None = None, family: str = SHARED
) -> PromptTemplate:
    """Read ``<name>.txt`` from ``directory`` (a user's folder) or, when None, from the
    package: the ``family``'s prompts folder (default: the shared ones in core)."""
    file_name = f"{name}.txt"
    if directory is None:
        resource = files("inspect_medreason") / family / PROMPT_FOLDER / file_name
        return PromptTemplate(
            name,
            resource.read_text(encoding="utf-8"),
            f"package:{family}/{PROMPT_FOLDER}/{file_name}",
        )
    path = Path(directory).expanduser() / file_name
    if not path.is_file():
        raise FileNotFoundError(f"prompt template {file_name} not found in {directory}")
    return PromptTemplate(name, path.read_text(encoding="utf-8"), str(path))


def context_block(context: str | None) -> str:
    return f"Context: {context.strip()}\n\n" if context and context.strip() else ""


def format_options(options: list[dict[str, str]]) -> str:
    return "\n".join(f"{option['label']}. {option['text']}" for option in options)
