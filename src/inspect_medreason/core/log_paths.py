"""How a local path is written into an eval log: never as it is on this machine.

A log is shared (a leaderboard entry, a bug report, a colleague's review), so it holds no
absolute local path, and no relative one that climbs out of its folder (``..``): a file is
named relative to the data folder it was read from (or by its own name when it lies
elsewhere), and identified by its SHA-256, which the log records beside it. The data folder
itself is named by nothing a reader could follow; a command that reads files again is told
the folder by the user (``-S data_dir=``, ``--data``) and checks each file by its digest.

What Inspect writes by itself (the task arguments as typed, the task file) is not the
plugin's to change: docs/reliability.md, "Local paths in a log".
"""

from __future__ import annotations

import os
from pathlib import Path

from inspect_medreason.core.files import file_sha256


def path_for_log(path: str | Path, root: str | Path | None = None) -> str:
    """``path`` as a log names it: relative to ``root`` when it lies under it (``/``
    separated, whatever the system), else its own name."""
    file = Path(os.path.normpath(Path(path).absolute()))
    if root is not None:
        base = Path(os.path.normpath(Path(root).absolute()))
        if file.is_relative_to(base) and file != base:
            return file.relative_to(base).as_posix()
    return file.name or "."


def data_location(data: str | Path | None, default: str) -> str:
    """The dataset's location for the log: the hub id (``default``) when the data came
    from the hub, else the local file's or folder's own name."""
    if data is None or not str(data).strip():
        return default
    return path_for_log(Path(data).expanduser())


def files_for_log(files: list[Path], root: Path) -> dict[str, str]:
    """Each file's name for the log (relative to ``root``) and its SHA-256."""
    return {path_for_log(path, root): file_sha256(path) for path in files}
