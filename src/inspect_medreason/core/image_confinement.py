"""Where a command other than the eval itself reads a case's images when its log holds none
(a blind control, a run with ``--no-log-images``): one rule for all of them.

A log is a file anyone can edit, so a folder or a file written into a sample is never
trusted. The images come from the folder the user names (``--data``, ``-S data_dir``): a log
names no local folder (core.log_paths). A log written before that rule recorded its run's
folder in its header, which is used when none is named, said before any image is read; a
sample of such a log that records another folder is refused. Each file read is
checked against the SHA-256 the loader recorded for it when the run loaded the case
(:func:`image_digests`, in the sample's ``image_sha256``): a file swapped or edited since, or
another folder's file of the same name, is refused, never shown or sent. The bytes checked
are the bytes returned, read once through the bounded reader.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from inspect_medreason.core.files import file_sha256
from inspect_medreason.core.images import ImagePathError, ImageStore, resolve_image_path
from inspect_medreason.core.loaders import prepare_image_file
from inspect_medreason.core.user_files import MAX_IMAGE_BYTES, UserFileError, read_user_bytes

# The sample metadata key holding, for each of ``image_paths``, the SHA-256 of the image the
# loader prepared to send for it (``PreparedImage.sha256``: the PNG of a DICOM or CMYK file).
DIGESTS_KEY = "image_sha256"


def image_digests(files: Sequence[Path]) -> list[str]:
    """The SHA-256 of each image file sent as it is (a JPEG or 8-bit PNG, which the loader
    sends as read): what ``DIGESTS_KEY`` records for them."""
    return [file_sha256(path) for path in files]


def run_data_folder(header: EvalLog) -> str | None:
    """The data folder an old run recorded in its task metadata (``data.data_dir``), or, for
    a log older still, in its scorers' parameters; None when it recorded none (every log
    written since logs name no local path: the user names the folder)."""
    data = (header.eval.metadata or {}).get("data")
    if isinstance(data, dict) and isinstance(data.get("data_dir"), str) and data["data_dir"]:
        return str(data["data_dir"])
    for spec in header.eval.scorers or []:
        folder = (spec.options or {}).get("data_dir")
        if isinstance(folder, str) and folder:
            return folder
    return None


def same_folder(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b) or os.path.realpath(a) == os.path.realpath(b)


def _say_on_stderr(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


@dataclass
class ConfinedImages:
    """The case images a command reads from files: from ``named`` (the folder the user
    gave) or each log's recorded folder, announced once per folder before its first read."""

    named: Path | None
    say: Callable[[str], None] = _say_on_stderr
    announced: set[str] = field(default_factory=set)

    def _folder(
        self, log: Path, run_folder: str | None, metadata: Mapping[str, Any]
    ) -> tuple[Path, str]:
        """The folder in force for a sample's images and where it comes from, or
        ImagePathError when the sample records another or none can be named."""
        recorded = metadata.get("data_dir")
        if recorded and run_folder is not None and not same_folder(str(recorded), run_folder):
            raise ImagePathError(
                f"the sample records the data folder {str(recorded)!r}, not the run's "
                f"{run_folder!r} (an edited log?): none of its images is read"
            )
        if self.named is not None:
            folder, origin = self.named, "named with --data"
        elif run_folder is not None:
            folder, origin = Path(run_folder), f"the folder the run recorded in {log}"
        else:
            raise ImagePathError(
                "the log holds no image and its run records no data folder: name the data "
                "folder with --data"
            )
        return folder, origin

    def _announce(
        self, folder: Path, origin: str, what: str = "case images not held in the logs"
    ) -> None:
        if f"{what}:{folder}" not in self.announced:
            self.announced.add(f"{what}:{folder}")
            self.say(
                f"{what} are read from {folder} ({origin}), each "
                "checked against the digest recorded when the run loaded it; a folder or "
                "file written into a sample is never used"
            )

    def read_dicom(
        self, log: Path, run_folder: str | None, metadata: Mapping[str, Any], index: int
    ) -> tuple[bytes, Path]:
        """The bytes of a sample's ``index``-th image file, a DICOM, and its path: confined
        as ``read`` confines, and the file whose prepared image has the digest recorded at
        load (the PNG that was sent), so its raw values are those of the image the judges
        saw. ImagePathError naming what was refused and why."""
        relatives = [str(p) for p in metadata.get("image_paths") or []]
        digests = metadata.get(DIGESTS_KEY)
        if not (isinstance(digests, list) and len(digests) == len(relatives)):
            raise ImagePathError(
                "the log records no digest of the images its run sent, so no file can be "
                "checked to be the one it sent"
            )
        folder, origin = self._folder(log, run_folder, metadata)
        self._announce(folder, origin, "DICOM files (their raw values, for other windows)")
        frame = (metadata.get("extra_metadata") or {}).get("frame")
        with ImageStore() as store:
            prepared = prepare_image_file(folder, relatives[index], store, frame)
        if prepared.sha256 != digests[index]:
            raise ImagePathError(
                f"{relatives[index]} in {folder} is not the file the run loaded (the image "
                "made from it differs from the one sent): name the run's data folder with --data"
            )
        path = resolve_image_path(folder, relatives[index])
        try:
            data = read_user_bytes(path, MAX_IMAGE_BYTES, "image")
        except UserFileError as error:
            raise ImagePathError(str(error)) from None
        # the bytes returned are the bytes the checked image was made from
        if hashlib.sha256(data).hexdigest() != prepared.source_sha256:
            raise ImagePathError(f"{relatives[index]} in {folder} changed while it was read")
        return data, path

    def read(self, log: Path, run_folder: str | None, metadata: Mapping[str, Any]) -> list[bytes]:
        """The bytes of each of a sample's ``image_paths``, confined to the folder in force
        and checked against the digests recorded at load. Raises ImagePathError naming what
        was refused and why."""
        folder, origin = self._folder(log, run_folder, metadata)
        relatives = [str(p) for p in metadata.get("image_paths") or []]
        digests = metadata.get(DIGESTS_KEY)
        if not (isinstance(digests, list) and len(digests) == len(relatives)):
            if self.named is None:
                raise ImagePathError(
                    "the log records no digest of the files its run loaded, so the files in "
                    f"{folder} cannot be checked to be those: name the data folder with --data"
                )
            digests = [None] * len(relatives)
        self._announce(folder, origin)
        frame = (metadata.get("extra_metadata") or {}).get("frame")
        images = []
        with ImageStore() as store:
            # prepared as the loader prepared it (read once, DICOM windowed, converted where
            # providers would not take it), so the digest compared is that of what is sent
            prepared = [
                prepare_image_file(folder, relative, store, frame) for relative in relatives
            ]
        for relative, expected, image in zip(relatives, digests, prepared, strict=True):
            try:
                data = read_user_bytes(image.path, MAX_IMAGE_BYTES, "image")
            except UserFileError as error:
                raise ImagePathError(str(error)) from None
            if expected is not None and hashlib.sha256(data).hexdigest() != expected:
                raise ImagePathError(
                    f"{relative} in {folder} is not the file the run loaded (its SHA-256 "
                    "differs: the file changed since, or the folder is not the run's); "
                    "name the run's data folder with --data"
                )
            images.append(data)
        return images
