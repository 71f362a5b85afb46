"""The ``medreason`` command: the table of its subcommands, ``main`` and its error handling.

Each subcommand is a shell over a library (``inspect_medreason.analysis``, or
``inspect_medreason.rating`` for ``rate``) in a module of its own that declares its
arguments (``add_parsers``): ``export`` (export, judge-scores), ``official`` (score,
validate), ``leaderboard``, ``compare``, ``shift``, ``agreement``, ``rate``, ``calibrate``,
``check_data`` and ``sample_data``; what they share (exit codes, help endings, ``-`` as
standard output, report options) is ``cli/command_line.py``. No module of a subcommand
imports this one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.logs import MAX_ENTRY_BYTES
from inspect_medreason.cli import (
    agreement,
    calibrate,
    check_data,
    compare,
    export,
    leaderboard,
    official,
    rate,
    sample_data,
    shift,
)
from inspect_medreason.cli.command_line import EXIT_FAILED, Subcommands
from inspect_medreason.core.files import (
    OutputPathError,
    ignore_interruptions,
    interruptions_raise,
    pending_outputs,
    remedy,
    signal_name,
    signal_number,
)
from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.core.user_files import MAX_JSON_LOG_BYTES, describe_limit

# The subcommands, in the order ``medreason --help`` lists them: each module adds its own.
SUBCOMMANDS: tuple[Callable[[Subcommands], None], ...] = (
    export.add_parsers,  # export, judge-scores
    official.add_parsers,  # score, validate
    leaderboard.add_parsers,
    compare.add_parsers,
    shift.add_parsers,
    agreement.add_parsers,
    rate.add_parsers,
    calibrate.add_parsers,
    check_data.add_parsers,
    sample_data.add_parsers,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="medreason",
        description="MedReason 2026 challenge workflow around Inspect eval logs. Every file "
        "it reads must be a regular file (a FIFO or a device is refused): an eval log named "
        f"or found in a folder (a .json log at most {describe_limit(MAX_JSON_LOG_BYTES)}, "
        f"each entry of a .eval log at most {describe_limit(MAX_ENTRY_BYTES)}); the limit of "
        "every other file is in its option's help.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_parsers in SUBCOMMANDS:
        add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with interruptions_raise():
            try:
                return int(args.handler(args))
            except KeyboardInterrupt as interruption:
                ignore_interruptions()  # a second Ctrl-C does not cut the message short
                return _interrupted(args.command, interruption)
    except OutputPathError as error:  # already one line naming the path and what to do
        print(f"medreason {args.command}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except (AnalysisError, DatasetError) as error:
        print(f"medreason {args.command}: error:\n{error}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as error:
        # A failure of the file system (or the network under it) that no reader turned into
        # its own message: still one line, naming the path when the error carries one. Any
        # other exception is a bug and keeps its traceback.
        print(f"medreason {args.command}: {_describe_os_error(error)}", file=sys.stderr)
        return EXIT_FAILED


def _interrupted(command: str, interruption: KeyboardInterrupt) -> int:
    """Ctrl-C, SIGTERM, SIGHUP: every write's clean-up has run; one line, no traceback."""
    unwritten = pending_outputs()
    what = (
        f"not written: {', '.join(map(str, unwritten))} (any previous version is as it was, "
        "and no temporary file is left)"
        if unwritten
        else "nothing was being written"
    )
    print(
        f"medreason {command}: interrupted by {signal_name(interruption)}; {what}",
        file=sys.stderr,
    )
    return 128 + signal_number(interruption)


def _describe_os_error(error: OSError) -> str:
    reason = error.strerror or str(error) or type(error).__name__
    paths = " -> ".join(str(p) for p in (error.filename, error.filename2) if p is not None)
    if paths:
        return f"cannot use {paths}: {reason}; {remedy(error)}"
    return f"{reason}; check the files and folders given and run again"
