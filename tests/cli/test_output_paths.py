"""Output paths with a defined outcome (docs/medreason_command.md#output-paths): a loop of
symbolic links is refused in one line, a path ending in ``/`` names a folder and is
refused, ``-`` is standard output where the command prints its output when the option is
not given and refused elsewhere, and created folders follow the umask."""

from __future__ import annotations

import argparse
import json
import os
import stat
from pathlib import Path

import pytest
from conftest import write_json

from inspect_medreason.cli import main
from inspect_medreason.cli.commands import build_parser


def score_arguments(tmp_path: Path) -> list[str]:
    write_json(tmp_path / "p.json", [{"case_id": "a", "task_type": "mcq", "answer": "A"}])
    write_json(tmp_path / "g.json", [{"case_id": "a", "task_type": "mcq", "answer": "A"}])
    predictions, truth = str(tmp_path / "p.json"), str(tmp_path / "g.json")
    return ["score", "--predictions", predictions, "--ground-truth", truth]


def test_a_symlink_loop_as_output_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for target in (loop, tmp_path / "a", tmp_path / "a" / "inside.json"):
        assert main([*score_arguments(tmp_path), "--output", str(target), "--force"]) == 1
        error = capsys.readouterr().err
        assert error == (
            f"medreason score: cannot write {target}: the path has a loop of symbolic links; "
            "correct it\n"
        )
    assert loop.is_symlink() and os.readlink(loop) == str(loop)  # not replaced


def test_a_trailing_slash_names_a_folder_and_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = f"{tmp_path / 'out'}/"
    assert main([*score_arguments(tmp_path), "--output", target]) == 1
    assert "a path ending in / names a folder; name a file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_dash_is_stdout_where_the_command_prints_and_refused_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*score_arguments(tmp_path), "--output", "-"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed)["counts"]["num_cases"] == 1
    assert not Path("-").exists() and not (tmp_path / "-").exists()
    # judge-scores must write its file: "-" is refused before anything is read
    code = main(["judge-scores", str(tmp_path / "absent.eval"), "--output", "-"])
    assert code == 1
    assert "cannot write -: this output is not printed to standard output; name a file" in (
        capsys.readouterr().err
    )
    assert not Path("-").exists()


# The outputs printed to standard output when left out, where "-" is standard output too
# (docs/medreason_command.md#output-paths).
DASH_IS_STDOUT = {
    ("score", "output"),
    ("shift", "output"),
    ("leaderboard", "output"),
    ("compare", "output"),
    ("agreement", "output"),
    ("check-data", "output"),
    ("calibrate", "report"),
}


def test_each_subcommand_declares_which_of_its_outputs_take_a_dash_as_stdout() -> None:
    """Every output option of every subcommand, parsed with "-": left out (printed) exactly
    for the documented ones; every other keeps "-", which the output check refuses."""
    parser = build_parser()
    [subcommands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    seen: set[tuple[str, str]] = set()
    for name, sub in subcommands.choices.items():
        for action in sub._actions:
            if action.dest not in ("output", "zip", "plot", "report"):
                continue
            seen.add((name, action.dest))
            value = action.type("-") if callable(action.type) else "-"
            assert value == (None if (name, action.dest) in DASH_IS_STDOUT else "-"), (
                name,
                action.dest,
            )
    assert DASH_IS_STDOUT.issubset(seen) and len(seen) == 16


def test_created_folders_follow_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        target = tmp_path / "made" / "deeper" / "m.json"
        assert main([*score_arguments(tmp_path), "--output", str(target)]) == 0
        assert main(["sample-data", str(tmp_path / "demo")]) == 0
    finally:
        os.umask(previous)
    for folder in (tmp_path / "made", tmp_path / "made" / "deeper", tmp_path / "demo"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o750, folder
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
