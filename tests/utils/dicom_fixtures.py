"""DICOM files built with pydicom for the tests (no downloaded data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, SecondaryCaptureImageStorage, generate_uid

from utils.rated_logs import judged_log, write_cases


def dicom_dataset(modality: str, samples: int, photometric: str) -> Dataset:
    """A secondary-capture dataset with its file meta (a new instance UID each time): the
    header every test DICOM shares; the caller adds its pixel module."""
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = SecondaryCaptureImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID = SecondaryCaptureImageStorage
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.Modality = modality
    ds.SamplesPerPixel = samples
    ds.PhotometricInterpretation = photometric
    return ds


def write_dicom(
    path: Path,
    pixels: NDArray[np.uint16],
    photometric: str = "MONOCHROME2",
    window: tuple[float, float] | None = None,
    rescale: tuple[float, float] | None = None,
    windows: list[tuple[float, float, str]] | None = None,
) -> Path:
    """A minimal valid DICOM image; ``pixels`` is (rows, cols) or (frames, rows, cols).
    ``rescale`` is (slope, intercept); ``windows`` several named windows (centre, width,
    WindowCenterWidthExplanation), as a CT scanner writes them."""
    ds = dicom_dataset("CT", samples=1, photometric=photometric)
    ds.BitsAllocated = 16
    ds.BitsStored = 12
    ds.HighBit = 11
    ds.PixelRepresentation = 0
    if pixels.ndim == 3:
        ds.NumberOfFrames = pixels.shape[0]
    ds.Rows, ds.Columns = pixels.shape[-2], pixels.shape[-1]
    if window is not None:
        ds.WindowCenter, ds.WindowWidth = window
    if windows is not None:
        ds.WindowCenter = [center for center, _, _ in windows]
        ds.WindowWidth = [width for _, width, _ in windows]
        ds.WindowCenterWidthExplanation = [name for _, _, name in windows]
    if rescale is not None:
        ds.RescaleSlope, ds.RescaleIntercept = rescale
    ds.PixelData = pixels.astype(np.uint16).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_as(path, enforce_file_format=True)
    return path


def write_colour_dicom(path: Path, rgb: NDArray[np.float64], photometric: str = "RGB") -> Path:
    """A colour DICOM (8 bits a sample, interleaved); YBR_FULL stores JPEG's full-range
    YCbCr, which pydicom shows as RGB."""
    stored = rgb.astype(float)
    if photometric == "YBR_FULL":
        r, g, b = stored[..., 0], stored[..., 1], stored[..., 2]
        y = 0.299 * r + 0.587 * g + 0.114 * b
        stored = (
            np.stack([y, 128 + (b - y) / 1.772, 128 + (r - y) / 1.402], axis=-1)
            .round()
            .clip(0, 255)
        )
    ds = dicom_dataset("XC", samples=3, photometric=photometric)
    ds.PlanarConfiguration = 0
    ds.BitsAllocated = ds.BitsStored = 8
    ds.HighBit = 7
    ds.PixelRepresentation = 0
    ds.Rows, ds.Columns = rgb.shape[:2]
    ds.PixelData = stored.astype(np.uint8).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_as(path, enforce_file_format=True)
    return path


def gradient(rows: int = 8, cols: int = 8, top: int = 4000) -> NDArray[np.uint16]:
    return np.linspace(0, top, rows * cols).reshape(rows, cols).astype(np.uint16)


# Raw stored values 0-4000 with a CT rescale of -1024: HU from -1024 to 2976.
RAW = np.linspace(0, 4000, 24 * 24).reshape(24, 24).astype(np.uint16)
HU = RAW.astype(np.float64) - 1024.0
FILE_WINDOWS = [(40.0, 400.0, "SOFT TISSUE"), (-600.0, 1600.0, "LUNG")]


def dicom_case_log(tmp_path: Path) -> Path:
    """A judged run of two cases: c00 on a CT DICOM with two named windows, c01 a PNG."""
    data = write_cases(tmp_path / "data", 2)
    write_dicom(data / "images/i0.dcm", RAW, rescale=(1.0, -1024.0), windows=FILE_WINDOWS)
    cases = json.loads((data / "cases.json").read_text())
    cases["cases"][0]["image_path"] = "images/i0.dcm"
    (data / "cases.json").write_text(json.dumps(cases))
    return judged_log(tmp_path, 2)
