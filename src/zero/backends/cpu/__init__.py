"""The CPU backend: NumPy memory from a caching allocator, NumPy/Numba kernels.

The interface every backend offers (``zero.backends.cuda`` has the same names):

    allocator                  the caching allocator (statistics, empty_cache)
    lease(nbytes)              the memory of one storage: an anchor array, whose block
                               returns to the pool when it and every array on it are gone
    array_view(handle, meta)   the NumPy array a kernel sees for a tensor
    new_array(handle, shape, dtype)  the same for a new contiguous tensor from offset 0
    address_of(handle)         the address of a storage's first byte
    to_numpy / from_numpy      host arrays (on the CPU, the arrays themselves)
    check_device(device)       nothing to check: every machine has its CPU
    synchronize()              nothing to wait for: CPU kernels finish before they return
    logits_chunk_bytes         how large a chunk of logits linear + cross-entropy makes
    kernels                    the kernel table (``zero.backends.cpu.kernels``)
    lender(pool)               ``lease`` from another allocator (a CUDA graph's pool)
    begin_capture(capture)     record a CUDA graph (the CPU plays "cuda" in the tests: ``graphs``)

and beside them ``threads`` (the pool of threads every kernel shares) and ``parallel``
(when work is split over it).
"""
from __future__ import annotations

import numpy as np

from . import kernels
from .graphs import TapeCapture
from .memory import HostLeases, allocator, lease

__all__ = ["address_of", "allocator", "array_view", "begin_capture", "check_device", "from_numpy", "kernels",
           "lease", "lender", "logits_chunk_bytes", "new_array", "synchronize", "to_numpy"]

# Linear + cross-entropy works on chunks of rows; on the CPU a chunk's logits should stay
# in the cache (about 8 MiB).
logits_chunk_bytes = 8 << 20


def check_device(device) -> None:
    """Every machine has its CPU."""


def synchronize() -> None:
    """CPU kernels have finished when they return."""


def array_view(handle: np.ndarray, meta) -> np.ndarray:
    """The NumPy array a kernel sees: the storage's bytes read through the metadata."""
    itemsize = meta.dtype.itemsize
    # (shape, dtype, buffer, offset, strides) passed by position, the byte strides as a list:
    # every tensor pays this, and it costs half of keywords and a tuple from a generator.
    try:
        return np.ndarray(meta.shape, meta.dtype.numpy, handle, meta.offset * itemsize,
                          [s * itemsize for s in meta.strides])
    except ValueError:
        if 0 not in meta.shape:
            raise
        # An empty view may start past the end of its storage (zeros(0, 100)[:, 50:] has
        # offset 50 in a storage of no elements); it reads nothing, so read from 0.
        return np.ndarray(meta.shape, meta.dtype.numpy, handle, 0, [s * itemsize for s in meta.strides])


def new_array(handle: np.ndarray, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """``array_view`` of a new contiguous tensor: NumPy's default strides, no list to build
    (on every op's output)."""
    return np.ndarray(shape, dtype, handle)


def address_of(handle: np.ndarray) -> int:
    return handle.ctypes.data


def to_numpy(array: np.ndarray) -> np.ndarray:
    return array


def from_numpy(array: np.ndarray) -> np.ndarray:
    """Host data as this device's array type: on the CPU, the array itself."""
    return array


def lender(pool):
    """``lease`` drawing on ``pool`` instead of the CPU's allocator (a CUDA graph's pool)."""
    return HostLeases(pool).lease


def begin_capture(capture) -> TapeCapture:
    """Record ``capture``'s kernel calls on a tape (``graphs``: "cuda" played by the CPU)."""
    return TapeCapture(capture)
