"""core.user_files: a user file is a regular file under its limit, or a one-line refusal at
once (a FIFO never blocks, a link to /dev/zero is never read)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspect_medreason.core import user_files
from inspect_medreason.core.user_files import (
    UserFileError,
    check_regular_file,
    read_user_bytes,
    read_user_json,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")


@pytest.fixture(autouse=True)
def never_blocks() -> Iterator[None]:
    """A read that blocks fails the test after 10 s instead of hanging the suite."""

    def expire(*_: object) -> None:
        raise TimeoutError("a read of a user file blocked")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path: Path) -> None:
    target = tmp_path / "scores.json"
    target.write_text('{"scores": [], "x": NaN}', encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    for path in (target, link):
        document = read_user_json(path, 100, "judge scores")
        assert document["scores"] == [] and document["x"] != document["x"]  # NaN, as json reads


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "predictions.json"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(fifo)
    for path in (fifo, link):
        with pytest.raises(UserFileError) as refused:
            read_user_bytes(path, 100, "predictions")
        message = str(refused.value)
        assert message.startswith(f"predictions {path}: is a FIFO (named pipe), not a file")
        assert "\n" not in message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_link_to_a_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    link = tmp_path / "reference.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(UserFileError, match=r"reference.json: is a device, not a file"):
        read_user_json(link, user_files.MAX_DATA_BYTES, "reference scores")
    with pytest.raises(UserFileError, match="is a device"):
        check_regular_file(link, "eval log")


def test_a_file_over_its_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "calibration.json"
    big.write_bytes(b" " * (user_files.MAX_CALIBRATION_BYTES + 1))
    with pytest.raises(UserFileError) as refused:
        read_user_bytes(big, user_files.MAX_CALIBRATION_BYTES, "calibration file")
    assert "larger than the 1 MiB limit for this file" in str(refused.value)
    exact = tmp_path / "exact.json"
    exact.write_bytes(b"x" * 64)
    assert read_user_bytes(exact, 64, "file") == b"x" * 64


def test_a_file_growing_past_its_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size checked at the open is not trusted: what is read is bounded too."""
    path = tmp_path / "growing.json"
    path.write_bytes(b"x" * 10)
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        with open(path, "ab") as more:  # grows after the size was taken
            more.write(b"y" * 100)
        return info

    monkeypatch.setattr(user_files.os, "fstat", stale_fstat)
    with pytest.raises(UserFileError, match="grew past the 50 bytes"):
        read_user_bytes(path, 50, "ratings file")


def test_missing_folder_unreadable_and_bad_json_are_one_line_messages(tmp_path: Path) -> None:
    cases = [
        (tmp_path / "absent.json", "no such file"),
        (tmp_path, "is a folder, not a file; give the file itself"),
    ]
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff{")
    cases.append((bad, "not UTF-8 text"))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    cases.append((deep, "JSON nested too deeply to read"))
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    cases.append((broken, "not valid JSON"))
    for path, expected in cases:
        with pytest.raises(UserFileError) as refused:
            read_user_json(path, 1_000_000, "ground truth")
        message = str(refused.value)
        assert message.startswith(f"ground truth {path}: ") and expected in message
        assert "\n" not in message
    if os.geteuid() != 0:  # root reads any file
        locked = tmp_path / "locked.json"
        locked.write_text("{}", encoding="utf-8")
        locked.chmod(0)
        with pytest.raises(UserFileError, match="cannot be opened"):
            read_user_json(locked, 100, "ground truth")
