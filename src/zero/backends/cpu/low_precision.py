"""float16 and bfloat16 for the CPU's own kernels: computed in float32, rounded once.

The Numba loops (softmax, layer norm, GELU, convolution, the fused ops ...) are compiled
for float32 and float64; NumPy has no bfloat16 arithmetic of its own either (ml_dtypes'
type computes element by element, and a matrix product would accumulate in bfloat16).
``in_float32(kernel)`` lets such a kernel take 16-bit float arrays, as PyTorch's CPU does
for its bfloat16 kernels: each 16-bit argument becomes a float32 copy, the kernel runs on
the copies, and the copies it wrote are rounded back into the arguments (the outputs; an
input comes back unchanged, so it is not written). Correctness, not speed: the copies cost
memory and time, and a float32 or float64 call pays one look at its arguments' item sizes.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np


def in_float32(kernel: Any) -> Any:
    """``kernel``, also for float16 and bfloat16 arrays (module docstring)."""

    @functools.wraps(kernel)
    def run(*args: Any, **kwargs: Any) -> Any:
        for value in args:
            if getattr(value, "itemsize", 0) == 2:          # (Zero's only 2-byte dtypes are the 16-bit floats)
                return _run_in_float32(kernel, args, kwargs)
        for value in kwargs.values():
            if getattr(value, "itemsize", 0) == 2:
                return _run_in_float32(kernel, args, kwargs)
        return kernel(*args, **kwargs)

    return run


def _run_in_float32(kernel: Any, args: tuple, kwargs: dict) -> Any:
    copies: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # (argument, its float32 copy, as it was)

    def widen(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.itemsize == 2 and value.dtype.kind != "i" \
                and value.dtype.kind != "u":
            copy = value.astype(np.float32)
            copies.append((value, copy, copy.copy()))
            return copy
        if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
            return type(value)(widen(v) for v in value)
        return value

    result = kernel(*(widen(a) for a in args), **{k: widen(v) for k, v in kwargs.items()})
    for argument, copy, before in copies:
        if not np.array_equal(copy, before, equal_nan=True):   # written: an output
            argument[...] = copy
    return result
