"""The user's mistakes, reported as one clear message instead of a traceback.

Inspect's command line prints a ``PrerequisiteError`` as its message alone and exits
non-zero; any other exception raised while a task is built prints a full traceback. That
class lives in a private module and Inspect offers no public equivalent, so this is the
one place the package reaches into ``inspect_ai._util``: a guarded import, falling back to a
plain exception (a traceback, but the same message) should a later Inspect move it. Users
are better served by a clean message for a typo in their data than by the purity of the
import; every other module uses the public API only.
"""

from __future__ import annotations

try:
    from inspect_ai._util.error import PrerequisiteError as _CleanlyPrinted
except ImportError:  # pragma: no cover - a future Inspect without the class
    _CleanlyPrinted = Exception  # type: ignore[misc,assignment]


# Inspect raises this class itself for set-up errors (a missing API key, a missing role):
# code that must let those stop the run catches it under this name.
SetupError = _CleanlyPrinted


class UserInputError(_CleanlyPrinted, ValueError):
    """A mistake in what the user gave: data files, task arguments, templates, a dataset
    that cannot be reached. The message says what and how to fix it."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = message
        self.text = message

    def __str__(self) -> str:
        return self.text


class TaskArgumentError(UserInputError):
    """A ``-T``/``-S`` value the task or scorer cannot use."""
