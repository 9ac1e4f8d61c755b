"""Array helpers shared by the kernel functions; they work on CuPy arrays and, for the
interpreter tests, on NumPy arrays alike."""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from ...kernel_contract import Array
from ..runtime import cupy


def array_module(array: Any) -> ModuleType:
    """``numpy`` for a NumPy array, ``cupy`` otherwise."""
    return np if isinstance(array, np.ndarray) else cupy()


def contiguous(array: Array) -> Array:
    """The array itself when C-contiguous, else a contiguous copy (for inputs only)."""
    return array if array.flags.c_contiguous else array_module(array).ascontiguousarray(array)


def flat(array: Array) -> Array:
    """A contiguous 1-D view of an input (copying only when it is not contiguous)."""
    return contiguous(array).reshape(-1)


def output(out: Array) -> Array:
    """Kernels write their outputs in place: an output must be contiguous (as on the CPU)."""
    if not out.flags.c_contiguous:
        raise ValueError("kernel output must be contiguous")
    return out



def is_half(dtype: Any) -> bool:
    """Whether a dtype is a 16-bit float: float16, or bfloat16 (``ml_dtypes``' for NumPy)."""
    return dtype.itemsize == 2 and dtype.name in ("float16", "bfloat16")


def accumulator_dtype(dtype: Any) -> Any:
    """The dtype a kernel's scratch of partial sums or statistics takes for inputs of ``dtype``:
    float32 for a 16-bit float (whose kernels compute in float32), else ``dtype`` itself."""
    return np.dtype(np.float32) if is_half(dtype) else dtype
