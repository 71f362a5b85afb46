"""Every subcommand's outputs are checked before any work and written together or not at
all: a read-only folder, a folder given as the output, a missing parent, a full disk, a
rename that fails midway, an output that is one of the inputs (by any spelling), two
outputs on one path. Each failure is one line naming the path and what to do, exit 1, no
traceback, and leaves every file as it was: no output replaced, no temporary file left."""

from __future__ import annotations

import errno
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json
from utils.rated_logs import judged_log, page_cases, ratings_document

from inspect_medreason.analysis import official
from inspect_medreason.cli import main, sample_data
from inspect_medreason.cli.command_line import caption_path
from inspect_medreason.core.files import OutputPathError, OutputSet

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_outputs")

# The module (the package's ``main`` attribute is the function).
main_module = importlib.import_module("inspect_medreason.cli.commands")

CASES = 32  # enough for calibrate's minimum of rated cases


@dataclass
class Command:
    name: str
    args: list[str]
    outputs: list[str]  # its output options, e.g. ["--output", "--zip"]
    inputs: list[Path]  # files it reads, each tried as an output
    folder: Path | None  # a folder it reads (an existing file inside it is an input)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A judged open-ended run, a rating page of it rated by one person, and the files the
    other subcommands read (its export and judge scores)."""
    root = tmp_path_factory.mktemp("outputs")
    log = judged_log(root, CASES)
    page = root / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", str(CASES)]) == 0
    html = page.read_text(encoding="utf-8")
    start = html.index(">", html.index('id="page-data"')) + 1
    page_id = json.loads(html[start : html.index("</script>", start)])["page_id"]
    alice = write_json(
        root / "alice.json", ratings_document(page_id, "alice", page_cases([log], page_id))
    )
    results, judge = root / "results.json", root / "judge_scores.json"
    assert main(["export", str(log), "--output", str(results)]) == 0
    assert main(["judge-scores", str(log), "--output", str(judge)]) == 0
    return {"root": root, "log": log, "alice": alice, "results": results, "judge": judge}


def commands(world: dict[str, Path]) -> dict[str, Command]:
    log, logs, data = world["log"], world["log"].parent, world["root"] / "data"
    truth = data / "ground_truth.json"
    every = [
        Command("export", [str(log)], ["--output", "--zip"], [log], logs),
        Command("judge-scores", [str(logs)], ["--output"], [log], logs),
        Command(
            "score",
            [
                *("--predictions", str(world["results"]), "--ground-truth", str(truth)),
                *("--judge-scores", str(world["judge"])),
            ],
            ["--output"],
            [world["results"], truth, world["judge"]],
            None,
        ),
        Command("leaderboard", [str(logs)], ["--output", "--plot"], [log], logs),
        Command("compare", [str(log), str(log)], ["--output", "--plot"], [log], logs),
        Command(
            "agreement",
            [str(logs), "--ratings", str(world["alice"])],
            ["--output", "--plot"],
            [log, world["alice"]],
            logs,
        ),
        Command("rate", [str(log), "--cases", "12"], ["--output"], [log], logs),
        Command(
            "calibrate",
            [str(log), "--ratings", str(world["alice"]), "--folds", "2"],
            ["--output", "--report"],
            [log, world["alice"]],
            logs,
        ),
        Command("check-data", [str(data)], ["--output"], [truth], data),
    ]
    return {command.name: command for command in every}


NAMES = [
    "export",
    "judge-scores",
    "score",
    "leaderboard",
    "compare",
    "agreement",
    "rate",
    "calibrate",
    "check-data",
]
# Their work takes seconds (bootstraps, cross-validation): checked in one slow test below,
# where the others' work is checked once per case.
SLOW_NAMES = ["agreement", "calibrate"]
QUICK_NAMES = [name for name in NAMES if name not in SLOW_NAMES]
CAPTIONED = {"compare", "shift"}  # commands whose figure has a caption file
FAULT_NAMES = ["read-only folder", "full disk", "rename fails"]


def snapshot(*folders: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under the folders."""
    found: dict[str, bytes | None] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            found[str(path)] = None if path.is_dir() else path.read_bytes()
    return found


def run(
    command: Command, outputs: list[Path], capsys: pytest.CaptureFixture[str], force: bool = True
) -> tuple[int, str]:
    argv = [command.name, *command.args]
    for option, path in zip(command.outputs, outputs, strict=True):
        argv += [option, str(path)]
    code = main(argv + (["--force"] if force else []))
    return code, capsys.readouterr().err


def assert_refused(code: int, err: str, command: Command, path: Path, reason: str) -> None:
    """Exit 1 and, as the last line, one line naming the path, why and what to do."""
    assert code == 1 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"medreason {command.name}: cannot write {path}: "), err
    assert reason in line and "; " in line.split(f"{path}: ", 1)[1], line


def old_outputs(tmp_path: Path, command: Command) -> list[Path]:
    """An existing file per output, each in its own folder (so a fault can hit one)."""
    outputs = []
    for number, option in enumerate(command.outputs):
        path = tmp_path / f"out{number}" / f"previous{option}.out"
        path.parent.mkdir()
        path.write_bytes(f"the previous {option}\n".encode())
        outputs.append(path)
    return outputs


@pytest.mark.parametrize("name", QUICK_NAMES)
def test_every_output_is_written_together_and_leaves_no_temporary_file(
    world: dict[str, Path], tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: the same outputs are written when nothing fails, missing folders
    created, and only the outputs are left."""
    command = commands(world)[name]
    outputs = [tmp_path / f"new{n}" / "deeper" / f"out{n}" for n in range(len(command.outputs))]
    code, err = run(command, outputs, capsys, force=False)
    assert code == 0, err
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    # a figure with a caption has it written beside it, as text (shift.caption.txt)
    captions = [
        caption_path(path)
        for path, option in zip(outputs, command.outputs, strict=True)
        if option == "--plot" and name in CAPTIONED
    ]
    expected = [*outputs, *captions]
    assert sorted(files) == sorted(expected) and all(p.stat().st_size > 0 for p in expected)


def _in_folder(path: str | bytes | os.PathLike[str] | int, folder: Path) -> bool:
    if isinstance(path, int):  # a descriptor: where it points
        path = os.readlink(f"/proc/self/fd/{path}")
    return Path(os.fsdecode(path)).parent == folder


def read_only(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Creating a file in ``folder`` is refused, as in a folder without write permission
    (chmod cannot stand in: the tests may run as root)."""
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and _in_folder(path, folder):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)


def full_disk(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Writing bytes to a file in ``folder`` fails as on a full disk (creating it does not,
    as on a real full disk, where an empty file still fits)."""
    real_write = os.write

    def failing_write(fd: int, data: Any) -> int:
        if _in_folder(fd, folder):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", failing_write)


def last_rename_fails(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Renaming into ``target`` fails (the others, before it, succeed)."""
    real_replace = os.replace

    def failing_replace(source: Any, destination: Any) -> None:
        if Path(destination) == target:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", failing_replace)


FAULTS: dict[str, tuple[Callable[[pytest.MonkeyPatch, Path], None], str]] = {
    "read-only folder": (read_only, "Permission denied"),
    "full disk": (full_disk, "No space left on device"),
}


@pytest.mark.parametrize("fault", FAULT_NAMES)
@pytest.mark.parametrize("name", QUICK_NAMES)
def test_a_failure_to_write_the_last_output_leaves_every_output_as_it_was(
    world: dict[str, Path],
    tmp_path: Path,
    name: str,
    fault: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The fault hits the last output only: the first (export's results.json beside its
    zip, a report beside its plot) is still the previous file."""
    command = commands(world)[name]
    outputs = old_outputs(tmp_path, command)
    before = snapshot(tmp_path, world["root"])
    if fault == "rename fails":
        last_rename_fails(monkeypatch, outputs[-1])
        reason = "Input/output error"
    else:
        inject, reason = FAULTS[fault]
        inject(monkeypatch, outputs[-1].parent)
    code, err = run(command, outputs, capsys)
    monkeypatch.undo()
    assert_refused(code, err, command, outputs[-1], reason)
    assert snapshot(tmp_path, world["root"]) == before


@pytest.mark.parametrize("name", QUICK_NAMES)
def test_a_full_disk_under_new_folders_removes_them(
    world: dict[str, Path],
    tmp_path: Path,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = commands(world)[name]
    outputs = [tmp_path / f"new{n}" / "deeper" / f"out{n}" for n in range(len(command.outputs))]
    full_disk(monkeypatch, outputs[-1].parent)
    code, err = run(command, outputs, capsys, force=False)
    monkeypatch.undo()
    assert_refused(code, err, command, outputs[-1], "No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_agreement_and_calibrate_write_together_too(
    world: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The three checks above for the two subcommands whose work takes seconds."""

    def fresh(*parts: str) -> Path:
        folder = tmp_path.joinpath(*parts)
        folder.mkdir(parents=True)
        return folder

    for name in SLOW_NAMES:
        test_every_output_is_written_together_and_leaves_no_temporary_file(
            world, fresh(name, "control"), name, capsys
        )
        for fault in FAULT_NAMES:
            with pytest.MonkeyPatch.context() as monkeypatch:
                test_a_failure_to_write_the_last_output_leaves_every_output_as_it_was(
                    world, fresh(name, fault), name, fault, monkeypatch, capsys
                )
        with pytest.MonkeyPatch.context() as monkeypatch:
            test_a_full_disk_under_new_folders_removes_them(
                world, fresh(name, "new folders"), name, monkeypatch, capsys
            )


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_output_path_is_refused_before_any_work(
    world: dict[str, Path],
    tmp_path: Path,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A folder, a path under a file, an existing file without --force, each output in
    turn: refused before the command reads anything (its reading is made to fail loudly)."""
    command = commands(world)[name]
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    before = snapshot(tmp_path, world["root"])

    def no_work(*_: Any, **__: Any) -> Any:
        raise AssertionError("the command did work before refusing its output")

    # each subcommand's module reads its logs itself
    for module in (
        "analysis.export",
        "analysis.leaderboard",
        "analysis.comparison",
        "analysis.shift",
        "analysis.agreement",
        "rating.page",
        "analysis.calibration",
    ):
        monkeypatch.setattr(f"inspect_medreason.{module}.log_files", no_work)
    monkeypatch.setattr(official, "read_json", no_work)
    monkeypatch.setattr("inspect_medreason.cli.check_data.audit_data", no_work)
    for index in range(len(command.outputs)):
        fine = [tmp_path / f"fine{n}" for n in range(len(command.outputs))]
        for bad, force, reason in [
            (tmp_path, True, "it is a folder"),
            (a_file / "report", True, f"{a_file} is a file, not a folder"),
            (a_file, False, "it exists; pass --force"),
        ]:
            outputs = [*fine[:index], bad, *fine[index + 1 :]]
            code, err = run(command, outputs, capsys, force=force)
            assert_refused(code, err, command, bad, reason)
    assert snapshot(tmp_path, world["root"]) == before


@pytest.mark.parametrize("name", NAMES)
def test_an_input_is_never_an_output_by_any_spelling_even_with_force(
    world: dict[str, Path],
    tmp_path: Path,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = commands(world)[name]
    link = tmp_path / "link"
    link.symlink_to(command.inputs[0])
    monkeypatch.chdir(command.inputs[0].parent)
    before = snapshot(world["root"])
    spellings = [
        *command.inputs,
        Path(".") / command.inputs[0].name,  # ./input
        command.inputs[0].parent / ".." / command.inputs[0].parent.name / command.inputs[0].name,
        link,  # a symbolic link to it
    ]
    if command.folder is not None:
        # an existing file inside a folder the command reads (a log of the folder it ranks)
        spellings.append(next(p for p in sorted(command.folder.rglob("*")) if p.is_file()))
    for index in range(len(command.outputs)):
        for spelling in spellings:
            outputs = [tmp_path / f"fine{n}" for n in range(len(command.outputs))]
            outputs[index] = spelling
            code, err = run(command, outputs, capsys)
            # "one of the command's inputs" or "inside the input folder", as it was given
            assert_refused(code, err, command, spelling, "input")
            assert "--force never overwrites an input" in err
    assert snapshot(world["root"]) == before


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("judge-scores", "score")])
def test_two_outputs_on_one_path_are_refused(
    world: dict[str, Path], tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    command = commands(world)[name]
    if len(command.outputs) < 2:
        pytest.skip(f"{name} has one output")
    same = tmp_path / "same"
    for second in (same, tmp_path / "." / "same"):
        code, err = run(command, [same, second], capsys)
        assert_refused(code, err, command, second, "also given as another output")
    assert list(tmp_path.iterdir()) == []


def test_sample_data_checks_its_folder_first_and_leaves_nothing_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    target = tmp_path / "new" / "demo"
    read_only(monkeypatch, tmp_path)
    assert main(["sample-data", str(target)]) == 1
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert err.startswith(f"medreason sample-data: cannot write {target}: Permission denied; ")
    assert main(["sample-data", str(a_file / "demo")]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err
    # a full disk midway through the copy: neither the copy nor the folders made for it stay
    real_copy = sample_data.shutil.copy2
    copied: list[str] = []

    def copy_then_fill_the_disk(source: Any, destination: Any, **kwargs: Any) -> Any:
        if copied:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(destination))
        copied.append(str(destination))
        return real_copy(source, destination, **kwargs)

    monkeypatch.setattr(sample_data.shutil, "copy2", copy_then_fill_the_disk)
    assert main(["sample-data", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"medreason sample-data: cannot write {target}: No space left")
    assert "Traceback" not in err and copied
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_a_file_size_limit_is_a_message_and_leaves_the_old_file(tmp_path: Path) -> None:
    """A real write failure, not a stand-in: the process may write no file over 64 bytes
    (RLIMIT_FSIZE; Python ignores SIGXFSZ, so the write fails with EFBIG)."""
    predictions = [{"case_id": f"c{n}", "task_type": "mcq", "answer": "A"} for n in range(20)]
    write_json(tmp_path / "p.json", predictions)
    write_json(tmp_path / "g.json", predictions)
    output = tmp_path / "metrics.json"
    output.write_text("the previous result\n")
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))\n"
        "from inspect_medreason.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    finished = subprocess.run(
        [
            *(sys.executable, "-c", script, "score", "--predictions", str(tmp_path / "p.json")),
            *("--ground-truth", str(tmp_path / "g.json"), "--output", str(output), "--force"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 1, finished.stderr
    assert finished.stderr.startswith(f"medreason score: cannot write {output}: File too large; ")
    assert output.read_text() == "the previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "metrics.json", "p.json"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_real_read_only_folder_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "metrics.json").write_text("old")
    folder.chmod(0o555)
    try:
        code = main(
            [
                *("score", "--predictions", "p.json", "--ground-truth", "g.json"),
                *("--output", str(folder / "metrics.json"), "--force"),
            ]
        )
    finally:
        folder.chmod(0o755)
    assert code == 1 and "Permission denied" in capsys.readouterr().err
    assert (folder / "metrics.json").read_text() == "old"


def test_a_later_rename_failing_puts_back_the_outputs_already_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set stays consistent: the first output, already renamed into place, is restored
    from its backup; a new output made before the failure is removed."""
    first, second, third = (tmp_path / name for name in ("a.json", "b.png", "c.md"))
    first.write_text("old a")
    second.write_text("old b")
    outputs = OutputSet(force=True)
    for path in (first, third, second):
        outputs.add(path)
    last_rename_fails(monkeypatch, second)
    with pytest.raises(OutputPathError, match=f"cannot write {second}: Input/output error"):
        outputs.write({first: "new a", third: "new c", second: b"new b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.png"]
    assert first.read_text() == "old a" and second.read_text() == "old b"


def test_outputs_not_checked_first_are_a_programming_error(tmp_path: Path) -> None:
    outputs = OutputSet(force=False)
    outputs.add(tmp_path / "checked")
    with pytest.raises(ValueError, match="not the ones checked"):
        outputs.write({tmp_path / "unchecked": "x"})
    assert list(tmp_path.iterdir()) == []


def test_every_output_option_says_outputs_are_written_together() -> None:
    parser = main_module.build_parser()
    subcommands = parser._subparsers._group_actions[0].choices
    options = [
        (name, action.dest)
        for name, sub in subcommands.items()
        for action in sub._actions
        if action.dest in ("output", "zip", "plot", "report")
    ]
    assert len(options) == 16  # shift: --output and --plot
    for name, dest in options:
        help_text = subcommands[name]._option_string_actions[f"--{dest}"].help or ""
        assert "written together" in help_text, (name, dest)


def test_a_file_system_error_left_unhandled_is_one_line_but_a_bug_is_loud(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing_disk(*_: Any) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/data/cases.json")

    monkeypatch.setattr("inspect_medreason.cli.official.cmd_validate", failing_disk)
    assert main(["validate", "x.json"]) == 1
    assert capsys.readouterr().err == (
        "medreason validate: cannot use /data/cases.json: Input/output error; check the path "
        "and its folder, then run again\n"
    )

    def bug(*_: Any) -> int:
        raise KeyError("a programming error")

    monkeypatch.setattr("inspect_medreason.cli.official.cmd_validate", bug)
    with pytest.raises(KeyError):
        main(["validate", "x.json"])


def test_a_device_or_a_pipe_is_never_replaced_even_with_force(tmp_path: Path) -> None:
    """`--output /dev/null --force` once put a regular file in place of the machine's
    /dev/null: an output is renamed over its target, so a target that is not a regular file
    is refused before any work, whatever --force says."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for target in (Path(os.devnull), pipe):
        for force in (False, True):
            with pytest.raises(OutputPathError, match="not a regular file"):
                OutputSet(force).add(target)
    assert Path(os.devnull).is_char_device()
    assert pipe.is_fifo()
