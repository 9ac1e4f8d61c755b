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

Fast launches. ``kernel[grid](...)`` costs tens of microseconds of Python per launch
in Triton 3.6 (it binds and specializes every argument, builds a cache key, reads its
settings, wraps each pointer), and the first GPU runs found a GPT step bound by the
host, not the GPU. So ``launch`` remembers, per kernel and *argument class*, the
compiled kernel Triton chose, and later calls its launcher directly with raw
addresses. An argument class holds everything Triton specializes on -- each
pointer's dtype and 16-byte alignment, each integer's being 1, its divisibility by
16 and its width, a constexpr's value -- and more (the keyword values, the
positional types), so a class never spans two of Triton's compiled kernels: the
first launch of each class goes through Triton, which compiles or finds the kernel.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from triton import knobs as triton_knobs

from .. import triton_driver
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


class _Launcher:
    """A kernel Triton compiled for one argument class, and what its launcher takes besides
    the call's own arguments: the keyword and default values of the later parameters.

    Triton's launcher object allocates the kernel's scratch memory, when it needs any, and
    passes everything on to its compiled C function; a kernel without scratch memory (all of
    Zero's) calls that function directly here, one Python frame less per launch."""

    __slots__ = ("run", "function", "metadata", "tail", "direct", "head")

    def __init__(self, compiled, kernel, positional: int, meta: dict):
        run = compiled.run                        # Triton's launcher (handles loaded by the first launch)
        self.run = run
        self.function = compiled.function
        self.metadata = compiled.packed_metadata
        self.tail = tuple(meta[p.name] if p.name in meta else p.default for p in kernel.params[positional:])
        no_scratch = getattr(run, "global_scratch_size", None) == 0 and getattr(run, "profile_scratch_size", None) == 0
        self.direct = run.launch if no_scratch and hasattr(run, "launch") else None
        self.head = (getattr(run, "launch_cooperative_grid", False), getattr(run, "launch_pdl", False), None, None)

    def __call__(self, grid: tuple, stream: int, values: list) -> None:
        x, y, z = grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1
        if self.direct is not None:   # (cooperative, pdl, no global scratch, no profile scratch)
            self.direct(x, y, z, stream, self.function, *self.head, self.metadata, None, None, None, *values,
                        *self.tail)
        else:
            self.run(x, y, z, stream, self.function, self.metadata, None, None, None, *values, *self.tail)


# Keyed by the kernel's id: hashing a Triton kernel object reads its source hash under a lock.
_launchers: dict[tuple, _Launcher] = {}
_constexpr_positions: dict[int, frozenset] = {}


def _integer_class(value: int, constexpr: bool):
    """What Triton specializes an integer argument on: 1 (compiled in), divisible by 16,
    32-bit, unsigned 64-bit; a constexpr's value itself."""
    if constexpr:
        return ("=", value)
    return (value == 1, value % 16 == 0, -(1 << 31) <= value < (1 << 31), value >= (1 << 63))


def _fast_arguments(kernel, args) -> tuple[list, tuple] | None:
    """The launcher's arguments (CuPy arrays as addresses) and their class; None when an
    argument is of a kind only Triton's own path takes."""
    constexprs = _constexpr_positions.get(id(kernel))
    if constexprs is None:
        constexprs = _constexpr_positions[id(kernel)] = frozenset(p.num for p in kernel.params if p.is_constexpr)
    values: list = []
    classes: list = []
    device_array = _device_array_type()
    for position, value in enumerate(args):
        kind = type(value)
        if kind is device_array:   # a CuPy array, as its address (other arrays: Triton's own path)
            dtype, value = value.dtype, value.data.ptr
            classes.append((dtype, value % 16 == 0))
        elif kind is float:
            classes.append(float)
        elif kind is int:
            classes.append(_integer_class(value, position in constexprs))
        elif kind is bool or value is None:
            classes.append((kind, value))
        elif isinstance(value, (np.integer, np.bool_)):   # as Triton's own path gets them (_argument)
            value = int(value)
            classes.append(_integer_class(value, position in constexprs))
        elif isinstance(value, np.floating):
            value = float(value)
            classes.append(float)
        else:
            return None
        values.append(value)
    return values, tuple(classes)


def _device_array_type():
    """CuPy's ndarray type (looked up once, when the first fast launch needs it)."""
    global _cupy_ndarray
    if _cupy_ndarray is None:
        from ..runtime import cupy

        _cupy_ndarray = cupy().ndarray
    return _cupy_ndarray


_cupy_ndarray = None


def launch(kernel, grid: tuple, *args, **meta) -> None:
    """``kernel[grid](*args, **meta)`` with arrays turned into pointers. ``meta`` holds the
    constexpr parameters and Triton's launch options (``num_warps``, ``num_stages``).
    Returns at once: the GPU runs the kernel when the stream reaches it."""
    if recorder is not None:
        recorder(kernel, grid, args, meta)
        return
    stream = triton_driver.launch_stream()   # None until Zero's driver is installed (and under the interpreter)
    fast = None
    if stream is not None and _no_launch_hooks():
        fast = _fast_arguments(kernel, args)
        if fast is not None:
            values, classes = fast
            key = (id(kernel), classes, tuple(meta.items()))
            launcher = _launchers.get(key)
            if launcher is not None:
                launcher(grid, stream, values)
                return
    if interpreting():
        patch_interpreter()
        kernel[grid](*typed_scalars(kernel, [_argument(a) for a in args]), **meta)
        return
    compiled = kernel[grid](*[_argument(a) for a in args], **meta)
    if fast is not None and hasattr(compiled, "function"):  # (not a future of an asynchronous compile)
        _launchers[key] = _Launcher(compiled, kernel, len(args), meta)


def _no_launch_hooks() -> bool:
    """Whether nothing hooks into Triton's launches (a profiler's hooks need its own path)."""
    return _empty(triton_knobs.runtime.launch_enter_hook) and _empty(triton_knobs.runtime.launch_exit_hook)


def _empty(hook) -> bool:
    return hook is None or getattr(hook, "calls", None) == []   # Triton 3.6: a HookChain of calls


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
