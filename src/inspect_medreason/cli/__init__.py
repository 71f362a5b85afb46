"""The ``medreason`` command: it works on finished eval logs (leaderboards, comparisons,
judge agreement, the official submission) and is never imported by an evaluation family.

``main`` (``cli.main``) is the table of subcommands; ``log_reading`` reads logs,
``challenge`` and ``official`` hold the challenge's submission and scoring contract,
``leaderboard``, ``comparison``, ``agreement`` and ``audit`` the subcommands' work.
"""

from inspect_medreason.cli.main import main

__all__ = ["main"]
