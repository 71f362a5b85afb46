"""Regenerate the images of the shipped demo dataset from redistributable public sources.

Sources (all installed from PyPI with ``pip install -e ".[sample-data]"``):
- pydicom and pydicom-data test files derived from the NEMA WG04 sample sets (CT, MR,
  computed radiography of chest and tibia, ultrasound, whole-body bone scan) and a GDCM /
  Siemens abdominal MR with a marked liver lesion;
- scikit-image's CC0 ``retina``, ``microaneurysms`` and ``immunohistochemistry`` images.

DICOM is converted by the package's own reader (inspect_medreason.core.dicom: the file's VOI LUT
or window tags after the modality LUT, MONOCHROME1 inverted, 8-bit) and reduced to at most
512 px on the long side. The cases and ground truth are hand-written in ``sample_data/`` and not touched here.

Usage: python scripts/build_sample_data.py [--output src/inspect_medreason/sample_data/images]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from pydicom.data import get_testdata_file

from inspect_medreason.core.dicom import dicom_to_image

MAX_SIDE = 512
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "src/inspect_medreason/sample_data/images"


@dataclass(frozen=True)
class DicomSource:
    file_name: str
    output_name: str
    # (center, width) for files that carry no window of their own.
    fallback_window: tuple[float, float] | None = None


DICOM_SOURCES = (
    DicomSource("CT_small.dcm", "ct_axial_contrast.png", fallback_window=(40.0, 400.0)),
    DicomSource("MR-SIEMENS-DICOM-WithOverlays.dcm", "mr_abdomen_axial_t1_liver_lesion.png"),
    DicomSource("MR2_UNCR.dcm", "mr_shoulder_t1.png"),
    DicomSource("RG1_UNCR.dcm", "cr_chest_pa.png"),
    DicomSource("RG3_UNCR.dcm", "cr_right_lower_leg_ap.png"),
    DicomSource("US1_UNCR.dcm", "us_lymph_node_doppler.png"),
    DicomSource("JPEG2000_UNC.dcm", "nm_whole_body_bone_scan.png"),
)


def skimage_sources() -> dict[str, Callable[[], NDArray[np.uint8]]]:
    import skimage.data

    return {
        "fundus_retina.png": skimage.data.retina,
        "fundus_microaneurysms.png": skimage.data.microaneurysms,
        "ihc_colonic_glands.png": skimage.data.immunohistochemistry,
    }


def save(image: Image.Image, path: Path) -> None:
    image.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    image.save(path, optimize=True)
    print(f"{path.name}: {image.size[0]}x{image.size[1]} {image.mode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    for source in DICOM_SOURCES:
        path = get_testdata_file(source.file_name)
        if not isinstance(path, str):
            raise SystemExit(f"{source.file_name} is missing: pip install pydicom-data")
        image = dicom_to_image(Path(path), fallback_window=source.fallback_window)
        save(image, args.output / source.output_name)
    for name, loader in skimage_sources().items():
        save(Image.fromarray(loader()), args.output / name)


if __name__ == "__main__":
    main()
