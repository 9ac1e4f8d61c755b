"""The CPU backend: NumPy byte buffers from a caching allocator, NumPy/Numba kernels."""
from __future__ import annotations

import numpy as np

from . import kernels
from .memory import allocator

__all__ = ["allocator", "kernels", "array_view", "address_of", "to_numpy", "from_numpy", "check_device"]


def check_device(device) -> None:
    """Every machine has its CPU."""


def array_view(handle: np.ndarray, meta) -> np.ndarray:
    """The NumPy array a kernel sees: the storage's bytes read through the metadata."""
    itemsize = meta.dtype.itemsize
    return np.ndarray(meta.shape, meta.dtype.numpy, buffer=handle, offset=meta.offset * itemsize,
                      strides=tuple(s * itemsize for s in meta.strides))


def address_of(handle: np.ndarray) -> int:
    return handle.ctypes.data


def to_numpy(array: np.ndarray) -> np.ndarray:
    return array


def from_numpy(array: np.ndarray) -> np.ndarray:
    """Host data as this device's array type: on the CPU, the array itself."""
    return array
