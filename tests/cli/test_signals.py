"""SIGTERM and SIGINT during a write: the previous outputs are intact, no temporary file,
staging folder or backup is left, and the command says in one line what it did not write,
with no traceback. Each command runs in a subprocess whose write is held at a hook (a
patched ``os.fsync``, or the demo copy's ``shutil.copy2``) until the signal comes: no
timing guesses, and every wait is bounded."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from utils.rated_logs import judged_log

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_signals")

# Prints "writing" when the command reaches the hook, then waits (at most 60 s) for the
# signal: the handler the command installs raises out of the sleep.
HELD_WRITER = """
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
def hold(real):
    def held(*args, **kwargs):
        print("writing", flush=True)
        time.sleep(60)
        return real(*args, **kwargs)
    return held
os.fsync = hold(os.fsync)
shutil.copy2 = hold(shutil.copy2)
from inspect_medreason.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_until_written_then_signal(arguments: list[str], kill: signal.Signals) -> tuple[int, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HELD_WRITER, *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    try:
        while process.stdout.readline().strip() != "writing":
            if process.poll() is not None:
                assert process.stderr is not None
                raise AssertionError(
                    f"exited {process.returncode} before writing: {process.stderr.read()}"
                )
            assert time.monotonic() < deadline, "never reached the write"
        process.send_signal(kill)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    return process.returncode, stderr


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_log(tmp_path_factory.mktemp("signals"), 3, log_images=False)


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("command", ["export --zip", "judge-scores", "rate"])
def test_a_signal_during_a_write_leaves_the_previous_outputs_and_no_temporary(
    judged: Path, tmp_path: Path, command: str, kill: signal.Signals
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    previous = {out / "a": b"previous a\n", out / "b.zip": b"previous zip\n"}
    for path, data in previous.items():
        path.write_bytes(data)
    name, *extra = command.split()
    arguments = [name, str(judged), "--output", str(out / "a"), "--force"]
    if name == "rate":  # the log holds no image and names no folder: the user names it
        arguments += ["--data", str(judged.parent.parent / "data")]
    if extra:
        arguments += ["--zip", str(out / "b.zip")]
    code, stderr = run_until_written_then_signal(arguments, kill)
    assert code == 128 + kill
    assert "Traceback" not in stderr
    # the last line (rate prints its notes first), and the only one about the interruption
    line = stderr.strip().splitlines()[-1]
    assert stderr.count("interrupted") == 1
    assert line.startswith(f"medreason {name}: interrupted by {kill.name}; not written: ")
    assert str(out / "a") in line
    assert {path.name: path.read_bytes() for path in out.iterdir()} == {
        path.name: data for path, data in previous.items()
    }


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_sample_data_leaves_no_staging_folder(
    tmp_path: Path, kill: signal.Signals
) -> None:
    code, stderr = run_until_written_then_signal(
        ["sample-data", str(tmp_path / "new" / "demo")], kill
    )
    assert code == 128 + kill and "Traceback" not in stderr
    assert stderr.strip() == (
        f"medreason sample-data: interrupted by {kill.name}; not written: "
        f"{tmp_path / 'new' / 'demo'} (any previous version is as it was, and no temporary "
        "file is left)"
    )
    assert files_under(tmp_path) == set()  # nor the folder made for it
