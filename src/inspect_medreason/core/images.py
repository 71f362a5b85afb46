"""Image paths from user data: confinement to the data folder and a decodability check."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from pathlib import Path, PurePosixPath, PureWindowsPath

from PIL import Image, UnidentifiedImageError

# Longer than any file system allows: refused before the operating system sees it.
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


class ImagePathError(ValueError):
    """An image path that is unsafe, missing or not an image; the message says which."""


def resolve_image_path(data_dir: Path, relative: str, real_root: Path | None = None) -> Path:
    """Resolve ``relative`` against ``data_dir`` and refuse anything that leaves it.

    Absolute paths are refused outright (the contract says paths are relative to the
    folder holding ``cases.json``); ``..`` components and symbolic links are followed
    and the real target must still lie inside the real data folder. ``real_root`` is
    ``data_dir``'s real path when the caller resolved it already (once for a whole load,
    rather than once per image).
    """
    if not relative or not relative.strip():
        raise ImagePathError("empty image path")
    if any(ord(character) < 32 for character in relative):
        raise ImagePathError(f"{relative[:80]!r} holds a control character (a NUL byte?)")
    if len(relative) > MAX_PATH_CHARS or any(
        len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES
        for part in PurePosixPath(relative).parts
    ):
        raise ImagePathError(f"{relative[:80]!r}... is longer than a file path can be")
    if (
        PurePosixPath(relative).is_absolute()
        or PureWindowsPath(relative).is_absolute()
        or PureWindowsPath(relative).drive
    ):
        raise ImagePathError(f"{relative!r} is an absolute path; paths must be relative")
    try:
        root = real_root if real_root is not None else Path(os.path.realpath(data_dir))
        target = Path(os.path.realpath(root / relative))
        if target != root and not target.is_relative_to(root):
            raise ImagePathError(f"{relative!r} resolves outside the data folder ({root})")
        if not target.is_file():
            raise ImagePathError(f"{relative!r} does not exist")
    except (OSError, ValueError) as error:
        if isinstance(error, ImagePathError):
            raise
        raise ImagePathError(f"{relative[:80]!r} cannot be used as a path ({error})") from error
    return target


def check_image_decodes(path: Path) -> None:
    """Raise ImagePathError unless Pillow decodes every pixel of the file.

    A full decode, not ``verify()``: a truncated JPEG or a PNG with corrupt compressed data
    passes a structural check and fails only when a model provider decodes it. Each
    distinct file (by path, size and modification time) is decoded once per process.
    Pillow's decompression-bomb guard is left on: an oversized image is reported like any
    other unreadable one.
    """
    try:
        stat = path.stat()
    except OSError as error:
        raise ImagePathError(f"{path.name} cannot be read ({error.strerror})") from error
    problem = _decode_problem(str(path), stat.st_size, stat.st_mtime_ns)
    if problem is not None:
        raise ImagePathError(problem)


@functools.lru_cache(maxsize=65536)
def _decode_problem(path: str, size: int, mtime_ns: int) -> str | None:
    name = Path(path).name
    try:
        with Image.open(path) as image:
            image.load()
    except Image.DecompressionBombError as error:
        return f"{name}: refused as a decompression bomb ({error})"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as error:
        return f"{name} is not a decodable image ({error})"
    except Exception as error:  # a hostile file can trip any decoder: report, never crash
        return f"{name} is not a decodable image ({type(error).__name__}: {error})"
    return None


CACHE_ENV = "INSPECT_MEDREASON_CACHE_DIR"


def cache_root() -> Path:
    """Where converted images and the decode record are kept (``$INSPECT_MEDREASON_CACHE_DIR``
    to move it)."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "inspect_medreason"


def _decode_key(path: Path) -> str | None:
    try:
        real = os.path.realpath(path)
        stat = os.stat(real)
    except (OSError, ValueError):
        return None
    return f"{real}|{stat.st_size}|{stat.st_mtime_ns}"


def _decode_record() -> sqlite3.Connection | None:
    """The record of files already decoded in full, kept across runs (a file is known by
    its path, size and modification time); None when the cache folder is not writable,
    and then every file is decoded."""
    try:
        root = cache_root()
        root.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(root / "decoded.sqlite", timeout=5.0)
        connection.execute("CREATE TABLE IF NOT EXISTS decoded (key TEXT PRIMARY KEY)")
        return connection
    except (OSError, sqlite3.Error):
        return None


def check_images_decode(paths: list[Path]) -> dict[Path, str]:
    """Decode every file in full, once: files decoded on an earlier run (same path, size and
    modification time) are not decoded again. Returns the problem of each file that does
    not decode (those are never recorded, so they are checked again next time)."""
    unique = list(dict.fromkeys(paths))
    if not unique:
        return {}  # text-only data: no record to open
    keys = {path: _decode_key(path) for path in unique}
    record = _decode_record()
    known: set[str] = set()
    if record is not None:
        with contextlib.suppress(sqlite3.Error):
            wanted = [k for k in keys.values() if k]
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = record.execute(
                    f"SELECT key FROM decoded WHERE key IN ({','.join('?' * len(chunk))})", chunk
                )
                known.update(row[0] for row in rows)
    problems: dict[Path, str] = {}
    decoded: list[str] = []
    for path in unique:
        key = keys[path]
        if key is not None and key in known:
            continue
        try:
            check_image_decodes(path)
        except ImagePathError as error:
            problems[path] = str(error)
            continue
        if key is not None:
            decoded.append(key)
    if record is not None:
        with contextlib.suppress(sqlite3.Error), record:
            record.executemany("INSERT OR IGNORE INTO decoded VALUES (?)", [(k,) for k in decoded])
        record.close()
    return problems
