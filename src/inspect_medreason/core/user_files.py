"""Reading a file the user names: a regular file under a stated size, or a one-line refusal.

A path the user gives can name anything: a FIFO (``open`` blocks until a writer comes, which
may be never), a device or a link to one (``/dev/zero`` reads until memory runs out), a file
far larger than its kind can be, or one still growing. Every reader of a user file goes
through :func:`read_user_bytes`, which opens without blocking (``O_NONBLOCK``: opening a
FIFO returns at once), checks what was opened (``fstat`` of the descriptor, not of the
name, so the name cannot be swapped between the check and the read), and reads at most
``limit + 1`` bytes, so a file that grows past its limit while being read is refused, never
read to the end. A symbolic link to a regular file is followed, as any reader would.

The limits per kind of file are here, one place, and the command's ``--help`` and
``docs/medreason_command.md`` state them.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
# results.json / a submission (.json or .zip), ground_truth.json, judge_scores.json (also as
# an agreement --reference), cases.json and the other data files: the challenge's files hold
# a few thousand cases (a 4,000-case results.json is about 3 MiB); 256 MiB is a hundred
# thousand cases with long reasoning traces, and the size a zipped results.json may unpack
# to (official.MAX_MEMBER_BYTES).
MAX_DATA_BYTES = 256 * MIB
# A ratings file saved from a rating page: 60 cases of three scores and a comment each is a
# few KiB; 50 MiB (the limit it had) leaves room for any page a person can rate.
MAX_RATINGS_BYTES = 50 * MIB
# A calibration file: four isotonic maps of at most a few dozen points, and the judges'
# record: a few KiB.
MAX_CALIBRATION_BYTES = 1 * MIB
# A .json eval log, which Inspect reads whole into memory (a .eval log is read entry by
# entry, each entry bounded by log_reading.MAX_ENTRY_BYTES): a 4,000-case .json log without
# images is about 40 MiB; with images logged it can be some hundreds.
MAX_JSON_LOG_BYTES = 2048 * MIB
# An image that check-data decodes (the rating page's own limit, rating.MAX_IMAGE_BYTES).
MAX_IMAGE_BYTES = 64 * MIB


class UserFileError(ValueError):
    """A user file that cannot be read: the message names the path and what to do."""


def describe_limit(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit:,} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular(path: Path, what: str, limit: int | None) -> tuple[int, int]:
    """An open descriptor on ``path`` and its size, once the opened file is known to be a
    regular file within ``limit``; UserFileError otherwise (the descriptor closed)."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserFileError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise UserFileError(f"{what} {path}: is a folder; give the file itself") from None
    except OSError as error:
        raise UserFileError(
            f"{what} {path}: cannot be opened ({error.strerror}); check the path and its "
            "permissions"
        ) from None
    try:
        info = os.fstat(fd)  # of what was opened: a name swapped after the open cannot fool it
        if not stat.S_ISREG(info.st_mode):
            hint = (
                "give the file itself"
                if stat.S_ISDIR(info.st_mode)
                else "give a regular file (copy it to one first)"
            )
            raise UserFileError(f"{what} {path}: is {_kind(info.st_mode)}, not a file; {hint}")
        if limit is not None and info.st_size > limit:
            raise UserFileError(
                f"{what} {path}: {info.st_size / MIB:,.1f} MiB, larger than the "
                f"{describe_limit(limit)} limit for this file; is it the right file?"
            )
        # Reads of a regular file never return EAGAIN; blocking mode again keeps it plain.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def check_regular_file(path: Path, what: str, limit: int | None = None) -> None:
    """Refuse ``path`` unless it is a regular file (within ``limit``), before a library
    that would block on a FIFO or read a device without end opens it by name."""
    fd, _ = _open_regular(path, what, limit)
    os.close(fd)


def read_user_bytes(path: Path, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; UserFileError (naming the
    path, the limit and what to do) for anything else: a missing file, a folder, a FIFO, a
    device, a link to one, a file over the limit or one growing past it while read."""
    fd, _ = _open_regular(path, what, limit)
    chunks: list[bytes] = []
    total = 0
    try:
        with os.fdopen(fd, "rb", closefd=True) as handle:
            while total <= limit:
                chunk = handle.read(min(limit + 1 - total, 8 * MIB))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
    except OSError as error:
        raise UserFileError(f"{what} {path}: cannot be read ({error.strerror})") from None
    if total > limit:
        raise UserFileError(
            f"{what} {path}: grew past the {describe_limit(limit)} limit for this file while "
            "it was read; wait until whatever writes it has finished"
        )
    return b"".join(chunks)


def read_user_text(path: Path, limit: int, what: str) -> str:
    """:func:`read_user_bytes` as UTF-8 text (a byte-order mark is not text: it is refused
    as JSON would refuse it)."""
    data = read_user_bytes(path, limit, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserFileError(
            f"{what} {path}: not UTF-8 text ({error.reason} at byte {error.start}); save it as "
            "UTF-8"
        ) from None


def read_user_json(path: Path, limit: int, what: str) -> Any:
    """The JSON document of a user file, as ``json.loads`` reads it (NaN and Infinity
    literals included); UserFileError for a file that cannot be read or parsed."""
    text = read_user_text(path, limit, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserFileError(f"{what} {path}: not valid JSON ({error})") from None
    except RecursionError:
        raise UserFileError(f"{what} {path}: JSON nested too deeply to read") from None


# JSON nested deeper than this is refused before any parser sees it: Python's json raises
# RecursionError near 1,000 levels, and the parsers ``datasets`` uses (pyarrow's) may
# exhaust the stack and crash the process. No published data set nests beyond ten.
MAX_JSON_DEPTH = 100


# Bytes scanned at a time, so that a file of nothing but brackets is scanned in bounded
# memory (about 30 bytes per byte scanned at worst: 30 MiB, where the whole 256 MiB at once
# would take gigabytes).
DEPTH_SCAN_CHUNK = 1 * MIB


def json_nesting_depth(text: str | bytes) -> int:
    """How deep the arrays and objects of JSON (or JSONL) ``text`` nest, strings aside;
    text that is not JSON gives a number all the same (the parser then refuses it).
    Vectorised over the brackets and quotes only, a chunk at a time: a 26 MB cases file
    takes a few tenths of a second."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return 0  # cannot nest deeper than it has openers: nothing to scan
    import numpy as np

    # An escaped backslash, then an escaped quote, carry no quote that delimits a string.
    plain = data.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in data else data
    deepest, depth, quotes_so_far = 0, 0, 0
    for start in range(0, len(plain), DEPTH_SCAN_CHUNK):
        codes = np.frombuffer(plain, dtype=np.uint8, offset=start)[:DEPTH_SCAN_CHUNK]
        quotes = np.flatnonzero(codes == ord('"'))
        opens = (codes == ord("[")) | (codes == ord("{"))
        brackets = np.flatnonzero(opens | (codes == ord("]")) | (codes == ord("}")))
        if len(brackets):
            steps = np.where(opens[brackets], 1, -1)
            # A bracket after an odd number of quotes (this chunk's and all before) is text
            # inside a string.
            steps[(np.searchsorted(quotes, brackets) + quotes_so_far) % 2 == 1] = 0
            levels = np.cumsum(steps) + depth
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
        quotes_so_far += len(quotes)
    return deepest


def deep_json_problem(text: str | bytes) -> str | None:
    """Why ``text`` is refused before any parser sees it (nested deeper than
    MAX_JSON_DEPTH), or None."""
    depth = json_nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        return (
            f"JSON nested {depth:,} levels deep, more than the {MAX_JSON_DEPTH} any data file "
            "needs; is it the right file?"
        )
    return None


def refuse_deep_json(text: str | bytes, path: Path, what: str) -> None:
    """UserFileError when ``text`` nests deeper than MAX_JSON_DEPTH."""
    problem = deep_json_problem(text)
    if problem is not None:
        raise UserFileError(f"{what} {path}: {problem}")
