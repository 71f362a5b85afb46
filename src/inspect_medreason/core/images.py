"""Image paths from user data: confinement to the data folder and a decodability check."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from PIL import Image, UnidentifiedImageError

from inspect_medreason.core.files import write_cache_file
from inspect_medreason.core.user_files import MAX_IMAGE_BYTES, UserFileError, read_user_bytes

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
            if target.exists():  # never opened: a FIFO would block, a device never end
                raise ImagePathError(
                    f"{relative!r} is not a regular file (a folder, a FIFO or a device)"
                )
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


# ---------------------------------------------------------------------------------------
# Images as the bytes sent: read once, decoded whole, converted once, kept by digest

# The formats and modes every provider this project targets accepts as they are (OpenAI,
# Anthropic, Google: JPEG and PNG, 8 bits per channel). Anything else is converted once.
ACCEPTED_MODES = {
    "JPEG": frozenset({"L", "RGB"}),
    "PNG": frozenset({"1", "L", "LA", "P", "RGB", "RGBA"}),
}
SUFFIXES = {"JPEG": ".jpg", "PNG": ".png"}
# A multi-frame image (animated GIF, multi-page TIFF) is decoded frame by frame, whole, and
# its first frame is sent; more frames than this is refused (a 10,000-frame GIF is not a
# medical image and decoding it all is the attack).
MAX_FRAMES = 256
# Modes converted to RGB (CMYK, colour spaces no provider takes) or RGBA (palette + alpha).
_TO_RGB = frozenset({"CMYK", "YCbCr", "LAB", "HSV", "RGBX", "RGBa"})
_TO_RGBA = frozenset({"PA", "La"})
_HIGH_DEPTH = frozenset({"I", "F", "I;16", "I;16L", "I;16B", "I;16N"})
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Images decoded at once while a batch of rows is read (the machines this runs on have at
# least two cores; more threads would hold more decoded images in memory at once).
DECODE_THREADS = 2


@dataclass(frozen=True)
class PreparedImage:
    """An image as it is sent: a file in the cache named by the digest of its bytes, the
    digest of the bytes it was made from, and the conversion made (None: sent as read)."""

    path: Path
    sha256: str
    source_sha256: str
    conversion: str | None = None
    # The file it was read from, when it came from one: relative to the folder it was
    # confined to (as a log names it, core.log_paths).
    source: str | None = None
    # A DICOM's own display record (core.dicom.display_record): its windows, rescale, units.
    dicom: dict[str, Any] | None = None


def _png_bit_depth(data: bytes) -> int:
    # IHDR is the first chunk: signature (8), length (4), type (4), width, height (8), depth.
    return data[24] if data.startswith(_PNG_SIGNATURE) and len(data) > 24 else 8


def _eight_bit(frame: Image.Image) -> tuple[Image.Image, str]:
    """A high-depth greyscale frame as 8-bit, stretched linearly from its own darkest to
    its brightest value (Pillow's own ``convert("L")`` clips every value above 255 to
    white, which blanks a 12- or 16-bit image)."""
    import numpy as np

    values = np.asarray(frame, dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    scaled = (values - low) / max(high - low, 1e-9) * 255.0
    image = Image.fromarray(np.round(scaled).astype(np.uint8), mode="L")
    return image, f"{frame.mode} stretched linearly from [{low:g}, {high:g}] to 8-bit L"


def _decode_whole(data: bytes, name: str) -> tuple[Image.Image, str | None, int]:
    """Decode every frame of ``data``; return the first frame (loaded), its format and
    the frame count. ImagePathError (naming ``name``) for anything that does not decode."""
    try:
        image = Image.open(io.BytesIO(data))
        image_format = image.format
        frames = int(getattr(image, "n_frames", 1) or 1)
        if frames > MAX_FRAMES:
            raise ImagePathError(
                f"{name}: {frames:,} frames, more than the {MAX_FRAMES} a multi-frame image "
                "may have here; save the one frame to evaluate as a PNG"
            )
        for index in range(frames - 1, -1, -1):  # the last frame first: a truncation shows
            image.seek(index)
            image.load()
        return image, image_format, frames
    except ImagePathError:
        raise
    except Image.DecompressionBombError as error:
        raise ImagePathError(f"{name}: refused as a decompression bomb ({error})") from error
    except UnidentifiedImageError:
        raise ImagePathError(
            f"{name} is not a decodable image (not an image format Pillow knows)"
        ) from None
    except (OSError, SyntaxError, ValueError, EOFError) as error:
        raise ImagePathError(f"{name} is not a decodable image ({error})") from error
    except Exception as error:  # a hostile file can trip any decoder: report, never crash
        raise ImagePathError(
            f"{name} is not a decodable image ({type(error).__name__}: {error})"
        ) from error


def convert_for_providers(data: bytes, name: str) -> tuple[bytes, str, str | None]:
    """The bytes to send for an image file's ``data``: the same bytes when they are a
    single-frame JPEG or 8-bit PNG in a mode providers accept, else the first frame as a
    PNG in an accepted mode. Returns (bytes, suffix, conversion or None). Every frame is
    decoded first, so a damaged image is refused whatever frame is damaged."""
    image, image_format, frames = _decode_whole(data, name)
    with image:
        mode = image.mode
        accepted = ACCEPTED_MODES.get(image_format or "", frozenset())
        high_depth_png = image_format == "PNG" and _png_bit_depth(data) > 8
        if frames == 1 and mode in accepted and not high_depth_png:
            return data, SUFFIXES[str(image_format)], None
        steps = [f"{image_format or 'unknown format'} {mode}"]
        if frames > 1:
            image.seek(0)
            image.load()
            steps.append(f"first of {frames} frames")
        frame: Image.Image = image
        if frame.mode in _HIGH_DEPTH:
            frame, how = _eight_bit(frame)
            steps.append(how)
        elif frame.mode in _TO_RGB:
            frame = frame.convert("RGB")
            steps.append(f"{mode} -> RGB")
        elif frame.mode in _TO_RGBA:
            frame = frame.convert("RGBA")
            steps.append(f"{mode} -> RGBA")
        elif frame.mode not in ACCEPTED_MODES["PNG"]:
            frame = frame.convert("RGBA" if "A" in frame.mode else "RGB")
            steps.append(f"{mode} -> {frame.mode}")
        buffer = io.BytesIO()
        try:
            # Fastest zlib level: default level 6 took 60 ms per 256-pixel photograph,
            # most of a load's time for a split with many CMYK images; the pixels are the same.
            frame.save(buffer, format="PNG", compress_level=1)
        except Exception as error:  # an encoder failure is this image's, never the run's
            raise ImagePathError(
                f"{name}: could not be converted to PNG ({type(error).__name__}: {error})"
            ) from error
    return buffer.getvalue(), ".png", "; ".join(steps) + " -> PNG"


def _write_once(folder: Path, name: str, data: bytes) -> Path:
    """``data`` as ``folder/name`` (written then renamed: a reader never sees half a file)."""
    target = folder / name
    if target.is_file() and target.stat().st_size == len(data):
        return target
    return write_cache_file(target, data)


class ImageStore:
    """Prepares images for one load: each image's bytes (read once by the caller) are
    decoded whole, converted once if providers would not take them, and written to the
    cache under the digest of the bytes sent. What an image was made into is recorded
    (source digest -> sent file, conversion) across runs, so an image already prepared
    is not decoded again; the digest of the bytes read is what finds it."""

    def __init__(self) -> None:
        self.folder = cache_root() / "images"
        # source digest -> what it became (or why it could not), and the name it had then
        self._seen: dict[str, tuple[PreparedImage | ImagePathError, str]] = {}
        self._record: sqlite3.Connection | None = None
        self._opened = False  # the record is opened at the first image: text data needs none
        self._pending: list[tuple[str, str, str, str | None]] = []

    def _open(self) -> sqlite3.Connection | None:
        if not self._opened:
            self._opened = True
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._record = sqlite3.connect(self.folder / "prepared.sqlite", timeout=5.0)
                self._record.execute(
                    "CREATE TABLE IF NOT EXISTS prepared (source TEXT PRIMARY KEY, sent TEXT, "
                    "suffix TEXT, conversion TEXT)"
                )
            except (OSError, sqlite3.Error):
                self._record = None  # every image is then decoded; nothing is lost
        return self._record

    def __enter__(self) -> ImageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._record is None:
            return
        with contextlib.suppress(sqlite3.Error):
            with self._record:
                self._record.executemany(
                    "INSERT OR REPLACE INTO prepared VALUES (?, ?, ?, ?)", self._pending
                )
            self._record.close()
        self._pending.clear()
        self._record = None

    def _known(self, source: str) -> PreparedImage | None:
        record = self._open()
        if record is None:
            return None
        try:
            row = record.execute(
                "SELECT sent, suffix, conversion FROM prepared WHERE source = ?", (source,)
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        sent, suffix, conversion = row
        path = self.folder / f"{sent}{suffix}"
        # The file sent is checked against its name's digest: an edited cache is redone.
        try:
            if hashlib.sha256(path.read_bytes()).hexdigest() != sent:
                return None
        except OSError:
            return None
        return PreparedImage(path, sent, source, conversion)

    def prepare(self, data: bytes, name: str) -> PreparedImage:
        """The image to send for ``data`` (the bytes of ``name``, as read once); raises
        ImagePathError naming ``name`` when it does not decode or cannot be stored."""
        source = hashlib.sha256(data).hexdigest()
        if source not in self._seen:
            outcome: PreparedImage | ImagePathError | None = self._known(source)
            if outcome is None:
                try:
                    outcome = self._make(data, name, source)
                except ImagePathError as error:
                    outcome = error
            self._seen[source] = (outcome, name)
        outcome, first_name = self._seen[source]
        if isinstance(outcome, ImagePathError):
            # The same bytes under another name: the same problem, said of this name.
            raise ImagePathError(str(outcome).replace(first_name, name, 1))
        return outcome

    def prepare_many(self, items: list[tuple[bytes, str]]) -> list[PreparedImage | ImagePathError]:
        """``prepare`` for a batch (bytes, name), each outcome in place of raising: the
        decoding and converting of images not prepared before runs on two threads (Pillow
        releases the GIL while it decodes and encodes), the storing in order."""
        sources = [hashlib.sha256(data).hexdigest() for data, _ in items]
        fresh: dict[str, tuple[bytes, str]] = {}
        for source, (data, name) in zip(sources, items, strict=True):
            if source not in self._seen and source not in fresh:
                known = self._known(source)
                if known is not None:
                    self._seen[source] = (known, name)
                else:
                    fresh[source] = (data, name)
        if fresh:

            def convert(item: tuple[bytes, str]) -> tuple[bytes, str, str | None] | ImagePathError:
                try:
                    return convert_for_providers(*item)
                except ImagePathError as error:
                    return error

            with ThreadPoolExecutor(max_workers=DECODE_THREADS) as pool:
                converted = list(pool.map(convert, fresh.values()))
            for (source, (data, name)), result in zip(fresh.items(), converted, strict=True):
                outcome: PreparedImage | ImagePathError
                if isinstance(result, ImagePathError):
                    outcome = result
                else:
                    try:
                        outcome = self._store(data, name, source, *result)
                    except ImagePathError as error:
                        outcome = error
                self._seen[source] = (outcome, name)
        results: list[PreparedImage | ImagePathError] = []
        for source, (_, name) in zip(sources, items, strict=True):
            outcome, first_name = self._seen[source]
            if isinstance(outcome, ImagePathError):
                outcome = ImagePathError(str(outcome).replace(first_name, name, 1))
            results.append(outcome)
        return results

    def _make(self, data: bytes, name: str, source: str) -> PreparedImage:
        return self._store(data, name, source, *convert_for_providers(data, name))

    def _store(
        self, data: bytes, name: str, source: str, sent: bytes, suffix: str, conversion: str | None
    ) -> PreparedImage:
        digest = source if sent is data else hashlib.sha256(sent).hexdigest()
        try:
            path = _write_once(self.folder, f"{digest}{suffix}", sent)
        except OSError as error:
            raise ImagePathError(
                f"{name}: could not be stored in {self.folder} ({error.strerror}); free space "
                f"there or point {CACHE_ENV} at a writable folder"
            ) from error
        self._pending.append((source, digest, suffix, conversion))
        return PreparedImage(path, digest, source, conversion)


def read_image_bytes(path: Path, name: str) -> bytes:
    """An image file's bytes through the bounded reader (a regular file of at most
    MAX_IMAGE_BYTES, opened without blocking); ImagePathError naming ``name`` otherwise."""
    try:
        return read_user_bytes(path, MAX_IMAGE_BYTES, "image")
    except UserFileError as error:
        raise ImagePathError(f"{name!r}: {str(error).removeprefix(f'image {path}: ')}") from None
