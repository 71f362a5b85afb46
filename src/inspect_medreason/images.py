"""Image paths from user data: confinement to the data folder and a decodability check."""

from __future__ import annotations

import functools
import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from PIL import Image, UnidentifiedImageError

# Longer than any file system allows: refused before the operating system sees it.
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


class ImagePathError(ValueError):
    """An image path that is unsafe, missing or not an image; the message says which."""


def resolve_image_path(data_dir: Path, relative: str) -> Path:
    """Resolve ``relative`` against ``data_dir`` and refuse anything that leaves it.

    Absolute paths are refused outright (the contract says paths are relative to the
    folder holding ``cases.json``); ``..`` components and symbolic links are followed
    and the real target must still lie inside the real data folder.
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
        root = Path(os.path.realpath(data_dir))
        target = Path(os.path.realpath(root / relative))
        if target != root and root not in target.parents:
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
