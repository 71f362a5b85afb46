"""A case from a DICOM file on the rating page: the loader records the file's own windows,
rescale and units in the sample's metadata, and the page offers those windows and the named
CT ones, each rendered from the file's raw values (HU), not from the 8-bit image sent. A log
without the record (an older run) gives a page without presets; a file changed since the run
is never rendered."""

from __future__ import annotations

import base64
import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import edit_log_entry
from inspect_ai.log import read_eval_log
from numpy.typing import NDArray
from PIL import Image
from utils.dicom_fixtures import FILE_WINDOWS, HU, RAW, dicom_case_log, write_dicom

from inspect_medreason.core.dicom import CT_PRESETS, DISPLAY_KEY, MAX_WINDOW_PRESETS
from inspect_medreason.rating.page import build_rating_page

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_rating_dicom")


def decoded(uri: str) -> NDArray[np.uint8]:
    data = base64.b64decode(uri.partition(",")[2])
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("L"))


def dicom_linear_window(values: NDArray[np.float64], center: float, width: float) -> Any:
    """DICOM PS3.3 C.11.2.1.2.1's linear window, written out here on its own."""
    low, high = center - 0.5 - (width - 1) / 2, center - 0.5 + (width - 1) / 2
    out = ((values - (center - 0.5)) / (width - 1) + 0.5) * 255
    out = np.where(values <= low, 0, np.where(values > high, 255, out))
    return np.round(out).astype(np.uint8)


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dicom_case_log(tmp_path_factory.mktemp("dicom"))


def test_the_log_records_the_dicom_windows_as_the_file_states_them(log: Path) -> None:
    samples = {s.id: s for s in read_eval_log(str(log)).samples or []}
    assert read_eval_log(str(log)).status == "success"
    [record] = samples["c00"].metadata[DISPLAY_KEY]
    assert record == {
        "modality": "CT",
        "photometric": "MONOCHROME2",
        "rescale_slope": 1.0,
        "rescale_intercept": -1024.0,
        "units": "HU",
        "windows": [
            {"center": 40.0, "width": 400.0, "name": "SOFT TISSUE"},
            {"center": -600.0, "width": 1600.0, "name": "LUNG"},
        ],
        "frame": None,
    }
    assert DISPLAY_KEY not in samples["c01"].metadata  # a PNG case records none


def test_a_preset_is_rendered_from_the_raw_hu_values(log: Path) -> None:
    # the log names no data folder: the DICOM's raw values are read from the one named
    page = build_rating_page([log], 2, 0, data_dir=log.parent.parent / "data")
    by_question = {c["question"]: c for c in page.data["cases"]}
    dicom_case = by_question["What does the image show? [c00]"]
    png_case = by_question["What does the image show? [c01]"]
    assert "windows" not in png_case
    [windows] = dicom_case["windows"]
    assert windows["units"] == "HU"
    presets = windows["presets"]
    assert [p["name"] for p in presets] == [
        "SOFT TISSUE (file)",
        "LUNG (file)",
        *(name for name, _, _ in CT_PRESETS),
    ]
    assert len(presets) <= MAX_WINDOW_PRESETS
    sent = decoded(dicom_case["images"][0])
    for preset in presets:
        shown = decoded(preset["src"])
        expected = dicom_linear_window(HU, preset["center"], preset["width"])
        assert shown.shape == expected.shape
        assert np.array_equal(shown, expected), preset["name"]
    # the lung window shows grey levels where the image sent (the soft-tissue window) is
    # black: they come from the raw values, no re-windowing of the 8 bits could give them
    lung = decoded(next(p["src"] for p in presets if p["name"] == "lung (CT)"))
    black = sent == 0
    assert black.sum() > 50 and len(np.unique(lung[black])) > 20
    assert np.array_equal(sent, dicom_linear_window(HU, 40.0, 400.0))


def test_an_older_log_without_the_record_gives_no_preset_menu(log: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(log) as archive:
        [entry] = [n for n in archive.namelist() if n.startswith("samples/c00_")]

    def forget(sample: Any) -> None:
        del sample["metadata"][DISPLAY_KEY]

    older = edit_log_entry(log, tmp_path / "older.eval", entry, forget)
    page = build_rating_page([older], 2, 0)
    assert all("windows" not in case for case in page.data["cases"])
    assert not page.warnings


def test_a_dicom_changed_since_the_run_is_not_rendered(tmp_path: Path) -> None:
    log = dicom_case_log(tmp_path)
    write_dicom(
        tmp_path / "data/images/i0.dcm", RAW // 2, rescale=(1.0, -1024.0), windows=FILE_WINDOWS
    )
    # the page is still made, with the image as sent
    page = build_rating_page([log], 2, 0, data_dir=tmp_path / "data")
    assert all("windows" not in case for case in page.data["cases"])
    [warning] = page.warnings
    assert "case 'c00': its DICOM window presets are not offered" in warning
    assert "not the file the run loaded" in warning


def test_a_window_that_is_no_window_is_not_recorded(tmp_path: Path) -> None:
    from inspect_medreason.core.dicom import display_record

    path = write_dicom(
        tmp_path / "a.dcm",
        RAW,
        windows=[
            (float("nan"), 400.0, "NOT A NUMBER"),
            (40.0, 0.5, "TOO NARROW"),
            (40.0, 80.0, "BRAIN"),
        ],
    )
    record = display_record(path.read_bytes(), None)
    assert record is not None
    assert record["windows"] == [{"center": 40.0, "width": 80.0, "name": "BRAIN"}]
    assert record["rescale_slope"] is None and record["units"] == "HU"  # CT's own unit
    assert display_record(b"not a dicom at all", None) is None
