"""What the ``medreason`` subcommands share on the command line: the exit codes, the help
endings of options that read or write a file, ``-`` as standard output, the argument types,
the report options (``--format``, ``--output``, ``--plot``, ``--force``) and their writing,
and the printing of problems and notes. Each subcommand declares its own arguments beside
its code (an ``add_parsers`` in its module); ``cli/commands.py`` lists the subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from inspect_medreason.core.files import OutputSet
from inspect_medreason.core.user_files import (
    MAX_CALIBRATION_BYTES,
    MAX_DATA_BYTES,
    MAX_RATINGS_BYTES,
    describe_limit,
)

# What ``add_subparsers`` returns: each subcommand's module adds its parsers to it.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# (a usage error exits with 2 from argparse itself)
EXIT_OK, EXIT_FAILED = 0, 1

# End the help of every option that reads a file: the limits of core.user_files (a regular
# file, never a FIFO or a device, of at most this size), stated in docs/medreason_command.md.
DATA_FILE = f"; a regular file of at most {describe_limit(MAX_DATA_BYTES)}"
RATINGS_FILE = f"; each a regular file of at most {describe_limit(MAX_RATINGS_BYTES)}"
CALIBRATION_FILE = f"; a regular file of at most {describe_limit(MAX_CALIBRATION_BYTES)}"

# Ends the help of every output option: the rule docs/medreason_command.md states.
TOGETHER = (
    "; checked before any work, and written together with the command's other outputs at "
    "the end: all or none"
)


def printed_output(text: str) -> str | None:
    """The type of an output the command prints when the option is left out: there ``-`` is
    standard output, as if left out. Every other output keeps ``-``, which
    ``core.files.output_path`` refuses: the command never writes a file named ``-``."""
    return None if text == "-" else text


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or value > 100_000:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 1 to 100000")
    return value


def non_negative_int(text: str) -> int:
    """An image size for ``rate --max-image-px``: 0 (off) or 64 to 65535 pixels."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value != 0 and not 64 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: give 0 (as logged) or 64 to 65535 pixels")
    return value


def add_report_arguments(
    parser: argparse.ArgumentParser, formats: list[str], output: str, plot: str
) -> None:
    """``--format`` (the first of ``formats`` by default), ``--output`` (the report, printed
    when left out or given as ``-``), ``--plot`` and ``--force``: written by :func:`emit`."""
    parser.add_argument("--format", choices=formats, default=formats[0])
    parser.add_argument("--output", type=printed_output, help=output + TOGETHER)
    parser.add_argument("--plot", help=plot + TOGETHER)
    parser.add_argument("--force", action="store_true", help="overwrite output files")


def check_outputs(args: argparse.Namespace, inputs: list[str | None]) -> OutputSet:
    """Refuse a bad output path before reading anything: a refusal writes nothing."""
    outputs = OutputSet(args.force, inputs)
    for target in (args.output, args.plot):
        if target:
            outputs.add(target)
    return outputs


def caption_path(plot: str | Path) -> Path:
    """Where a figure's caption is written: beside it, ``shift.png`` -> ``shift.caption.txt``."""
    path = Path(plot)
    return path.with_name(f"{path.stem}.caption.txt")


def claim_caption(args: argparse.Namespace, outputs: OutputSet) -> None:
    """Claim the caption file beside --plot (checked with the other outputs, before work)."""
    if args.plot:
        outputs.add(caption_path(args.plot))


def emit(
    args: argparse.Namespace,
    outputs: OutputSet,
    output: str,
    plot_png: Callable[[], bytes],
    plot_caption: Callable[[], str] | None = None,
) -> None:
    """The report to --output or stdout and the plot to --plot (with its caption as text
    beside it, when the figure has one: a caption is never drawn into the image), together:
    the plot is rendered before anything is written, and the files are written all or none."""
    files: dict[Path, bytes | str] = {}
    if args.plot:
        files[Path(args.plot)] = plot_png()
        if plot_caption is not None:
            files[caption_path(args.plot)] = plot_caption() + "\n"
    if args.output:
        files[Path(args.output)] = output
    print_notes(outputs.write(files))
    if not args.output:
        print(output, end="" if output.endswith("\n") else "\n")
    for target in (args.output, args.plot):
        if target:
            print(f"wrote {target}", file=sys.stderr)
    if args.plot and plot_caption is not None:
        print(f"wrote {caption_path(args.plot)} (the figure's caption)", file=sys.stderr)


def print_problems(title: str, problems: list[str]) -> None:
    print(f"{title} ({len(problems)}):", file=sys.stderr)
    for problem in problems:
        print(f"  - {problem}", file=sys.stderr)


def print_notes(notes: list[str]) -> None:
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
