"""Re-scoring never writes into a log an image the log did not hold.

During an eval Inspect applies ``--no-log-images`` to every event it writes, the judges'
included. ``inspect score`` (and Python's ``score()``) has no such switch: it writes the
new judge events with their images, whatever the run chose. A log written with
``--no-log-images`` (or a blind control, whose model was shown no image) holds none, so a
vision judge re-scoring it is sent images read again from the data folder, and without
this step those images would land in the re-scored log (docs/inspect_notes.md).

So a judged task marks each sample's transcript as generated in this process (its set-up
step, which runs first in every sample), and a scorer judging a sample whose transcript is
not so marked, a re-score, puts a placeholder in place of each image it was sent that the
sample's input does not hold, in the new judge events (their input and any raw call
Inspect kept). Images the input holds (a log written with images) are left: they are in
the log already. The judges are sent the real images either way.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import Transcript, transcript
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage
from inspect_ai.solver import TaskState

# What a judge event holds in place of an image read from the data folder for a re-score.
RESCORED_IMAGE_PLACEHOLDER = "<image read from the data folder to re-score: not logged>"
ATTACHMENT = "attachment://"

_GENERATED_HERE: weakref.WeakSet[Transcript] = weakref.WeakSet()


def mark_generated_here() -> None:
    """Record that the current sample is being generated in this process (not re-scored)."""
    _GENERATED_HERE.add(transcript())


def is_rescoring() -> bool:
    """Whether the current sample is scored from a log rather than generated here."""
    return transcript() not in _GENERATED_HERE


def input_images(state: TaskState) -> list[str]:
    """The images the sample's input holds, in order (data URIs, or the placeholders of a
    log written without them)."""
    return [
        content.image
        for message in (state.input if isinstance(state.input, list) else [])
        if isinstance(message, ChatMessageUser) and not isinstance(message.content, str)
        for content in message.content
        if isinstance(content, ContentImage)
    ]


@contextmanager
def rescored_images_unlogged(state: TaskState, sent: Sequence[str]) -> Iterator[None]:
    """Around a scorer's judge calls: when re-scoring, the images in ``sent`` that the
    sample's input does not hold are replaced by a placeholder in the judge events the
    calls add."""
    unlogged = set(sent) - set(input_images(state))
    if not unlogged or not is_rescoring():
        yield
        return
    record = transcript()
    start = len(record.events)
    try:
        yield
    finally:
        for event in list(record.events)[start:]:
            if isinstance(event, ModelEvent):
                scrub_model_event(event, unlogged, record.attachments)


def scrub_model_event(event: ModelEvent, unlogged: set[str], attachments: dict[str, str]) -> None:
    """Put the placeholder in place of each ``unlogged`` image in a model event."""
    event.input = [scrub_message(message, unlogged) for message in event.input]
    if event.call is not None:
        payloads = (*unlogged, *(uri.split(",", 1)[1] for uri in unlogged if "," in uri))
        event.call.request = scrub_json(event.call.request, payloads, attachments)


def scrub_message(message: ChatMessage, unlogged: set[str]) -> ChatMessage:
    if isinstance(message.content, str) or not any(
        isinstance(part, ContentImage) and part.image in unlogged for part in message.content
    ):
        return message
    content = [
        part.model_copy(update={"image": RESCORED_IMAGE_PLACEHOLDER})
        if isinstance(part, ContentImage) and part.image in unlogged
        else part
        for part in message.content
    ]
    return message.model_copy(update={"content": content})


def scrub_json(value: Any, payloads: tuple[str, ...], attachments: dict[str, str]) -> Any:
    """A raw request with each string holding an unlogged image (itself, its base64 payload,
    or an attachment of Inspect's holding either) replaced by the placeholder."""
    if isinstance(value, str):
        text = (
            attachments.get(value[len(ATTACHMENT) :], value)
            if value.startswith(ATTACHMENT)
            else value
        )
        return RESCORED_IMAGE_PLACEHOLDER if any(p in text for p in payloads) else value
    if isinstance(value, list):
        return [scrub_json(item, payloads, attachments) for item in value]
    if isinstance(value, dict):
        return {key: scrub_json(item, payloads, attachments) for key, item in value.items()}
    return value
