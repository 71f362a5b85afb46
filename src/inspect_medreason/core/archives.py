"""Unpacking a dataset's published zip archive (Med-CMR's release, SLAKE's and MedXpertQA's
images) into the cache, once, safely: nothing lands outside its folder, no bomb fills the
disk, a damaged member is the archive's fault, an interrupted unpack leaves nothing."""

from __future__ import annotations

import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.files import file_sha256, fill_folder_atomically
from inspect_medreason.core.images import CACHE_ENV, cache_root
from inspect_medreason.core.loaders import DatasetError, Problem

# An archive that would unpack to more than this is refused (a zip bomb, or the wrong file).
MAX_UNPACKED_BYTES = 64 * 1024**3


def unpack_archive(archive: Path, kind: str) -> Path:
    """Unpack a dataset's zip archive once into the cache (under ``kind``, keyed by its
    content) and return the folder. Members that would land outside it (absolute paths,
    ``..``), links and archives that unpack to more than MAX_UNPACKED_BYTES are refused; an
    interrupted unpack leaves nothing behind."""
    digest = file_sha256(archive)
    target = cache_root() / kind / digest[:32]
    if target.is_dir():
        return target
    try:
        bundle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise _problem(str(archive), f"not a readable zip archive ({error})") from error
    with bundle:
        members = bundle.infolist()
        unsafe = [
            member.filename
            for member in members
            if PurePosixPath(member.filename).is_absolute()
            or ".." in PurePosixPath(member.filename).parts
            or member.filename.startswith(("\\", "/"))
            or stat.S_ISLNK(member.external_attr >> 16)
        ]
        if unsafe:
            raise _problem(
                str(archive),
                f"refused: {len(unsafe)} member(s) would be written "
                f"outside the folder or are links, e.g. {unsafe[0]!r}",
            )
        size = sum(member.file_size for member in members)
        if size > MAX_UNPACKED_BYTES:
            raise _problem(str(archive), f"refused: it would unpack to {size / 1024**3:.1f} GiB")

        def unpack(staging: Path) -> None:
            # One member at a time, so a damaged one is named.
            for member in members:
                try:
                    bundle.extract(member, staging)
                except (zipfile.BadZipFile, zlib.error, EOFError) as error:
                    # A bad CRC, a broken deflate stream, a truncated member: the archive's
                    # fault, whatever the rest of it holds.
                    raise _problem(
                        str(archive),
                        f"member {member.filename!r} is damaged and cannot be unpacked "
                        f"({describe_error(error, 200)}): download the archive again",
                    ) from error
                except OSError as error:
                    # Reading the archive or writing the cache: a full disk or a folder
                    # that cannot be written is the cache's, not the archive's.
                    raise _problem(
                        str(archive),
                        f"member {member.filename!r} could not be unpacked: "
                        + _cache_advice(target.parent, error),
                    ) from error

        try:
            fill_folder_atomically(target, unpack)
        except OSError as error:  # the staging folder or the rename into place
            if not target.is_dir():  # else another process unpacked it meanwhile
                raise _problem(str(archive), _cache_advice(target.parent, error)) from error
    return target


def _cache_advice(folder: Path, error: OSError) -> str:
    return (
        f"{describe_error(error, 200)} while unpacking into {folder}: free space there or "
        f"point {CACHE_ENV} at a writable folder with room"
    )


def _problem(source: str, message: str) -> DatasetError:
    return DatasetError([Problem(source, "-", "data", message)])
