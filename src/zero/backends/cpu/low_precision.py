"""float16 and bfloat16 for the CPU's own kernels: computed in float32, rounded once.

The Numba loops (softmax, layer norm, GELU, convolution, the fused ops ...) are compiled
for float32 and float64; NumPy has no bfloat16 arithmetic of its own either (ml_dtypes'
type computes element by element, and a matrix product would accumulate in bfloat16).
``in_float32(kernel)`` lets such a kernel take 16-bit float arrays, as PyTorch's CPU does
for its bfloat16 kernels: each 16-bit argument becomes a float32 copy, the kernel runs on
the copies, and the copies it wrote are rounded back into the arguments (the outputs; an
input comes back unchanged, so it is not written). Correctness, not speed: the copies cost
memory and time; a float32 or float64 call pays one look at one argument's item size.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np


# The argument whose dtype says a call is 16-bit: the first of these a kernel takes (an
# output, or the main input, always an array of the computation's dtype).
_PROBES = ("x", "q", "qkv", "logits", "log_probs", "cols", "out", "grad", "grad_out", "a")


def in_float32(kernel: Any) -> Any:
    """``kernel``, also for float16 and bfloat16 arrays (module docstring). A float32 call
    pays one look at one argument's item size."""
    signature = inspect.signature(kernel).parameters
    parameters = list(signature)
    always = [name for name in parameters if "None" not in str(signature[name].annotation)]  # (never None)
    probe = next((parameters.index(name) for name in _PROBES if name in always), None)
    if probe is None:   # (a kernel without such an argument looks at all of them)
        @functools.wraps(kernel)
        def run_any(*args: Any, **kwargs: Any) -> Any:
            if any(getattr(v, "itemsize", 0) == 2 for v in (*args, *kwargs.values())):
                return _run_in_float32(kernel, args, kwargs)
            return kernel(*args, **kwargs)

        return run_any
    name = parameters[probe]

    @functools.wraps(kernel)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            low = args[probe].itemsize == 2        # (a 16-bit float; int16/uint16 pass through unwidened)
        except (IndexError, AttributeError):       # passed by name, or a number
            low = getattr(kwargs.get(name), "itemsize", 0) == 2
        if low:
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
