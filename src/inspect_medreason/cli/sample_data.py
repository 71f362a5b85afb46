"""``medreason sample-data``: the shipped demo dataset (cases.json, ground_truth.json,
images/) copied into a new or empty folder, all or nothing; the command's arguments and what
it prints."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.cli.command_line import EXIT_OK, Subcommands
from inspect_medreason.core.files import (
    cannot_write,
    check_writable_folder,
    claim_output,
    fill_folder_atomically,
    output_path,
    resolve_output,
    written,
)
from inspect_medreason.core.loaders import sample_data_dir


def add_parsers(commands: Subcommands) -> None:
    """``sample-data``: its arguments and the function that runs it."""
    sample = commands.add_parser(
        "sample-data",
        help="write the shipped demo dataset to a folder",
        description="Copy the demo dataset (cases.json, ground_truth.json, images/) to a new "
        "or empty folder, to see the format and start from it.",
    )
    sample.add_argument(
        "directory",
        help="the new or empty folder to write; checked before copying, and removed again "
        "with any folder made for it if the copy fails",
    )
    sample.set_defaults(handler=cmd_sample_data)


def _copy_demo_data(staging: Path) -> None:
    """The shipped demo data (not its code) into ``staging``, file by file: unlike
    ``shutil.copytree``, which gathers failures into one ``shutil.Error`` without their
    errno, the first failure (a full disk) is raised as itself, to be named as such."""
    source = sample_data_dir()
    for item in sorted(source.rglob("*")):
        relative = item.relative_to(source)
        if "__pycache__" in relative.parts or item.suffix == ".py":
            continue
        if item.is_dir():
            (staging / relative).mkdir(exist_ok=True)
        else:
            shutil.copy2(item, staging / relative)


def cmd_sample_data(args: argparse.Namespace) -> int:
    target = output_path(args.directory.rstrip("/") or args.directory)
    resolve_output(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise AnalysisError([f"{target} exists and is not an empty folder; choose a new folder"])
    check_writable_folder(target)
    # Copied beside the target and renamed into place: an interrupted or failed copy (a full
    # disk) leaves nothing, neither the copy nor the folders made for it.
    claim_output(target)
    try:
        fill_folder_atomically(target, _copy_demo_data)
    except OSError as error:
        raise cannot_write(target, error) from error
    written(target)
    count = len(json.loads((target / "cases.json").read_text(encoding="utf-8"))["cases"])
    print(
        f"wrote the demo dataset ({count} cases) to {target}: cases.json, ground_truth.json, images/"
    )
    print(
        f"try: inspect eval inspect_medreason/mcq --model medreason/pipeline-check -T data={target}"
    )
    return EXIT_OK
