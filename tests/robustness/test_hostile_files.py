"""Hostile and broken input files: each is a problem with file, case and field, listed with
every other problem of the file, and cheap to refuse; nothing raises."""

from __future__ import annotations

import io
import json
import resource
from pathlib import Path

import pytest
from conftest import write_json, write_png
from PIL import Image
from utils.dicom_fixtures import gradient, write_dicom

from inspect_medreason.core.images import check_image_decodes
from inspect_medreason.core.loaders import DatasetError, load_cases


def problems(path: Path) -> set[tuple[str, str]]:
    with pytest.raises(DatasetError) as error:
        load_cases(path)
    return {(p.case_id, p.field) for p in error.value.problems}


def case(case_id: str, **fields: object) -> dict[str, object]:
    return {
        "case_id": case_id,
        "task_type": "open",
        "question": "What is seen?",
        "image_path": "ok.png",
        **fields,
    }


def test_many_hostile_fields_are_listed_together(tmp_path: Path) -> None:
    write_png(tmp_path / "ok.png")
    write_json(
        tmp_path / "cases.json",
        {
            "cases": [
                case("nul", image_path="a\x00b.png"),
                case("long", image_path="x" * 5000 + ".png"),
                case("longname", image_path="d/" + "y" * 300 + ".png"),
                case("options", task_type="mcq", options=[f"option {i}" for i in range(27)]),
                case("meta", metadata=["not", "an", "object"]),
                case("fine"),
            ]
        },
    )
    found = problems(tmp_path)
    assert {
        ("nul", "image_paths"),
        ("long", "image_paths"),
        ("longname", "image_paths"),
        ("options", "options"),
        ("meta", "metadata"),
    } <= found
    assert not any(case_id == "fine" for case_id, _ in found)


def test_non_utf8_and_deeply_nested_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "latin1.json").write_bytes('[{"case_id": "é"}]'.encode("latin-1"))
    assert problems(tmp_path / "latin1.json") == {("-", "encoding")}
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert problems(tmp_path / "deep.json") == {("-", "json")}
    (tmp_path / "deep.jsonl").write_text('{"a": ' + "[" * 100_000 + "\n")
    assert problems(tmp_path / "deep.jsonl") == {("line 1", "json")}


def test_jsonl_with_a_line_separator_inside_a_string_loads(tmp_path: Path) -> None:
    write_png(tmp_path / "ok.png")
    line = json.dumps(case("u2028", question="First\u2028second"), ensure_ascii=False)
    (tmp_path / "cases.jsonl").write_text(line + "\r\n", encoding="utf-8")
    [loaded] = load_cases(tmp_path / "cases.jsonl").cases
    assert loaded.question == "First\u2028second"


def _png_with_corrupt_data() -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (64, 64), 100).save(buffer, format="PNG")
    data = bytearray(buffer.getvalue())
    start = data.index(b"IDAT") + 4
    data[start + 2 : start + 12] = b"\xff" * 10  # corrupt the zlib stream, keep the CRC wrong too
    return bytes(data)


def _truncated_jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((128, 128), 40).convert("RGB").save(buffer, format="JPEG")
    return buffer.getvalue()[:-600]


@pytest.mark.parametrize(
    "payload", [_png_with_corrupt_data(), _truncated_jpeg(), b"\x89PNG\r\n\x1a\n"]
)
def test_images_are_fully_decoded_at_validation(tmp_path: Path, payload: bytes) -> None:
    (tmp_path / "bad.png").write_bytes(payload)
    write_json(tmp_path / "cases.json", [case("c1", image_path="bad.png")])
    assert problems(tmp_path) == {("c1", "image_paths")}


def test_a_good_image_is_decoded_once(tmp_path: Path) -> None:
    path = write_png(tmp_path / "ok.png", size=(32, 32))
    check_image_decodes(path)
    check_image_decodes(path)  # served from the per-process cache: no second decode
    from inspect_medreason.core import images

    assert images._decode_problem.cache_info().hits >= 1


def test_a_dicom_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    path = write_dicom(tmp_path / "bomb.dcm", gradient(4, 4))
    import pydicom

    dataset = pydicom.dcmread(path)
    dataset.Rows, dataset.Columns = 30000, 30000  # claims 900 million pixels, holds 16
    dataset.save_as(path)
    write_json(tmp_path / "cases.json", [case("d1", image_path="bomb.dcm")])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DatasetError, match=r"decompression bomb.*Rows 30000 x Columns 30000"):
        load_cases(tmp_path)  # refused from the header: the pixel data is never decoded
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB
