"""Array helpers shared by the kernel functions; they work on CuPy arrays and, for the
interpreter tests, on NumPy arrays alike."""
from __future__ import annotations

import functools

import numpy as np

from ...array_kernels import array_kernels
from ..runtime import cupy


def array_module(array):
    """``numpy`` for a NumPy array, ``cupy`` otherwise."""
    return np if isinstance(array, np.ndarray) else cupy()


def contiguous(array):
    """The array itself when C-contiguous, else a contiguous copy (for inputs only)."""
    return array if array.flags.c_contiguous else array_module(array).ascontiguousarray(array)


def flat(array):
    """A contiguous 1-D view of an input (copying only when it is not contiguous)."""
    return contiguous(array).reshape(-1)


def output(out):
    """Kernels write their outputs in place: an output must be contiguous (as on the CPU)."""
    if not out.flags.c_contiguous:
        raise ValueError("kernel output must be contiguous")
    return out


@functools.cache
def shared_kernels(xp) -> dict:
    """The kernels shared with the CPU (``array_kernels``) over ``xp``: the fallback of a
    CUDA kernel of the same name for what its own Triton path does not take."""
    return array_kernels(xp)
