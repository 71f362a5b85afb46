"""The record of images already decoded in full: each file is decoded once across runs,
a changed or broken file is decoded again, and no record is no harm."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_png

from inspect_medreason.core import images


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = images.check_image_decodes

    def counting(path: Path) -> None:
        seen.append(path)
        real(path)

    monkeypatch.setattr(images, "check_image_decodes", counting)
    images._decode_problem.cache_clear()
    return seen


def test_a_file_is_decoded_once_across_runs(tmp_path: Path, decodes: list[Path]) -> None:
    files = [write_png(tmp_path / f"{i}.png", colour=i) for i in range(3)]
    assert images.check_images_decode(files) == {}
    assert images.check_images_decode(files) == {}  # a second run: nothing decoded again
    assert decodes == files
    write_png(files[1], size=(9, 9))  # changed: its size and time differ
    os.utime(files[1], ns=(1, 1))
    assert images.check_images_decode(files) == {} and decodes[3:] == [files[1]]


def test_a_broken_file_is_never_recorded(tmp_path: Path, decodes: list[Path]) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(write_png(tmp_path / "ok.png").read_bytes()[:40])
    for _ in range(2):
        problems = images.check_images_decode([broken])
        assert "not a decodable image" in problems[broken]
    assert decodes == [broken, broken]


def test_an_unwritable_cache_only_costs_time(
    tmp_path: Path, decodes: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv(images.CACHE_ENV, str(blocker / "cache"))
    files = [write_png(tmp_path / "a.png")]
    assert images.check_images_decode(files) == {} and images.check_images_decode(files) == {}
    assert decodes == files * 2
