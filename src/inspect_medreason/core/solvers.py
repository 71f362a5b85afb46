"""Turning a case into the conversation a model sees, for either track.

Samples carry the case itself (its images and question as the user turn, MCQ options as
``choices``); the ``medreason_prompt`` solver turns it into the track's prompt and calls
``generate``. It is a chain of two steps, each recorded by Inspect as its own state
change: the track's system prompt goes in front with Inspect's own ``system_message()``,
then the text part of the user turn is replaced (its image parts are left as they are) and
the model is asked. Kept apart because Inspect diffs a step's messages index by index
after the items both lists end with: a step that both inserts a system message in front
of the user turn and edits that turn (or appends the reply) pairs the old user turn with
the new system message, and the state-change record keeps the old turn, images included,
in its ``replaced`` field, which ``--no-log-images`` does not scrub
(docs/inspect_notes.md). In this order the first step records one added message, the
second a few hundred bytes of text and the reply. ``--solver`` swaps the chain for any
other solver (Inspect's ``multiple_choice()`` runs on the same samples).

The run's ``--system-message`` (``eval(..., system_message=...)``,
``INSPECT_EVAL_SYSTEM_MESSAGE``) replaces the track's system prompt: Inspect's model puts
the run's message in front of every request, so the track's own is left out rather than
sent as a second system turn (``system_prompt_choice``). Each sample's metadata records which
one was used (``system_prompt``); the run's text is in the log's generate config. The run's
message is read where Inspect puts it for the model under test, the model's own config
(``get_model().config``): a model named to ``eval()`` or on the command line gets the run's
settings there; a ``Model`` object built before ``eval()`` keeps its own config (Inspect's
log then records no system message either), and the run's message joins the track's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ContentText, get_model
from inspect_ai.solver import (
    Generate,
    Solver,
    TaskState,
    chain,
    solver,
    system_message,
)

from inspect_medreason.core.judges import bound_role_counts, refuse_bad_bindings
from inspect_medreason.core.prompts import (
    SHARED,
    PromptTemplate,
    context_block,
    format_options,
    load_template,
)
from inspect_medreason.core.rescored_images import mark_generated_here
from inspect_medreason.core.schema import sample_options

# The sample metadata key recording which system prompt the model was given.
SYSTEM_PROMPT_KEY = "system_prompt"
# Its value when the run's own --system-message replaced the task's.
RUN_SYSTEM_MESSAGE = "the run's --system-message"

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


def track_of(state: TaskState) -> str:
    return "mcq" if state.metadata.get("task_type", "open") == "mcq" else "open"


@solver
def medreason_prompt() -> Solver:
    """Ask for ``{"reasoning_trace", "answer"}`` in the track's format (MCQ: the option
    label; open: a concise answer), with the track's system prompt (or the run's
    ``--system-message`` in its place), then generate: two steps (the module's
    docstring says why)."""
    return chain(medreason_system_prompt(), medreason_ask())


@solver
def medreason_ask() -> Solver:
    """The track's user prompt in the text part of the user turn (its images untouched),
    then generate."""
    prompts = {track: TrackPrompts.load(track) for track in ("mcq", "open")}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        templates = prompts[track_of(state)]
        choices = [choice.value for choice in state.choices]
        text = render_case_prompt(templates.user, state.metadata, choices)
        if state.metadata.get("images_withheld"):
            text = BLIND_NOTICE + text
        replace_prompt_text(state, text)
        return await generate(state)

    return solve


@solver
def medreason_system_prompt() -> Solver:
    """The track's system prompt in front of the conversation, unless the run gives its
    own ``--system-message`` (``system_prompt_choice``)."""
    systems = {
        track: (templates.system.name, system_prompt(templates.system.text))
        for track in ("mcq", "open")
        for templates in [TrackPrompts.load(track)]
    }

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await system_prompt_choice(state, generate, systems[track_of(state)])

    return solve


def system_prompt(text: str) -> Solver:
    """Inspect's ``system_message()`` solver for a prompt given as text: its braces escaped,
    since ``system_message()`` fills ``{names}`` from sample metadata (a prompt's JSON
    example would otherwise be mangled, and a ``{question}`` filled in)."""
    return system_message(text.strip().replace("{", "{{").replace("}", "}}"))


async def system_prompt_choice(
    state: TaskState, generate: Generate, system: tuple[str, Solver] | None
) -> TaskState:
    """Put the task's system prompt (``(template name, system_prompt solver)``, None when
    the task has none) into the conversation, unless the run gives its own
    ``--system-message``: Inspect's model sends that one in front of every request, so the
    task's is left out (the run's replaces it, never joins it). The sample's metadata
    records which was used."""
    run_message = get_model().config.system_message
    if run_message:
        state.metadata[SYSTEM_PROMPT_KEY] = RUN_SYSTEM_MESSAGE
        return state
    if system is None:
        return state
    name, insert = system
    state.metadata[SYSTEM_PROMPT_KEY] = name
    return await insert(state, generate)


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


@functools.cache
def _system_prompt(name: str, family: str) -> Solver:
    return system_prompt(_template(name, family).text)


@solver
def template_prompt() -> Solver:
    """The prompt of a benchmark sample: the templates its metadata names
    (``prompt = {"system": name or None, "user": name, "values": {...}}``), rendered into
    the text part of the user turn, the system template as a system message (or the run's
    ``--system-message`` in its place); then generate. Two steps, as
    ``medreason_prompt``, and swappable with ``--solver`` like it."""
    return chain(template_system_prompt(), template_ask())


@solver
def template_ask() -> Solver:
    """The user template the sample names, in the text part of its user turn, then
    generate."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = state.metadata["prompt"]
        family = spec.get("family", SHARED)
        text = _template(spec["user"], family).render(**spec.get("values", {}))
        if state.metadata.get("images_withheld"):
            text = BLIND_NOTICE + text
        replace_prompt_text(state, text)
        return await generate(state)

    return solve


@solver
def template_system_prompt() -> Solver:
    """The system template the sample names (none: no system message), unless the run
    gives its own ``--system-message``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = state.metadata["prompt"]
        name = spec.get("system")
        family = spec.get("family", SHARED)
        system = (name, _system_prompt(name, family)) if name else None
        return await system_prompt_choice(state, generate, system)

    return solve


@solver
def judge_roles_check(roles: list[str], panels: bool) -> Solver:
    """Refuse a bad binding of the judge roles (``core.judges.refuse_bad_bindings``) before
    the model under test is called: a task's set-up step, so it runs first in every sample
    whichever way the eval was started (Python's ``eval()`` too, where the task is built
    before the roles are known). It also marks the sample as generated in this process, so
    its scorer knows it is not re-scoring (``core.rescored_images``)."""

    async def check(state: TaskState, generate: Generate) -> TaskState:
        refuse_bad_bindings(roles, bound_role_counts(), panels)
        mark_generated_here()
        return state

    return check
