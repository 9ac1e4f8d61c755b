"""What the fused CPU kernels share: scratch memory from the allocator (the vectorisable
exp, tanh and normal CDF are in ``_fastmath``).

Scratch. A fused kernel needs temporaries (a chunk of logits, a block of attention
scores, the FFN's hidden layer during backward). ``scratch`` leases them from the CPU
caching allocator instead of calling ``np.empty``, so ``zero.cpu.memory_stats()`` counts
them and a training step reuses the same blocks instead of asking the system again. A
scratch array is an ordinary array over a lease (``zero.backends.cpu.memory``): its block
goes back to the pool when the array and its views are gone, normally when the kernel
returns.
"""
from __future__ import annotations

import math

import numpy as np

from ..memory import lease


def scratch(count: int, dtype) -> np.ndarray:
    """A flat array of ``count`` elements of ``dtype`` from the pool; shape it with ``shaped``."""
    dtype = np.dtype(dtype)
    return np.ndarray((count,), dtype, buffer=lease(max(count, 1) * dtype.itemsize))


def shaped(flat: np.ndarray, *shape: int) -> np.ndarray:
    """The first prod(shape) elements of a flat scratch array, as a C-contiguous array."""
    return flat[:math.prod(shape)].reshape(shape)
