"""Files: writing results safely (a kill, a full disk or a refusal never leaves a
half-written or destroyed file behind) and naming a file's content by its hash.

A command's outputs go through one place, :class:`OutputSet`: every path is checked before
any work (not a folder, not one of the command's inputs, not another output, a writable
folder, not an existing file unless ``--force``), and at the end all of them are written
together or none is: each to a temporary file beside its target (a full disk fails here,
before anything is replaced), then renamed into place, the files already replaced put back
from backups if a later rename fails.

Signals: under :func:`interruptions_raise` (the ``medreason`` command runs in it) SIGTERM and
SIGHUP raise :class:`Interrupted`, as Ctrl-C raises ``KeyboardInterrupt``, so a write's
clean-up runs (no temporary file, staging folder or backup is left); the few steps that must
not be cut in two (creating a temporary file and noting it, the renames, the clean-up) hold a
signal back until they are done (:func:`signals_held`)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import FrameType


class OutputPathError(ValueError):
    """An output path that cannot or may not be written: one line naming the path and what
    to do."""


# What the user can do about each failure of the file system; a message always ends with one.
_READ_ONLY = "make the folder writable for you or write somewhere else"
_REMEDIES = {
    errno.ENOSPC: "free space on that disk or write to another one",
    errno.EDQUOT: "free space within your disk quota or write somewhere else",
    errno.EFBIG: "it is larger than files may be here (ulimit -f); raise the limit or write "
    "somewhere else",
    errno.EACCES: _READ_ONLY,
    errno.EPERM: _READ_ONLY,
    errno.EROFS: "the file system is read-only; write to a writable one",
    errno.ENOTDIR: "a part of the path is a file, not a folder; correct the path",
    errno.EISDIR: "name a file, not a folder",
    errno.ENAMETOOLONG: "choose a shorter name",
    errno.ENOENT: "create the folder or correct the path",
    errno.ELOOP: "the path has a loop of symbolic links; correct it",
}
_DEFAULT_REMEDY = "check the path and its folder, then run again"


class Interrupted(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP) received: raised like Ctrl-C's
    ``KeyboardInterrupt`` so that every clean-up meant for Ctrl-C runs for it too."""

    def __init__(self, signal_number: int) -> None:
        self.signal_number = signal_number
        super().__init__(signal.Signals(signal_number).name)


def signal_name(interruption: KeyboardInterrupt) -> str:
    """SIGINT, SIGTERM or SIGHUP: which signal raised ``interruption``."""
    return str(interruption) if isinstance(interruption, Interrupted) else "SIGINT"


def signal_number(interruption: KeyboardInterrupt) -> int:
    return interruption.signal_number if isinstance(interruption, Interrupted) else signal.SIGINT


_HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_held: list[int] = []  # how deep signals_held is nested (in the main thread), as a list
_held_back: list[int] = []  # the signals received while held, raised when released


def _raise_for(number: int, frame: FrameType | None) -> None:
    if _held:
        _held_back.append(number)
        return
    if number == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(number)


@contextlib.contextmanager
def interruptions_raise() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise (``KeyboardInterrupt``, :class:`Interrupted`) while
    inside, and are held back within :func:`signals_held`; the previous handlers are put back
    after. A signal the process was started ignoring (``nohup``, a background job) stays
    ignored. Only the main thread can set handlers: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _pending.clear()  # what an earlier command in this process claimed is not this one's
    previous = {number: signal.getsignal(number) for number in _HANDLED_SIGNALS}
    for number, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, _raise_for)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        _held_back.clear()
        _pending.clear()


def ignore_interruptions() -> None:
    """Ignore SIGINT, SIGTERM and SIGHUP until :func:`interruptions_raise` puts the previous
    handlers back: once interrupted, the command only reports, and a second signal must not
    cut that short with a traceback."""
    if threading.current_thread() is threading.main_thread():
        for number in _HANDLED_SIGNALS:
            signal.signal(number, signal.SIG_IGN)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold back the signals :func:`interruptions_raise` turns into exceptions until the
    block is done, then raise the first one received: for steps that must not be cut in two
    (a file created and not yet noted for clean-up, a set of renames, the clean-up itself).
    Python runs signal handlers in the main thread only, so another thread's steps are never
    cut by one: there this does nothing (and never raises the main thread's signal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _held.append(1)
    try:
        yield
    finally:
        _held.pop()
        if not _held and _held_back:
            number = _held_back[0]
            _held_back.clear()
            _raise_for(number, None)


# The outputs claimed by OutputSet and not yet written: what an interruption did not write.
_pending: dict[Path, None] = {}


def claim_output(path: Path) -> None:
    """Note an output written by other means than :class:`OutputSet` (a folder) as pending."""
    _pending[path] = None


def written(path: Path) -> None:
    """An output claimed with :func:`claim_output` is written."""
    _pending.pop(path, None)


def pending_outputs() -> list[Path]:
    """The outputs claimed and not written yet (what an interruption now leaves unwritten)."""
    return list(_pending)


def remedy(error: OSError) -> str:
    """What to do about a failure of the file system, in a few words."""
    return _REMEDIES.get(error.errno or 0, _DEFAULT_REMEDY)


def cannot_write(path: Path, error: OSError) -> OutputPathError:
    """The one-line refusal for a file-system failure while writing ``path``."""
    reason = error.strerror or str(error) or type(error).__name__
    return OutputPathError(f"cannot write {path}: {reason}; {remedy(error)}")


def check_output_path(
    path: Path,
    force: bool,
    inputs: Iterable[str | Path] = (),
    others: Iterable[Path] = (),
) -> None:
    """Refuse, before any work: a folder; one of ``inputs`` (the same file by any spelling,
    link or hard link, or an existing file inside an input folder, which the command may
    read); a path also in ``others`` (another output of the same command); an existing file
    unless ``force``; a path whose folder cannot be created or written; a path that runs
    into a loop of symbolic links."""
    resolved = resolve_output(path)
    _refuse_a_folder_or_existing(path, force)
    _refuse_an_input(path, inputs)
    for other in others:
        if resolve_output(other) == resolved or (other.exists() and _same_file(path, other)):
            raise OutputPathError(
                f"cannot write {path}: it is also given as another output ({other}); give "
                "each output its own path"
            )
    check_writable_folder(path)


def resolve_output(path: Path) -> Path:
    """``path`` with its links followed; a loop of symbolic links anywhere in it is refused
    (Python 3.11 raises ``RuntimeError``, later ones ``OSError``): writing would replace the
    link, not reach a file."""
    try:
        resolved = path.resolve()
        os.stat(path)  # resolve() leaves a loop at the path itself unresolved in 3.12+
    except FileNotFoundError:
        return resolved
    except (RuntimeError, OSError) as error:
        if isinstance(error, RuntimeError) or error.errno == errno.ELOOP:
            raise OutputPathError(
                f"cannot write {path}: the path has a loop of symbolic links; correct it"
            ) from None
        if error.errno in (errno.ENOTDIR, errno.EACCES):
            return path.absolute()  # check_writable_folder names the problem
        raise cannot_write(path, error) from error
    return resolved


def output_path(raw: str | Path) -> Path:
    """An output option's value as a path, refusing what names no file: ``-`` (the commands
    that can print to standard output take ``-`` before this, in their argument's type
    ``cli.command_line.printed_output``) and a path ending in ``/`` (a folder, even one that
    does not exist yet: ``Path`` would drop the slash and write a file of that name)."""
    text = os.fspath(raw)
    if text == "-":
        raise OutputPathError(
            "cannot write -: this output is not printed to standard output; name a file"
        )
    if text.endswith(("/", os.sep)) or text in (".", ".."):
        raise OutputPathError(
            f"cannot write {text}: a path ending in / names a folder; name a file to write "
            f"(e.g. {text.rstrip('/') or '/'}/results.json)"
        )
    return Path(text)


def _refuse_a_folder_or_existing(path: Path, force: bool) -> None:
    if path.is_dir():
        raise OutputPathError(f"cannot write {path}: it is a folder; name a file to write")
    if path.exists() and not path.is_file():
        # An output is replaced whole (a temporary file renamed over it): over a device, a
        # pipe or a socket that would put a regular file in its place (/dev/null among them).
        raise OutputPathError(
            f"cannot write {path}: it is not a regular file (a device, a pipe or a socket), "
            "and outputs are replaced whole; name a file to write, or leave the option out"
        )
    if path.exists() and not force:
        raise OutputPathError(f"cannot write {path}: it exists; pass --force to overwrite it")


def _refuse_an_input(path: Path, inputs: Iterable[str | Path]) -> None:
    # --force replaces outputs, never what the command reads: an output that is an input would
    # be destroyed by the very run that reads it.
    resolved = path.resolve()
    for raw in inputs:
        source = Path(raw)
        if not source.exists():
            continue  # the command reports its missing inputs itself
        if source.is_dir():
            if path.exists() and resolved.is_relative_to(source.resolve()):
                raise OutputPathError(
                    f"cannot write {path}: it is inside the input folder {source} and may be "
                    "read as an input; write it somewhere else (--force never overwrites an "
                    "input)"
                )
        elif resolved == source.resolve() or (path.exists() and _same_file(path, source)):
            raise OutputPathError(
                f"cannot write {path}: it is one of the command's inputs ({source}); write it "
                "somewhere else (--force never overwrites an input)"
            )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_writable_folder(path: Path) -> None:
    """Refuse ``path`` if its folder, or the nearest existing folder above it (the missing
    ones are created when writing), is not a folder or cannot be written: probed by creating
    and removing a temporary file there, which is what writing will do."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputPathError(
            f"cannot write {path}: {folder} is a file, not a folder; correct the path"
        )
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".probe", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise cannot_write(path, error) from error


class OutputSet:
    """The outputs of one command: each checked when added (before the command does any
    work), all written together by :meth:`write` at the end."""

    def __init__(self, force: bool, inputs: Iterable[str | Path | None] = ()) -> None:
        self.force = force
        self.inputs = [Path(item) for item in inputs if item]
        self.paths: list[Path] = []

    def add(self, path: str | Path) -> Path:
        """Check ``path`` now (refusing with :class:`OutputPathError`) and claim it."""
        output = output_path(path)
        check_output_path(output, self.force, self.inputs, self.paths)
        self.paths.append(output)
        _pending[output] = None
        return output

    def write(self, contents: Mapping[Path, bytes | str]) -> list[str]:
        """Write every claimed output (text as UTF-8) together, or none; returns notes about
        leftovers that could not be removed afterwards (the outputs are written)."""
        if sorted(map(str, contents)) != sorted(map(str, self.paths)):
            raise ValueError(  # a programming error: every output is claimed before any work
                f"outputs written {sorted(map(str, contents))} are not the ones checked "
                f"{sorted(map(str, self.paths))}"
            )
        for path in self.paths:  # again: a file or folder may have appeared since the check
            _refuse_a_folder_or_existing(path, self.force)
        return write_outputs_together(
            [
                (path, data.encode("utf-8") if isinstance(data, str) else data)
                for path, data in contents.items()
            ]
        )


def write_outputs_together(outputs: list[tuple[Path, bytes]]) -> list[str]:
    """Write every file, or none: all to temporary files beside their targets first (flushed
    to disk), the files they replace linked to backups, then each renamed into place. If
    anything fails, the outputs already replaced are put back, every temporary file and new
    folder removed, and an :class:`OutputPathError` names the path. Returns notes about
    backups that could not be removed after a success."""
    created: list[Path] = []
    temporaries: dict[Path, Path] = {}
    backups: dict[Path, Path | None] = {}
    replaced: list[Path] = []
    current = outputs[0][0] if outputs else Path()
    try:
        for current, data in outputs:
            make_parents(current, created)
            _write_temporary(current, data, temporaries)
        with signals_held():  # the previous versions kept and all renamed, or none
            for current, _ in outputs:
                backups[current] = _backup(current) if os.path.lexists(current) else None
            for current, _ in outputs:
                os.replace(temporaries[current], current)
                del temporaries[current]  # only once renamed: a failed rename leaves it
                replaced.append(current)
        # After the block: a signal it held back is raised at its end, and the outputs
        # are then put back (below), still pending, as the interruption's message says.
        for current, _ in outputs:
            _pending.pop(current, None)
    except BaseException as error:
        with signals_held():
            unrestored = _undo(replaced, backups, temporaries, created)
        if isinstance(error, OSError):
            failure = cannot_write(current, error)
            if unrestored:
                raise OutputPathError(f"{failure}; and {'; '.join(unrestored)}") from error
            raise failure from error
        raise
    notes = []
    for path, backup in backups.items():
        if backup is not None:
            try:
                backup.unlink()
            except OSError as error:
                notes.append(
                    f"wrote {path}, but could not remove the previous version kept at "
                    f"{backup}: {error.strerror}; delete it"
                )
    return notes


def make_parents(path: Path, created: list[Path] | None = None) -> list[Path]:
    """Create the missing folders above ``path`` (under the umask, as ``mkdir`` does);
    returns them, the outermost first, and appends each to ``created`` as soon as it exists
    (so that an interruption between two never loses one to clean up)."""
    missing = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            with signals_held():
                folder.mkdir()
                made.append(folder)
                if created is not None:
                    created.append(folder)
    except BaseException:
        if created is None:
            with signals_held():
                remove_created_folders(made)
        raise
    return made


def _write_temporary(path: Path, data: bytes, temporaries: dict[Path, Path]) -> None:
    """The bytes in a new file beside ``path``, with ``path``'s permissions, flushed to disk,
    noted in ``temporaries`` from the moment it exists (the caller removes it on failure)."""
    mode = _mode_for(path)
    with signals_held():
        handle, name = tempfile.mkstemp(
            prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent
        )
        temporaries[path] = Path(name)
    try:
        with memoryview(data) as view:
            written = 0
            while written < len(view):
                # os.write, not a buffered file: each short write and failure (ENOSPC,
                # EFBIG) surfaces here, and a test can stand in for a full disk.
                written += os.write(handle, view[written:])
        # mkstemp makes the file private (0600); the result must not be.
        os.fchmod(handle, mode)
        os.fsync(handle)
    finally:
        os.close(handle)


def _backup(path: Path) -> Path:
    """Keep the file about to be replaced under a new name beside it: a hard link (no copy,
    and ``path`` never goes missing), or a copy where the file system has no hard links."""
    while True:
        backup = path.with_name(f".{path.name[:40]}.{secrets.token_hex(4)}.bak")
        try:
            os.link(path, backup, follow_symlinks=False)
            return backup
        except FileExistsError:
            continue
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EXDEV):
                raise
        if not backup.exists():
            shutil.copy2(path, backup, follow_symlinks=False)
            return backup


def _undo(
    replaced: list[Path],
    backups: dict[Path, Path | None],
    temporaries: dict[Path, Path],
    created: list[Path],
) -> list[str]:
    """Put back what a failed write replaced and remove what it made; returns what could
    not be put back (its previous content is then left in the named backup)."""
    unrestored = []
    for path in reversed(replaced):
        backup = backups.pop(path)
        try:
            if backup is None:
                path.unlink()
            else:
                os.replace(backup, path)
        except OSError as error:
            kept = f"its previous content is in {backup}" if backup else "it is new; delete it"
            unrestored.append(f"{path} could not be put back ({error.strerror}): {kept}")
    for leftover in [*temporaries.values(), *(b for b in backups.values() if b is not None)]:
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
    remove_created_folders(created)
    return unrestored


def fill_folder_atomically(target: Path, fill: Callable[[Path], None]) -> None:
    """Make ``target`` (absent, or an empty folder it replaces) a folder holding what ``fill``
    writes into the folder it is given: a staging folder beside ``target``, with the
    permissions ``mkdir`` gives under the umask (not ``mkdtemp``'s 0700), renamed into place
    at the end. A failure or an interruption anywhere removes the staging folder and the
    folders made for it, then raises (an ``OSError`` of the rename as itself)."""
    created: list[Path] = []
    staging: list[Path] = []
    try:
        make_parents(target, created)
        with signals_held():
            staging.append(
                Path(tempfile.mkdtemp(prefix=f".{target.name[:40]}.", dir=target.parent))
            )
        os.chmod(staging[0], 0o777 & ~_umask())
        fill(staging[0])
        with signals_held():
            os.replace(staging[0], target)
            staging.clear()
    except BaseException:
        with signals_held():
            for folder in staging:
                shutil.rmtree(folder, ignore_errors=True)
            remove_created_folders(created)
        raise


def remove_created_folders(created: list[Path]) -> None:
    """Remove the folders a failed write created, innermost first, if still empty."""
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            break  # not empty (something else wrote there) or gone: leave it and those above


def write_bytes_atomically(path: Path, data: bytes, force: bool) -> None:
    """One output, written whole or not at all (see :class:`OutputSet` for several)."""
    outputs = OutputSet(force)
    outputs.add(path)
    outputs.write({path: data})


def write_cache_file(target: Path, data: bytes) -> Path:
    """``data`` as ``target`` in a cache that runs share (converted DICOM, prepared and
    shifted images): written to a temporary file beside it, then renamed, so that another
    run, or a run killed half-way, never reads half a file; a failed write leaves no
    temporary file behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".part-", delete=False) as handle:
        try:
            handle.write(data)
        except BaseException:
            handle.close()
            os.unlink(handle.name)
            raise
    try:
        os.replace(handle.name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        raise
    return target


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
