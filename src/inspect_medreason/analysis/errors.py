"""The one error the analyses raise for what a user gave them (logs, ratings, files): every
problem found, each a line naming the file, case and field, and how to fix it. The
``medreason`` command prints it as its error; a notebook catches it."""

from __future__ import annotations

__all__ = [
    "AnalysisError",
]


class AnalysisError(ValueError):
    """A refusal, with every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(f"  - {problem}" for problem in problems))
