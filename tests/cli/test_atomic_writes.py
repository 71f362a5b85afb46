"""Outputs are written to a temporary file and renamed: a kill mid-write leaves the old
file intact, a refusal writes nothing, a folder is never taken for a file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_json

from inspect_medreason.cli import main
from inspect_medreason.core.files import write_text_atomically

# Runs `medreason score` with fsync slowed down, so the kill lands after the new bytes are
# written to the temporary file and before the rename.
# SIGINT gets Python's own handler (KeyboardInterrupt, as at a terminal) even when the test
# runs where SIGINT is ignored and children inherit that (a background job, nohup).
SLOW_WRITER = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
real_fsync = os.fsync
def slow_fsync(fd):
    print("writing", flush=True)
    time.sleep(30)
    real_fsync(fd)
os.fsync = slow_fsync
from inspect_medreason.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _score_inputs(tmp_path: Path) -> list[str]:
    write_json(tmp_path / "p.json", [{"case_id": "a", "task_type": "mcq", "answer": "A"}])
    write_json(tmp_path / "g.json", [{"case_id": "a", "task_type": "mcq", "answer": "A"}])
    return [
        "score",
        "--predictions",
        str(tmp_path / "p.json"),
        "--ground-truth",
        str(tmp_path / "g.json"),
    ]


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGINT])
def test_a_kill_mid_write_leaves_the_old_file_intact(tmp_path: Path, kill: signal.Signals) -> None:
    output = tmp_path / "metrics.json"
    output.write_text("the previous result\n")
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SLOW_WRITER,
            *_score_inputs(tmp_path),
            "--output",
            str(output),
            "--force",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while process.stdout.readline().strip() != "writing":
        assert time.monotonic() < deadline and process.poll() is None
    process.send_signal(kill)
    process.wait(timeout=60)
    assert output.read_text() == "the previous result\n"
    if kill == signal.SIGINT:  # a clean interruption also removes its temporary file
        assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "metrics.json", "p.json"]


def test_a_finished_write_replaces_the_file_whole(tmp_path: Path) -> None:
    output = tmp_path / "metrics.json"
    output.write_text("old")
    assert main([*_score_inputs(tmp_path), "--output", str(output), "--force"]) == 0
    assert json.loads(output.read_text())["metrics"]["MCQ Accuracy"] == 1.0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_folder_is_never_taken_for_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    assert main([*_score_inputs(tmp_path), "--output", str(folder), "--force"]) == 1
    assert main(["judge-scores", str(tmp_path), "--output", str(folder), "--force"]) == 1
    assert main(["export", str(tmp_path), "--output", str(folder), "--force"]) == 1
    err = capsys.readouterr().err
    assert err.count("is a folder") == 3 and "Traceback" not in err
    with pytest.raises(ValueError, match="is a folder"):
        write_text_atomically(folder, "x", force=True)


def test_a_written_file_has_ordinary_permissions(tmp_path: Path) -> None:
    """Not the temporary file's private 0600: a replaced file keeps its own mode, a new one
    gets what the umask gives any new file."""
    replaced = tmp_path / "shared.json"
    replaced.write_text("old")
    replaced.chmod(0o640)
    write_text_atomically(replaced, "new", force=True)
    assert replaced.stat().st_mode & 0o777 == 0o640
    reference = tmp_path / "plain.txt"
    reference.write_text("made by open()")
    fresh = tmp_path / "fresh.json"
    write_text_atomically(fresh, "{}", force=False)
    assert fresh.stat().st_mode & 0o777 == reference.stat().st_mode & 0o777
