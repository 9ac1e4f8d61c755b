"""What the jobs share: argument checks, devices, progress bars, metrics files, memory figures."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..backends.device import Device
from ..errors import UsageError


def require_at_least(args, minimum: int, *names: str) -> None:
    """Each ``--name`` (attribute ``name`` of the parsed ``args``) must be at least ``minimum``."""
    for name in names:
        value = getattr(args, name)
        if value < minimum:
            raise UsageError(f"--{name.replace('_', '-')} must be at least {minimum}, got {value}")


def resolve_device(name: str) -> Device:
    device = Device(name)
    device.backend  # noqa: B018  (raises a clear DeviceError when CUDA is not usable)
    return device


def progress(iterable, total: int, description: str):
    """A tqdm bar when stdout is a terminal, the plain iterable otherwise."""
    if not sys.stdout.isatty():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=description, leave=False, dynamic_ncols=True)


class MetricsFile:
    """One JSON object per line, flushed as written so a crash loses nothing."""

    def __init__(self, path: str | None, append: bool = False):
        self.file = None
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.file = open(path, "a" if append else "w", encoding="utf-8")

    def write(self, record: dict) -> None:
        if self.file is not None:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()
            os.fsync(self.file.fileno())

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def peak_memory(device: Device) -> int:
    """Peak bytes held by tensors on the device since start-up (the allocator's statistics)."""
    return device.backend.allocator.memory_stats()["peak_bytes"]


def trim_device_pool(device: Device) -> None:
    """Return cached device blocks before and after sampling (the book's TrimFreePool): the
    training-sized blocks would not be reused by a batch of one. The CPU keeps its cache."""
    if device.type == "cuda":
        device.backend.allocator.empty_cache()
