"""How the kernel functions reach Triton: array arguments, block sizes, launches.

A kernel function (``layer_norm_forward(x, ...)``) receives CuPy arrays on the
GPU. Triton takes any object with ``data_ptr()`` and ``dtype`` as a pointer
argument, so ``DevicePointer`` wraps a CuPy array in those two attributes.

The same kernel functions also accept NumPy arrays: under ``TRITON_INTERPRET=1``
they become ``HostArray`` arguments and the kernels run on the host. That is
how CI checks every Triton kernel against the CPU kernels without a GPU; the
block sizes, grids and argument lists checked are the ones a GPU run uses.

``recorder``, when set (by the ahead-of-time compile check), receives each
launch instead of Triton, so a test can compile exactly what a training step
would launch, for sm_90, on a machine without a GPU.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..triton_interpreter import HostArray, interpreting, patch_interpreter, typed_scalars

# Set by tests/backends/cuda/compile_all.py: called as recorder(kernel, grid, args, meta) instead of launching.
recorder: Callable[[Any, tuple, tuple, dict], None] | None = None


class DevicePointer:
    """A CuPy array as a Triton pointer argument: its address and element type."""

    __slots__ = ("dtype", "ptr")

    def __init__(self, array):
        self.ptr = array.data.ptr
        self.dtype = array.dtype

    def data_ptr(self) -> int:
        return self.ptr


def _argument(value):
    if isinstance(value, np.ndarray):
        if not interpreting():
            raise TypeError("a NumPy array reached a CUDA kernel; Triton kernels run on NumPy arrays only "
                            "under TRITON_INTERPRET=1 (tests). Move the tensor with .to('cuda').")
        return HostArray(value)
    if isinstance(value, (np.integer, np.bool_)):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if hasattr(value, "data") and hasattr(value.data, "ptr"):  # a CuPy array
        return DevicePointer(value)
    return value


def launch(kernel, grid: tuple, *args, **meta) -> None:
    """``kernel[grid](*args, **meta)`` with arrays turned into pointers. ``meta`` holds the
    constexpr parameters and Triton's launch options (``num_warps``, ``num_stages``).
    Returns at once: the GPU runs the kernel when the stream reaches it."""
    if recorder is not None:
        recorder(kernel, grid, args, meta)
        return
    arguments = [_argument(a) for a in args]
    if interpreting():
        patch_interpreter()
        arguments = typed_scalars(kernel, arguments)
    kernel[grid](*arguments, **meta)


# -- choosing sizes --------------------------------------------------------------------------


def next_power_of_2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def row_block(width: int, largest: int = 4096) -> int:
    """Columns one program handles per step of its loop over a row: the row's width
    rounded up to a power of two (at least 16), at most ``largest``."""
    return min(max(16, next_power_of_2(width)), largest)


def warps_for(block: int) -> int:
    """One warp per 256 elements of a block, between 1 and 8."""
    return min(8, max(1, block // 256))


ELEMENTWISE_BLOCK = 1024


def elementwise_grid(n: int) -> tuple:
    return (max(1, cdiv(n, ELEMENTWISE_BLOCK)),)
