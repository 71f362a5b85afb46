"""The one data folder a judged scorer reads case images from when they are not in the log.

During an eval the judges reuse the images Inspect put in the input. A blind control, or a
log written with ``--no-log-images`` and re-scored with ``inspect score``, holds none, and
each case's image is read again from a data folder. That folder is never one written into
a sample (a log is a file anyone can edit): it is the one the user names when re-scoring
(``-S data_dir=FOLDER``), or else the one the run recorded in its task metadata (the log's
header). It is printed before any judge call, and a sample recording another folder is
left unscored, named, with none of its images sent.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log
from inspect_ai.solver import TaskState

from inspect_medreason.core.image_confinement import (
    DIGESTS_KEY,
    image_digests,
    run_data_folder,
    same_folder,
)
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.core.loaders import prepare_image

logger = logging.getLogger(__name__)

NAME_IT = "name the data folder with -S data_dir=FOLDER"
NAMED = "named with -S data_dir"


class FolderMismatch(ImagePathError):
    """A sample records a data folder other than the one in force."""


@dataclass
class ImageFolder:
    """The data folder in force for a scorer, how it was chosen, and the run's own record
    (what each sample's recorded folder is checked against)."""

    path: str | None
    origin: str
    run_folder: str | None
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
            logger.warning(
                "Case images not held in the log are read only from %s (%s); a folder "
                "written into a sample is never used.",
                self.path,
                self.origin,
            )

    def refusal(self, metadata: dict[str, Any]) -> str | None:
        """Why a sample may not be scored: it records a data folder other than the run's
        (or, with no record of the run's, the one in force). None when it may."""
        recorded = metadata.get("data_dir")
        expected = self.run_folder or self.path
        if not recorded or expected is None or same_folder(str(recorded), expected):
            return None
        return (
            f"the sample records the data folder {str(recorded)!r}, not the run's "
            f"{expected!r} (an edited log?): it is not scored and none of its images is sent"
        )

    def files(self, state: TaskState) -> list[Path]:
        """The sample's images, resolved under the folder in force with the loader's
        confinement and decoding checks. Raises ImagePathError when refused."""
        problem = self.refusal(state.metadata)
        if problem is not None:
            raise FolderMismatch(problem)
        self.announce()
        if self.path is None:
            raise ImagePathError(f"no data folder is known for this run: {NAME_IT}")
        frame = (state.metadata.get("extra_metadata") or {}).get("frame")
        relatives = [str(relative) for relative in state.metadata.get("image_paths") or []]
        files = [prepare_image(Path(self.path), relative, frame) for relative in relatives]
        digests = state.metadata.get(DIGESTS_KEY)
        if not (isinstance(digests, list) and len(digests) == len(files)):
            if self.origin == NAMED:  # the user's own folder, as rate's --data: their choice
                return files
            raise ImagePathError(
                "the log records no digest of the files its run loaded, so the files in "
                f"{self.path} cannot be checked to be those (an edited log?)"
            )
        for relative, digest, expected in zip(
            relatives, image_digests(files), digests, strict=True
        ):
            if digest != expected:
                raise ImagePathError(
                    f"{relative} in {self.path} is not the file the run loaded (its SHA-256 "
                    f"differs: the file changed since, or the folder is not the run's); {NAME_IT}"
                )
        return files


def inspect_subcommand() -> str | None:
    """The ``inspect`` subcommand this process runs (``eval``, ``score``, ...), or None when
    it is not Inspect's command line (Python's ``eval()``, a test). Inspect tells a scorer
    neither that it runs under ``inspect score`` nor which log it re-scores; this is the one
    place the plugin reads the command line for it."""
    argv = sys.argv
    if len(argv) < 2:
        return None
    program = Path(argv[0]).name
    is_inspect = program == "inspect" or argv[0].replace("\\", "/").endswith(
        "inspect_ai/__main__.py"
    )
    return argv[1] if is_inspect else None


def image_folder(data_dir: str | None) -> ImageFolder:
    """The folder in force for a scorer given ``data_dir`` (``-S data_dir``, or the task's
    own when it built the scorer). Under ``inspect score LOG`` the run's record is read from
    LOG's header and the choice is printed now, before any judge is called."""
    named = str(data_dir) if data_dir is not None and str(data_dir).strip() else None
    if inspect_subcommand() != "score":
        # Built by the task (an eval, Python's score()): its folder is the run's own.
        return ImageFolder(named, "the run's data folder", named)
    log, recorded = rescored_log_folder()
    if named is not None and (recorded is None or not same_folder(named, recorded)):
        folder = ImageFolder(named, NAMED, recorded)
    else:
        folder = ImageFolder(recorded, f"the folder the run recorded in {log}", recorded)
    folder.announce()
    return folder


def rescored_log_folder() -> tuple[str | None, str | None]:
    """The log ``inspect score`` re-scores (from its command line: Inspect does not tell a
    scorer) and the data folder its run recorded in the task metadata (``data.data_dir``),
    or, for a log written before that record, in its scorers' parameters."""
    arguments = sys.argv[2:]
    for index, argument in enumerate(arguments):
        if index and arguments[index - 1] == "--output-file":
            continue
        if not argument.endswith((".eval", ".json")) or not Path(argument).is_file():
            continue
        try:
            header = read_eval_log(argument, header_only=True)
        except Exception:  # not a log (a scorer's file, say): the log is another argument
            continue
        return argument, run_data_folder(header)
    return None, None
