"""The user's mistakes, reported as one clear message instead of a traceback.

A ``UserInputError`` is a ``click.ClickException``: Inspect's command line (a click program)
prints it as ``Error: <message>`` and exits 1, as it does its own usage errors, and the
``medreason`` command prints it alone. Nothing is installed in the process: the exception
carries how it is shown, so no hook is chained into another program's ``sys.excepthook``.
"""

from __future__ import annotations

from collections.abc import Sequence

import click
from pydantic import ValidationError

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


class UserInputError(click.ClickException, ValueError):
    """A mistake in what the user gave: data files, task arguments, templates, a dataset
    that cannot be reached. The message says what and how to fix it (``message``)."""


class TaskArgumentError(UserInputError):
    """A ``-T``/``-S`` value the task or scorer cannot use."""


def is_setup_error(error: BaseException) -> bool:
    """Whether ``error`` must stop the run: ours, or Inspect's set-up error (recognised by
    its class name, since the class itself is not public)."""
    return isinstance(error, UserInputError) or any(
        cls.__name__ == INSPECT_SETUP_ERROR_NAME for cls in type(error).__mro__
    )
