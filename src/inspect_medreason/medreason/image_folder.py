"""The one data folder a judged scorer reads case images from when they are not in the log.

During an eval the judges reuse the images Inspect put in the input. A blind control, or a
log written with ``--no-log-images`` and re-scored with ``inspect score``, holds none, and
each case's image is read again from a data folder. A log names no local folder (a log is
shared, and anyone can edit it: core.log_paths), so the folder is either

- the run's own, in the process that loaded the data: the task registers the folder it
  loaded under the SHA-256 of its cases file (:func:`register_data_folder`) and gives the
  scorer only that digest (``data_key``, which the log records); or
- the one the user names (``-S data_dir=FOLDER``), as ``inspect score`` in a new process,
  where no run's folder is known, must. A log written before this rule recorded its folder
  as the scorer's ``data_dir``; ``inspect score`` gives it back, and it is used alike.

Either way every file is checked against the SHA-256 the run recorded when it loaded the
case (``image_sha256``): a file that differs is refused, never sent. The folder is said
once, before its first image is read; with none known, the vision judges are unscored with
a reason telling how to name one, never scored zero. Whether the process is ``inspect
score`` is not asked (no command line is read): the rule is the same everywhere.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.solver import TaskState

from inspect_medreason.core.image_confinement import DIGESTS_KEY
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.loaders import prepare_case_images

logger = logging.getLogger(__name__)

NAME_IT = "name the data folder with -S data_dir=FOLDER"
NAMED = "named with -S data_dir"
RUN_FOLDER = "the folder this run loaded its cases from"

# The data folders this process loaded, by the SHA-256 of their cases file: what a scorer
# built by the task finds its images in, though the log names no folder.
_LOADED_FOLDERS: dict[str, Path] = {}


def register_data_folder(cases_sha256: str, folder: Path) -> str:
    """Remember the folder a task loaded its cases from; the key the scorer is given."""
    _LOADED_FOLDERS[cases_sha256] = folder
    return cases_sha256


@dataclass
class ImageFolder:
    """The data folder in force for a scorer and how it was chosen (None: none known)."""

    path: str | None
    origin: str
    announced: bool = False

    def announce(self) -> None:
        """Say once, before any image is read, which folder images come from."""
        if self.announced:
            return
        self.announced = True
        if self.path is None:
            logger.warning(
                "No data folder is known for this run: case images not held in the log are "
                "not read, and their vision judges are left unscored; %s.",
                NAME_IT,
            )
        else:
            # Inspect writes a warning into the sample's log: the run's own folder is said
            # without its path (a log names no local folder); a named one is the argument
            # the user typed, which Inspect records with the scorer's arguments anyway.
            logger.warning(
                "Case images not held in the log are read only from %s, each checked "
                "against the digest the run recorded; a folder written into a sample is "
                "never used.",
                self.origin if self.origin == RUN_FOLDER else f"{self.path} ({self.origin})",
            )

    def files(self, state: TaskState) -> list[Path]:
        """The sample's images, resolved under the folder in force with the loader's
        confinement and decoding checks, each the file the run loaded (by digest). Raises
        ImagePathError when refused."""
        self.announce()
        if self.path is None:
            raise ImagePathError(
                "the images are not in the log and no data folder is known in this "
                f"process (a log names none): {NAME_IT}"
            )
        frame = (state.metadata.get("extra_metadata") or {}).get("frame")
        relatives = [str(relative) for relative in state.metadata.get("image_paths") or []]
        prepared = prepare_case_images(Path(self.path), relatives, frame)
        files = [image.path for image in prepared]
        digests = state.metadata.get(DIGESTS_KEY)
        if not (isinstance(digests, list) and len(digests) == len(files)):
            # the folder may come from a log's header (an old log's data_dir): without a
            # digest, nothing says its files are the run's, so none is sent
            raise ImagePathError(
                "the log records no digest of the files its run loaded, so the files in "
                f"{self.path} cannot be checked to be those (an edited log?)"
            )
        for relative, digest, expected in zip(
            relatives, [image.sha256 for image in prepared], digests, strict=True
        ):
            if digest != expected:
                raise ImagePathError(
                    f"{relative} in {self.path} is not the file the run loaded (its SHA-256 "
                    f"differs: the file changed since, or the folder is not the run's); {NAME_IT}"
                )
        return files


def image_folder(data_dir: str | None, data_key: str | None = None) -> ImageFolder:
    """The folder in force for a scorer: the one named (``-S data_dir``, or an old log's
    recorded argument), else the one this process loaded under ``data_key``, else none."""
    if data_dir is not None and str(data_dir).strip():
        return ImageFolder(str(data_dir), NAMED)
    if data_key is not None and data_key in _LOADED_FOLDERS:
        return ImageFolder(str(_LOADED_FOLDERS[data_key]), RUN_FOLDER)
    return ImageFolder(None, "none known")
