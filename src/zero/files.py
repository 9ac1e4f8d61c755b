"""Writing a file all at once or not at all (checkpoints, prepared data, downloads).

The bytes go to a temporary file in the target's directory, are flushed and
fsync'ed, and ``os.replace`` puts the file in place; then the directory is
fsync'ed. A crash at any moment leaves either the old file or the new one,
never a half-written one (a writer killed by SIGKILL may leave its
``.NAME.*.tmp`` file behind, beside the intact target).
"""
from __future__ import annotations

import contextlib
import os
import tempfile

_CHUNK_BYTES = 1 << 20  # os.write at most this much at a time


class _AtomicFile:
    """What ``atomic_write`` yields: ``write(bytes)`` into the temporary file."""

    def __init__(self, fd: int, temporary: str):
        self.fd = fd
        self.temporary = temporary
        self.bytes_written = 0

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        while view:
            written = os.write(self.fd, view[:_CHUNK_BYTES])
            view = view[written:]
            self.bytes_written += written
        return len(data)


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


@contextlib.contextmanager
def atomic_write(path):
    """Write a file all at once or not at all.

        with atomic_write("ckpt.safetensors") as f:
            f.write(data)

    Inside the block, writes go to a temporary file beside ``path``. When the
    block ends normally the file is flushed, fsync'ed and renamed onto ``path``
    (then the directory is fsync'ed); when it raises, the temporary file is
    removed and ``path`` is untouched. Raising inside the block (say, on a
    checksum mismatch) is how a caller refuses what it wrote.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, _new_file_mode(path))
        yield _AtomicFile(fd, temporary)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temporary, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)
