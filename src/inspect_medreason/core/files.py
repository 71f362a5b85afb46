"""Files: writing results safely (a kill, a full disk or a refusal never leaves a
half-written or destroyed file behind) and naming a file's content by its hash."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path


class OutputPathError(ValueError):
    """An output path that cannot or may not be written."""


def check_output_path(path: Path, force: bool) -> None:
    """Refuse a folder, or an existing file unless ``force``, before any work is written."""
    if path.is_dir():
        raise OutputPathError(f"{path} is a folder; name a file to write")
    if path.exists() and not force:
        raise OutputPathError(f"{path} exists; pass --force to overwrite it")


def write_bytes_atomically(path: Path, data: bytes, force: bool) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename it over."""
    check_output_path(path, force)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as output:
            output.write(data)
            output.flush()
            # mkstemp makes the file private (0600); the result must not be.
            os.fchmod(output.fileno(), mode)
            os.fsync(output.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _mode_for(path: Path) -> int:
    """The permissions the written file gets: those of the file it replaces, or what a plain
    ``open(path, "w")`` would give a new file under the process's umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` can only be read by
    setting it, which races with other threads creating files)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def write_text_atomically(path: Path, text: str, force: bool) -> None:
    write_bytes_atomically(path, text.encode("utf-8"), force)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks (archives and images can be large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
