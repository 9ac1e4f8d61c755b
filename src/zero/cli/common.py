"""What the jobs share: devices, metrics files, memory figures. (The rules for arguments
are in ``arguments``; what a job prints while it runs, in ``console``.)"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..backends.device import Device
from ..errors import OutOfMemoryError, UsageError, human_bytes

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

    def write(self, record: dict) -> None:
        if self.file is not None:
            self.file.write((json.dumps(record) + "\n").encode("utf-8"))
            self.file.flush()
            os.fsync(self.file.fileno())

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
