"""How CPU loops are compiled: Numba, cached on disk, parallel only when it pays.

``njit`` compiles a loop twice, lazily: with ``parallel=True`` (``prange``
spreads rows over the cores) and serially (``prange`` is then ``range``). A
call picks the parallel version only when its largest array has at least
``PARALLEL_MIN_ELEMENTS`` elements (environment variable
``ZERO_PARALLEL_MIN_ELEMENTS``); by default never. Measured on 2 cores: waking
Numba's thread pool cost 5.9 ms for a [64, 10] cross-entropy (0.33 ms serial),
and even on large arrays a parallel region started right after a matrix
product fights OpenBLAS's still-spinning threads for the cores -- a GPT step
(4 layers, 128 wide, batch 32 x 64) took 258 ms with parallel loops above 65,536
elements and 158 ms with serial loops. BLAS keeps using every core.

``cache=True`` keeps the machine code next to the source, so a second process
loads a kernel in milliseconds instead of compiling it for about a second. The
fastmath flags allow reassociation (vectorised sums) but not "no infinities",
so masked -inf scores stay correct.
"""
from __future__ import annotations

import functools
import os
import types

import numba

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
PARALLEL_MIN_ELEMENTS = int(os.environ.get("ZERO_PARALLEL_MIN_ELEMENTS", 1 << 62))
prange = numba.prange
njit_serial = numba.njit(cache=True, fastmath=FASTMATH)


def _twin(fn, suffix: str):
    """A copy of ``fn`` under another qualified name, so Numba caches the two
    compilations of one source function in separate files."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + suffix
    twin.__module__ = fn.__module__
    return twin


def njit(fn):
    """Compile ``fn`` for parallel and for serial execution; choose per call by size."""
    parallel = numba.njit(parallel=True, cache=True, fastmath=FASTMATH)(fn)
    serial = numba.njit(cache=True, fastmath=FASTMATH)(_twin(fn, "__serial"))

    @functools.wraps(fn)
    def dispatch(*args):
        largest = max((a.size for a in args if hasattr(a, "size")), default=0)
        return (parallel if largest >= PARALLEL_MIN_ELEMENTS else serial)(*args)

    dispatch.parallel, dispatch.serial = parallel, serial
    return dispatch
