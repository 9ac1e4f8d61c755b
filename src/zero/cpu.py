"""The CPU device's allocator, seen from user code (``zero.cpu.memory_stats()``)."""
from __future__ import annotations

from .backends.cpu.memory import allocator


def memory_stats() -> dict:
    """live, peak, cached and reserved bytes, and the pool's hits and misses."""
    return allocator.memory_stats()


def empty_cache() -> int:
    """Return every cached block to the system; gives the number of bytes freed."""
    return allocator.empty_cache()


def reset_peak_memory_stats() -> None:
    allocator.reset_peak()
