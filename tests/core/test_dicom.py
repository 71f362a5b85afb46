from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_json
from PIL import Image
from utils.dicom_fixtures import gradient, write_dicom

from inspect_medreason.core.dicom import dicom_as_png, dicom_to_image, is_dicom
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.loaders import DatasetError, load_cases


@pytest.fixture(autouse=True)
def dicom_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "dicom"


def test_window_tags_are_applied(tmp_path: Path) -> None:
    path = write_dicom(tmp_path / "w.dcm", gradient(top=4000), window=(1000, 400))
    pixels = np.asarray(dicom_to_image(path))
    # Below centre - width/2 = 800 is black, above 1200 is white: most of a 0..4000 ramp.
    assert pixels.min() == 0 and pixels.max() == 255
    assert (pixels == 255).mean() > 0.6 and (pixels == 0).mean() > 0.15


def test_monochrome1_is_inverted_and_no_window_uses_percentiles(tmp_path: Path) -> None:
    ramp = gradient(top=1000)
    plain = np.asarray(dicom_to_image(write_dicom(tmp_path / "m2.dcm", ramp)))
    inverted = np.asarray(dicom_to_image(write_dicom(tmp_path / "m1.dcm", ramp, "MONOCHROME1")))
    assert plain[0, 0] == 0 and plain[-1, -1] == 255
    assert np.array_equal(inverted, 255 - plain)


def test_multi_frame_takes_the_middle_unless_named(tmp_path: Path) -> None:
    frames = np.stack(
        [np.full((4, 4), value, dtype=np.uint16) for value in (0, 1000, 2000, 3000, 4000)]
    )
    frames[:, 0, 0] = 0  # give every frame a dark pixel so the percentile window has a range
    frames[:, -1, -1] = 4000
    path = write_dicom(tmp_path / "multi.dcm", frames)
    middle = np.asarray(dicom_to_image(path))
    assert middle[1, 1] == pytest.approx(255 * 2000 / 4000, abs=20)
    first = np.asarray(dicom_to_image(path, frame=1))
    assert first[1, 1] == pytest.approx(255 * 1000 / 4000, abs=20)
    with pytest.raises(ImagePathError, match="frame 9 requested"):
        dicom_to_image(path, frame=9)


def test_detection_without_extension_and_cache(tmp_path: Path, dicom_cache: Path) -> None:
    path = write_dicom(tmp_path / "IM000001", gradient())
    assert is_dicom(path) and not is_dicom(Path(__file__))
    png = dicom_as_png(path)
    assert png.parent == dicom_cache and png.suffix == ".png"
    assert Image.open(png).size == (8, 8)
    modified = png.stat().st_mtime_ns
    assert dicom_as_png(path) == png and png.stat().st_mtime_ns == modified  # reused
    assert dicom_as_png(path, frame=0) != png  # the frame is part of the key


def test_dicom_cases_load_as_png(tmp_path: Path) -> None:
    write_dicom(tmp_path / "data" / "scan.dcm", gradient(), window=(2000, 4000))
    write_dicom(tmp_path / "data" / "series" / "IM0002", gradient())
    frames = np.stack([gradient(), gradient(top=100), gradient(top=10)])
    write_dicom(tmp_path / "data" / "cine.dcm", frames)
    write_json(
        tmp_path / "data" / "cases.json",
        [
            {"case_id": "a", "task_type": "open", "question": "Q", "image_path": "scan.dcm"},
            {"case_id": "b", "task_type": "open", "question": "Q", "image_path": "series/IM0002"},
            {
                "case_id": "c",
                "task_type": "open",
                "question": "Q",
                "image_path": "cine.dcm",
                "metadata": {"frame": 2},
            },
        ],
    )
    loaded = load_cases(tmp_path / "data")
    for case_id in "abc":
        [png] = loaded.resolved_images[case_id]
        assert png.suffix == ".png" and Image.open(png).mode == "L"


def test_unreadable_dicom_is_a_load_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "broken.dcm").write_bytes(b"\0" * 128 + b"DICM" + b"garbage")
    write_json(
        tmp_path / "data" / "cases.json",
        [{"case_id": "x", "task_type": "open", "question": "Q", "image_path": "broken.dcm"}],
    )
    with pytest.raises(DatasetError) as error:
        load_cases(tmp_path / "data")
    [problem] = error.value.problems
    assert problem.case_id == "x" and "broken.dcm: unreadable DICOM" in problem.message
