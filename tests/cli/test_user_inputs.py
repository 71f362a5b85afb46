"""Every file the ``medreason`` command reads is a regular file under its stated limit: a
FIFO, a link to a device or an oversized file named to any option is refused at once, in
one line naming it; and a run that did not finish gives ``judge-scores`` nothing."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log
from utils.rated_logs import judged_log

from inspect_medreason.cli import main
from inspect_medreason.cli.commands import build_parser
from inspect_medreason.core import user_files

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_user_inputs")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")


@pytest.fixture(autouse=True)
def never_blocks() -> Iterator[None]:
    """A command that blocks on a file fails the test after 20 s instead of hanging."""

    def expire(*_: object) -> None:
        raise TimeoutError("the command blocked reading a user file")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A real judged log, valid files for every other argument, a FIFO and a link to
    /dev/zero."""
    folder = tmp_path_factory.mktemp("inputs")
    log = judged_log(folder, 3)
    valid = folder / "valid.json"
    valid.write_text('{"scores": []}', encoding="utf-8")
    fifo = folder / "fifo.json"
    os.mkfifo(fifo)
    fifo_zip = folder / "fifo.zip"
    os.mkfifo(fifo_zip)
    fifo_log = folder / "fifo.eval"
    os.mkfifo(fifo_log)
    zero = folder / "zero.json"
    zero.symlink_to("/dev/zero")
    return {
        "log": str(log),
        "valid": str(valid),
        "fifo": str(fifo),
        "fifo_zip": str(fifo_zip),
        "fifo_log": str(fifo_log),
        "zero": str(zero),
        "out": str(folder / "out.json"),
        "data": str(folder / "data"),
    }


# Every option that reads a user file, with {bad} where the hostile file goes.
READERS = [
    "score --predictions {bad} --ground-truth {valid}",
    "score --predictions {valid} --ground-truth {bad}",
    "score --predictions {valid} --ground-truth {valid} --judge-scores {bad}",
    "validate {bad}",
    "validate {bad_zip}",
    "validate {valid} --cases {bad}",
    "export {log} --output {out} --cases {bad}",
    "agreement {log} --reference {bad}",
    "agreement {log} --ratings {bad}",
    "calibrate {log} --ratings {bad} --output {out}",
    "leaderboard {log} --calibration {bad}",
    "compare {log} {log} --calibration {bad}",
    "compare {bad_log} {log}",
    "compare {log} {bad_log}",
    "judge-scores {bad_log} --output {out}",
    "agreement {bad_log}",
    "check-data {bad}",
]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("command", READERS)
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_a_link_to_dev_zero_is_refused_at_once(
    command: str, kind: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = files[kind]
    argv = command.format(
        bad=hostile,
        bad_zip=files["fifo_zip"] if kind == "fifo" else hostile,
        bad_log=files["fifo_log"] if kind == "fifo" else hostile,
        **{k: v for k, v in files.items() if k != "bad"},
    ).split()
    assert main(argv) != 0
    err = capsys.readouterr().err
    named = [line for line in err.splitlines() if "fifo" in line or "zero.json" in line]
    assert named, err
    assert any(word in line for line in named for word in ("FIFO", "device", "not a file")), err
    assert "Traceback" not in err
    assert not Path(files["out"]).exists()


def test_an_oversized_file_is_refused_with_the_limit(
    files: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    big = tmp_path / "calibration.json"
    big.write_bytes(b" " * (user_files.MAX_CALIBRATION_BYTES + 1))
    assert main(["leaderboard", files["log"], "--calibration", str(big)]) != 0
    assert "larger than the 1 MiB limit for this file" in capsys.readouterr().err
    # The data files' limit, lowered so that the test writes little (read where it is used).
    monkeypatch.setattr("inspect_medreason.analysis.official.MAX_DATA_BYTES", 100)
    predictions = tmp_path / "results.json"
    predictions.write_text(json.dumps({"answers": [{"case_id": "x" * 200}]}), encoding="utf-8")
    argv = ["score", "--predictions", str(predictions), "--ground-truth", files["valid"]]
    assert main(argv) != 0
    assert "larger than the 100 bytes limit for this file" in capsys.readouterr().err


def test_the_help_states_each_files_limit() -> None:
    """The limits are stated where the options are: in each one's --help."""
    parser = build_parser()
    [subcommands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    commands: dict[str, argparse.ArgumentParser] = subcommands.choices
    helps = {
        (name, action.dest): action.help or ""
        for name, sub in commands.items()
        for action in sub._actions
    }
    data = f"{user_files.MAX_DATA_BYTES // user_files.MIB} MiB"
    for key in [
        ("score", "predictions"),
        ("score", "ground_truth"),
        ("score", "judge_scores"),
        ("validate", "submission"),
        ("validate", "cases"),
        ("export", "cases"),
        ("agreement", "reference"),
    ]:
        assert data in helps[key], key
    assert "50 MiB" in helps["agreement", "ratings"] and "50 MiB" in helps["calibrate", "ratings"]
    assert "1 MiB" in helps["leaderboard", "calibration"]
    assert "1 MiB" in helps["compare", "calibration"]


def test_judge_scores_take_nothing_from_a_run_that_did_not_finish(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A status-started log's judged cases are not written: the official file never holds
    part of a run as if it were whole, and the message says so."""
    log = read_eval_log(files["log"])
    assert log.status == "success"
    log.status = "started"
    started = tmp_path / "started.eval"
    write_eval_log(log, str(started))
    output = tmp_path / "judge_scores.json"
    code = main(["judge-scores", str(started), "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert json.loads(output.read_text(encoding="utf-8")) == {"scores": []}
    assert "status 'started'; none of its scores are written" in err
    # The same log finished gives every judged case.
    finished = tmp_path / "finished.json"
    assert main(["judge-scores", files["log"], "--output", str(finished)]) == 0
    assert len(json.loads(finished.read_text(encoding="utf-8"))["scores"]) == 3
