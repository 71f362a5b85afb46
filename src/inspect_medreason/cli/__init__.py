"""The ``medreason`` command: it works on finished eval logs (leaderboards, comparisons,
judge agreement, the official submission) and is never imported by an evaluation family.

``main`` (``cli.main``) is the table of subcommands; each subcommand's module declares its
arguments beside its work (``add_parsers``): ``challenge`` and ``official`` the challenge's
submission and scoring contract, ``leaderboard``, ``comparison``, ``shift``, ``agreement``,
``rating_page``, ``calibration``, ``audit`` and ``sample_data`` the others;
``command_line`` what they share on the command line, ``log_reading`` reads logs.
"""

from inspect_medreason.cli.main import main

__all__ = ["main"]
