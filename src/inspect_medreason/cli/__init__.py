"""The ``medreason`` command: the shell over the analyses of finished eval logs
(``inspect_medreason.analysis``) and the rating round (``inspect_medreason.rating``). It
parses arguments, prints and writes the outputs; the work is the libraries'. It is never
imported by an evaluation family, an analysis or the rating package.

``commands`` is the table of subcommands and its ``main``; ``command_line`` is what the
subcommands share on the command line (exit codes, output options), ``markdown`` and
``progress`` their printing, ``check_data`` and ``sample_data`` the data folder's commands.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``medreason`` command (its console entry point). The table of subcommands is
    imported when the command runs, so that importing one module of this package (a
    subcommand's shell, say) does not import every analysis."""
    from inspect_medreason.cli.commands import main as run_command

    return run_command(argv)


__all__ = ["main"]
