"""The file sent is the file checked: a case's image is read once, through the bounded
reader, and what the sample carries is those bytes (by digest), never the user's path
reopened later; the blind control needs no image at all."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest
from conftest import write_json, write_png
from inspect_ai.model import ContentImage
from PIL import Image

from inspect_medreason.core.loaders import DatasetError, load_cases
from inspect_medreason.medreason.dataset import build_dataset


def one_case(folder: Path, image: str = "images/a.png") -> None:
    write_json(
        folder / "cases.json",
        {"cases": [{"case_id": "c1", "task_type": "open", "question": "Q?", "image_path": image}]},
    )


def sent_images(dataset: object) -> list[str]:
    [sample] = list(dataset)  # type: ignore[call-overload]
    message = sample.input[-1]
    return [part.image for part in message.content if isinstance(part, ContentImage)]


def test_an_image_swapped_after_loading_is_not_what_is_sent(tmp_path: Path) -> None:
    original = write_png(tmp_path / "images" / "a.png", colour=10).read_bytes()
    write_png(tmp_path / "secret.png", colour=250)
    one_case(tmp_path)
    dataset, _ = build_dataset(tmp_path, None, {"open"})
    # Swapped for a link to a file outside the folder, after the load checked it.
    (tmp_path / "images" / "a.png").unlink()
    os.symlink(tmp_path / "secret.png", tmp_path / "images" / "a.png")
    [image] = sent_images(dataset)
    assert Path(image).read_bytes() == original
    assert not image.startswith(str(tmp_path))
    [sample] = list(dataset)
    assert (sample.metadata or {})["image_sha256"] == [hashlib.sha256(original).hexdigest()]


def test_a_fifo_named_as_an_image_is_refused_without_waiting(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    os.mkfifo(tmp_path / "images" / "a.png")
    one_case(tmp_path)
    with pytest.raises(
        DatasetError, match=r"images/a.png. is not a regular file \(a folder, a FIFO"
    ):
        load_cases(tmp_path)


def test_a_cmyk_jpeg_case_image_is_converted_and_recorded(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    Image.new("CMYK", (6, 6), (0, 50, 100, 0)).save(tmp_path / "images" / "a.jpg")
    one_case(tmp_path, "images/a.jpg")
    dataset, _ = build_dataset(tmp_path, None, {"open"})
    [image] = sent_images(dataset)
    assert Image.open(image).mode == "RGB" and Image.open(image).format == "PNG"
    [sample] = list(dataset)
    assert "CMYK -> RGB" in (sample.metadata or {})["image_conversions"][0]


def test_the_blind_control_needs_no_image_file(tmp_path: Path) -> None:
    case = {
        "case_id": "c1",
        "task_type": "mcq",
        "question": "Q?",
        "image_path": "images/a.png",  # does not exist
        "options": ["one", "two"],
        "answer": "A",
    }
    write_json(tmp_path / "cases.json", {"cases": [case]})
    with pytest.raises(DatasetError, match="does not exist"):
        build_dataset(tmp_path, None, {"mcq"})
    dataset, _ = build_dataset(tmp_path, None, {"mcq"}, show_images=False)
    [sample] = list(dataset)
    assert (sample.metadata or {})["images_withheld"] is True
    assert sent_images(dataset) == []
    # The open track's judges see the images whatever the model is shown: still required.
    open_case = {k: v for k, v in case.items() if k not in ("options", "answer")}
    write_json(tmp_path / "cases.json", {"cases": [{**open_case, "task_type": "open"}]})
    with pytest.raises(DatasetError, match="does not exist"):
        build_dataset(tmp_path, None, {"open"}, show_images=False)


def test_the_same_bytes_under_two_names_are_stored_once(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (1, 2, 3)).save(buffer, format="PNG")
    for name in ("a.png", "b.png"):
        (tmp_path / name).write_bytes(buffer.getvalue())
    write_json(
        tmp_path / "cases.json",
        [{"case_id": "c", "task_type": "open", "question": "Q", "image_paths": ["a.png", "b.png"]}],
    )
    loaded = load_cases(tmp_path)
    first, second = loaded.prepared_images["c"]
    assert first.path == second.path and first.sha256 == second.sha256
    assert [Path(str(i.source)).name for i in (first, second)] == ["a.png", "b.png"]
