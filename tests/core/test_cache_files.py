"""core.files.write_cache_file: the one writer of the plugin's caches (prepared images,
converted DICOM, shifted images) leaves a whole file or none, and no temporary file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspect_medreason.core import files
from inspect_medreason.core.files import write_cache_file


def test_a_cache_file_is_written_whole_in_a_new_folder(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "ab" / "image.png"
    assert write_cache_file(target, b"\x89PNG whole") == target
    assert target.read_bytes() == b"\x89PNG whole"
    assert sorted(p.name for p in target.parent.iterdir()) == ["image.png"]


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "image.png"
    target.write_bytes(b"old")

    def refuse(source: str, destination: str | Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", refuse)
    with pytest.raises(OSError):
        write_cache_file(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["image.png"]


def test_an_interrupted_write_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Interrupting:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.name = str(tmp_path / ".part-x")
            Path(self.name).write_bytes(b"")

        def __enter__(self) -> Interrupting:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def write(self, data: bytes) -> int:
            raise KeyboardInterrupt

        def close(self) -> None:
            return None

    monkeypatch.setattr(files.tempfile, "NamedTemporaryFile", Interrupting)
    with pytest.raises(KeyboardInterrupt):
        write_cache_file(tmp_path / "image.png", b"new")
    assert os.listdir(tmp_path) == []
