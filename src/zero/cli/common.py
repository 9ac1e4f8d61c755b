"""What the jobs share: devices, metrics files, memory figures. (The rules for arguments
are in ``arguments``; what a job prints while it runs, in ``console``.)"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..backends.device import Device
from ..errors import DataError, FileWriteError, OutOfMemoryError, UsageError, ZeroError, human_bytes

try:
    import fcntl
except ImportError:  # not POSIX: the metrics file is not locked
    fcntl = None  # type: ignore[assignment]


def resolve_device(name: str) -> Device:
    device = Device(name)
    device.backend  # noqa: B018  (raises a clear DeviceError when CUDA is not usable)
    return device


def memory_detail(error: MemoryError) -> str:
    """What a job's out-of-memory line adds from the allocator's error: ', 2.0 GiB asked for
    while tensors held 1.5 GiB' (nothing for a MemoryError that did not come from a pool)."""
    if not isinstance(error, OutOfMemoryError) or not error.requested:
        return ""
    return f", {human_bytes(error.requested)} asked for while tensors held {human_bytes(error.live)}"


def check_checkpoint(checkpoint, path, job: str, required: dict, optional: dict | None = None) -> dict:
    """``checkpoint`` (what ``zero.load`` gave for ``--resume path``) checked to be ``job``'s:
    a dict holding each ``required`` field, and each field of either table that it holds of
    the type (or tuple of types) given; else a one-line DataError naming the file and the field."""
    if not isinstance(checkpoint, dict) or any(key not in checkpoint for key in required):
        raise DataError(f"--resume: {path} is not a `{job}` checkpoint")
    for key, kind in {**required, **(optional or {})}.items():
        value = checkpoint.get(key)
        if key in checkpoint and not isinstance(value, kind):
            names = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
            raise DataError(f"--resume: {path}: corrupt checkpoint: its {key!r} is of type {type(value).__name__}, "
                            f"not {names}")
    return checkpoint


def restore_error(path, error: Exception) -> DataError:
    """The one-line error for a checkpoint whose fields have the right types but cannot be
    restored (a random-number state without its seed, an optimizer state of another shape)."""
    detail = str(error) if isinstance(error, ZeroError) else f"{type(error).__name__}: {error}"
    return DataError(f"--resume: {path}: cannot restore this checkpoint ({detail})")


class MetricsFile:
    """One JSON object per line, flushed as written so a crash loses nothing.

    A new run starts the file afresh. A resumed run (``keep_until`` given) keeps the
    records up to the one whose ``key`` is ``keep_until`` -- the step its checkpoint was
    written at -- and cuts the rest (records of steps it will run again, a line torn by a
    crash), so the file never holds a step twice. The file is locked (``flock``) while
    open: two trainers never write into one metrics file.
    """

    def __init__(self, path: str | None, key: str = "step", keep_until: int | None = None):
        self.file = None
        self.path = path
        if not path:
            return
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "a+b")
        if fcntl is not None:
            try:
                fcntl.flock(self.file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self.file.close()
                self.file = None
                raise UsageError(f"--metrics {path}: another trainer is writing this file") from None
        self.file.seek(0)
        self.file.truncate(0 if keep_until is None else _records_end(self.file, key, keep_until))

    def write(self, record: dict, sync: bool = True) -> None:
        """Append ``record``; on a full disk, cut the torn line off and say what was kept.
        Written at once (a crash of the process loses nothing); ``sync`` also waits for the
        disk (a power cut loses nothing before it), which a job asks for at each line it
        prints, not at every step."""
        if self.file is None:
            return
        fd = self.file.fileno()  # written unbuffered (appending): nothing left in a buffer to fail again at close
        end = os.fstat(fd).st_size
        try:
            data = memoryview((json.dumps(record) + "\n").encode("utf-8"))
            while data:
                data = data[os.write(fd, data):]
            if sync:
                os.fsync(fd)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, end)
            failure = FileWriteError(e.errno, e.strerror, self.path)
            failure.message = (f"{self.path}: a record not written ({e.strerror or e}); the records before it "
                               "are kept")
            raise failure from None

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _records_end(file, key: str, last: int) -> int:
    """Byte offset just past the leading records whose ``key`` is at most ``last``."""
    end = 0
    for line in iter(file.readline, b""):
        try:
            value = json.loads(line).get(key)
        except (ValueError, AttributeError):  # a line torn by a crash, or not a record
            break
        if not line.endswith(b"\n") or not isinstance(value, int) or value > last:
            break
        end += len(line)
    return end


def peak_memory(device: Device) -> int:
    """Peak bytes held by tensors on the device since start-up (the allocator's statistics)."""
    return device.backend.allocator.memory_stats()["peak_bytes"]


def trim_device_pool(device: Device) -> None:
    """Return cached device blocks before and after sampling (the book's TrimFreePool): the
    training-sized blocks would not be reused by a batch of one. The CPU keeps its cache."""
    if device.type == "cuda":
        device.backend.allocator.empty_cache()
