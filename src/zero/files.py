"""Writing a file all at once or not at all (checkpoints, prepared data, downloads).

The bytes go to a temporary file in the target's directory, are flushed and
fsync'ed, and ``os.replace`` puts the file in place; then the directory is
fsync'ed. A crash at any moment leaves either the old file or the new one,
never a half-written one.

A writer killed by SIGKILL leaves its ``.NAME.*.tmp`` file behind, beside the
intact target; the next write of NAME removes it. A writer holds an exclusive
``flock`` on its temporary while it writes, so the clean-up can tell an orphan
(whose writer is gone: the kernel dropped its lock) from a temporary another
process is writing right now, and leaves the latter alone.

``atomic_copy(source, target)`` copies a file the same way: the old target or the
whole copy, never a part.

A write that fails (a full disk, a file-size limit, a missing directory, a permission
refused) raises ``zero.errors.FileWriteError``: an OSError with the system's errno whose
message is one line naming the path the caller gave (never the temporary) and saying
what was kept there -- the previous file, intact, or nothing at all.
"""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile

from .errors import FileWriteError, human_bytes

try:
    import fcntl
except ImportError:  # not on POSIX: no locks, and orphans are left alone
    fcntl = None  # type: ignore[assignment]

_CHUNK_BYTES = 1 << 20  # os.write at most this much at a time


class _AtomicFile:
    """What ``atomic_write`` yields: ``write(bytes)`` into the temporary file."""

    def __init__(self, fd: int, temporary: str, path: str = "", existed: bool = False):
        self.fd = fd
        self.temporary = temporary
        self.path = path  # the name the caller gave: what errors name
        self.existed = existed  # whether a previous file sits at ``path`` (kept if this write fails)
        self.bytes_written = 0

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        while view:
            try:
                written = os.write(self.fd, view[:_CHUNK_BYTES])
            except OSError as e:
                raise self.failed(e) from None
            view = view[written:]
            self.bytes_written += written
        return len(data)

    def failed(self, error: OSError) -> FileWriteError:
        """The error to raise for ``error`` met while writing this file."""
        done = f", after {human_bytes(self.bytes_written)}" if self.bytes_written else ""
        return not_written(self.path, error, self.existed, f"{_reason(error)}{done}")


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def not_written(path: str, error: OSError, existed: bool, reason: str | None = None) -> FileWriteError:
    """The one-line error for a write of ``path`` that failed with ``error``: the path, the
    problem, and what was kept there."""
    kept = ("the previous file at this path is intact" if existed
            else "nothing was created at this path")
    failure = FileWriteError(error.errno, error.strerror, path)
    failure.message = f"{path}: not written ({reason or _reason(error)}); {kept}"
    return failure


def _cannot_create(path: str, error: OSError, existed: bool) -> FileWriteError:
    """The error for a temporary that could not be made beside ``path``: about its directory."""
    directory = os.path.dirname(path) or "."
    if error.errno == errno.ENOENT:
        reason = f"no directory {directory}"
    elif error.errno == errno.ENOTDIR:
        reason = f"{directory} is not a directory"
    else:
        reason = f"cannot create a file in {directory}: {_reason(error)}"
    return not_written(path, error, existed, reason)


def _new_file_mode(path: str) -> int:
    """The mode a plain ``open(path, "wb")`` would give: the old file's, else 0o666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open directories; the rename is still done
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _temporary_prefix(path: str) -> str:
    return f".{os.path.basename(path)}."


def remove_orphaned_temporaries(path) -> list[str]:
    """Remove the ``.NAME.*.tmp`` files beside ``path`` that no live writer holds (left by a
    writer that was killed); returns their paths."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    prefix = _temporary_prefix(path)
    removed: list[str] = []
    if fcntl is None:
        return removed
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        candidate = os.path.join(directory, name)
        try:
            fd = os.open(candidate, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # gone already, or not a plain file
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer holds it
            os.close(fd)
            continue
        try:
            os.unlink(candidate)
            removed.append(candidate)
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def atomic_write(path):
    """Write a file all at once or not at all.

        with atomic_write("ckpt.safetensors") as f:
            f.write(data)

    Inside the block, writes go to a temporary file beside ``path``. When the
    block ends normally the file is flushed, fsync'ed and renamed onto ``path``
    (then the directory is fsync'ed); when it raises, the temporary file is
    removed and ``path`` is untouched. Raising inside the block (say, on a
    checksum mismatch) is how a caller refuses what it wrote. Temporaries of
    ``path`` left by killed writers are removed first.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    existed = os.path.lexists(path)
    remove_orphaned_temporaries(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix=".tmp", dir=directory)
    except OSError as e:
        raise _cannot_create(path, e, existed) from None
    file = _AtomicFile(fd, temporary, path, existed)
    try:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # ours alone: tells a clean-up this temporary is alive
            os.fchmod(fd, _new_file_mode(path))
        except OSError as e:
            raise file.failed(e) from None
        yield file
        try:
            os.fsync(fd)  # a full disk may show only here (delayed allocation, NFS)
            closing, fd = fd, -1
            os.close(closing)
            os.replace(temporary, path)
        except OSError as e:
            raise file.failed(e) from None
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)


def atomic_copy(source, target) -> None:
    """Copy the file ``source`` to ``target`` all at once or not at all (``atomic_write``): a
    reader sees the old ``target`` or the whole copy. A file of its own, not a second name
    of ``source``: damage to one leaves the other whole."""
    with open(source, "rb") as original, atomic_write(target) as copy:
        while chunk := original.read(_CHUNK_BYTES):
            copy.write(chunk)
