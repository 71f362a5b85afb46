"""Turning a case into the conversation a model sees, for either track.

Samples carry the case itself (its images and question as the user turn, MCQ options as
``choices``); the ``medreason_prompt`` solver turns it into the track's prompt and calls
``generate`` in the same step. It changes only the text part of the user turn (the image
parts are left as they are, so Inspect's state-change record holds a few hundred bytes of
text, never the images) and passes the system prompt as the generation's
``system_message``, so the messages list is not reshuffled either. ``--solver`` swaps it
for any other solver (Inspect's ``multiple_choice()`` runs on the same samples).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    ContentText,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from inspect_medreason.core.judges import bound_role_counts, refuse_bad_bindings
from inspect_medreason.core.prompts import (
    SHARED,
    PromptTemplate,
    context_block,
    format_options,
    load_template,
)
from inspect_medreason.core.schema import sample_options

BLIND_NOTICE = (
    "Note: the image(s) for this question are withheld in this run. Answer from the text alone.\n\n"
)


@dataclass(frozen=True)
class TrackPrompts:
    """The system and user templates of one track."""

    system: PromptTemplate
    user: PromptTemplate

    @classmethod
    def load(cls, track: str) -> TrackPrompts:
        return cls(load_template(f"{track}_system"), load_template(f"{track}_user"))

    def templates(self) -> list[PromptTemplate]:
        return [self.system, self.user]


def render_case_prompt(
    template: PromptTemplate, metadata: dict[str, Any], choices: Sequence[str] = ()
) -> str:
    """Fill a user template from the case facts kept in sample metadata and its choices."""
    options = sample_options(metadata, choices)
    return template.render(
        question=str(metadata.get("question", "")),
        context_block=context_block(metadata.get("context")),
        options=format_options([{"label": label, "text": text} for label, text in options]),
        first_label=options[0][0] if options else "A",
    )


@solver
def medreason_prompt() -> Solver:
    """Ask for ``{"reasoning_trace", "answer"}`` in the track's format (MCQ: the option
    label; open: a concise answer), with the track's system prompt, then generate."""
    prompts = {track: TrackPrompts.load(track) for track in ("mcq", "open")}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        track = state.metadata.get("task_type", "open")
        templates = prompts["mcq" if track == "mcq" else "open"]
        choices = [choice.value for choice in state.choices]
        text = render_case_prompt(templates.user, state.metadata, choices)
        if state.metadata.get("images_withheld"):
            text = BLIND_NOTICE + text
        replace_prompt_text(state, text)
        return await generate(state, system_message=templates.system.text.strip())

    return solve


def replace_prompt_text(state: TaskState, text: str) -> None:
    """Put ``text`` in place of the user turn's text part, leaving its images untouched."""
    message = state.user_prompt
    if isinstance(message.content, str):
        message.content = text
        return
    for index in range(len(message.content) - 1, -1, -1):
        if isinstance(message.content[index], ContentText):
            message.content[index] = ContentText(text=text)
            return
    message.content.append(ContentText(text=text))


@functools.cache
def _template(name: str, family: str) -> PromptTemplate:
    return load_template(name, family=family)


@solver
def template_prompt() -> Solver:
    """The prompt of a benchmark sample: the templates its metadata names
    (``prompt = {"system": name or None, "user": name, "values": {...}}``), rendered into
    the text part of the user turn, the system template as ``system_message``; then
    generate. Swappable with ``--solver`` like ``medreason_prompt``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = state.metadata["prompt"]
        family = spec.get("family", SHARED)
        text = _template(spec["user"], family).render(**spec.get("values", {}))
        if state.metadata.get("images_withheld"):
            text = BLIND_NOTICE + text
        replace_prompt_text(state, text)
        if spec.get("system"):
            system = _template(spec["system"], family).text.strip()
            return await generate(state, system_message=system)
        return await generate(state)

    return solve


@solver
def judge_roles_check(roles: list[str], panels: bool) -> Solver:
    """Refuse a bad binding of the judge roles (``core.judges.refuse_bad_bindings``) before
    the model under test is called: a task's set-up step, so it runs first in every sample
    whichever way the eval was started (Python's ``eval()`` too, where the task is built
    before the roles are known)."""

    async def check(state: TaskState, generate: Generate) -> TaskState:
        refuse_bad_bindings(roles, bound_role_counts(), panels)
        return state

    return check
