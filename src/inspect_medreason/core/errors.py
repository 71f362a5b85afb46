"""The user's mistakes, reported as one clear message instead of a traceback.

Inspect's command line prints its own set-up errors as a message alone, but the class it
uses for them lives in a private module, and any other exception raised while a task is
built prints a full traceback. So the plugin, when Inspect loads it, chains a handler in
front of the interpreter's exception hook that prints a ``UserInputError`` as its message
and exits non-zero, and hands every other exception to the hook that was there before
(Inspect's own, on its command line). Only the public ``sys.excepthook`` is used.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from pydantic import ValidationError

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]

# Inspect's own set-up errors (a missing API key, a missing model role) stop a run; code
# that otherwise turns a provider error into an unscored result must let them through.
INSPECT_SETUP_ERROR_NAME = "PrerequisiteError"


def invalid_fields(error: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """Each invalid field of a pydantic error, dotted (under ``prefix``; empty for the value
    itself), with why: never the offending value, which may be megabytes."""
    return [
        (
            ".".join([prefix, *map(str, problem["loc"])] if prefix else map(str, problem["loc"])),
            str(problem["msg"]),
        )
        for problem in error.errors(include_url=False, include_input=False)
    ]


def first_few(items: Sequence[str], shown: int, separator: str = ", ") -> str:
    """The first ``shown`` items joined, and how many more there are: a message stays short
    whatever the count."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return separator.join(items[:shown]) + more


def describe_error(error: BaseException, limit: int = 500) -> str:
    """An exception as ``Type: message`` on one line, bounded (a validation error can quote
    megabytes); a pydantic error as its invalid fields and why."""
    if isinstance(error, ValidationError):
        fields = [f"{field or '(root)'}: {why}" for field, why in invalid_fields(error)]
        text = f"{type(error).__name__}: {first_few(fields, 5, '; ')}"
    else:
        text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= limit else text[:limit] + "..."


class UserInputError(ValueError):
    """A mistake in what the user gave: data files, task arguments, templates, a dataset
    that cannot be reached. The message says what and how to fix it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class TaskArgumentError(UserInputError):
    """A ``-T``/``-S`` value the task or scorer cannot use."""


def is_setup_error(error: BaseException) -> bool:
    """Whether ``error`` must stop the run: ours, or Inspect's set-up error (recognised by
    its class name, since the class itself is not public)."""
    return isinstance(error, UserInputError) or any(
        cls.__name__ == INSPECT_SETUP_ERROR_NAME for cls in type(error).__mro__
    )


def user_error_hook(previous: ExceptHook) -> ExceptHook:
    """An exception hook printing a ``UserInputError`` as its message, else ``previous``."""

    def hook(
        kind: type[BaseException], error: BaseException, traceback: TracebackType | None
    ) -> None:
        if isinstance(error, UserInputError):
            print(f"\n{error.message}\n", file=sys.stderr)
            return
        previous(kind, error, traceback)

    hook.chained_user_error_hook = True  # type: ignore[attr-defined]
    return hook


def install_user_error_hook() -> None:
    """Chain ``user_error_hook`` in front of the current hook, once."""
    if not getattr(sys.excepthook, "chained_user_error_hook", False):
        sys.excepthook = user_error_hook(sys.excepthook)
