"""Host memory for the CPU allocator: 64-byte aligned NumPy byte buffers."""
from __future__ import annotations

import os
import sys

import numpy as np

from ..caching_allocator import CachingAllocator

ALIGNMENT = 64  # a cache line, and what AVX-512 loads like


class HostMemory:
    """The raw source: a handle is a 64-byte aligned ``uint8`` view into a larger buffer."""

    def malloc(self, nbytes: int) -> np.ndarray:
        raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
        start = (-raw.ctypes.data) % ALIGNMENT
        return raw[start:start + nbytes]

    def free(self, handle: np.ndarray) -> None:
        pass  # NumPy frees the buffer when the last array using it goes away

    def is_exported(self, handle: np.ndarray) -> bool:
        # The buffer is referenced by the handle and by getrefcount's argument; anything
        # more is a NumPy array outside Zero (from Tensor.numpy()) still using the memory.
        return sys.getrefcount(handle.base) > 2


def _env_bytes(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


allocator = CachingAllocator(
    HostMemory(),
    granularity=ALIGNMENT,
    max_oversize_ratio=1.25,  # a free block may be at most 25% larger than the request ...
    max_oversize_bytes=4096,  # ... or 4 KiB larger, whichever allows more
    max_cached_bytes=_env_bytes("ZERO_CPU_CACHE_BYTES", 4 << 30),
)
