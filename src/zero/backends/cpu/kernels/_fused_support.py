"""What the fused CPU kernels share: scratch memory from the allocator and column sums
accurate in float32 (the vectorisable exp, tanh and normal CDF are in ``_fastmath``).

Scratch. A fused kernel needs temporaries (a chunk of logits, a block of attention
scores, the FFN's hidden layer during backward). They are drawn from the CPU caching
allocator, not from ``np.empty``, so ``zero.cpu.memory_stats()["peak_bytes"]`` counts
them and a training step reuses the same blocks instead of asking the system again:

    def some_kernel(x, out):
        with Workspace() as workspace:
            _body(x, out, workspace)        # every scratch array dies when _body returns

The body must hold the only references to its scratch arrays, so that when the
workspace gives the blocks back the allocator sees them unused and caches them.
"""
from __future__ import annotations

import math

import numpy as np

from ..memory import allocator


class Workspace:
    """Scratch arrays drawn from the CPU allocator for the length of one kernel call."""

    def __init__(self):
        self.blocks = []

    def empty(self, count: int, dtype) -> np.ndarray:
        """A flat array of ``count`` elements; shape it with ``shaped``."""
        dtype = np.dtype(dtype)
        block = allocator.allocate(max(count, 1) * dtype.itemsize)
        self.blocks.append(block)
        return np.ndarray((count,), dtype, buffer=block.handle)

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        blocks, self.blocks = self.blocks, []
        for block in blocks:
            allocator.release(block)


def shaped(flat: np.ndarray, *shape: int) -> np.ndarray:
    """The first prod(shape) elements of a flat scratch array, as a C-contiguous array."""
    return flat[:math.prod(shape)].reshape(shape)


def column_sums(rows: np.ndarray, out: np.ndarray, workspace: Workspace) -> None:
    """out (M,) = sum over the rows of rows (N, M), as one BLAS product ones(N) @ rows:
    faster than np.sum(axis=0) and about 4x more accurate in float32 (BLAS keeps several
    partial sums)."""
    ones = workspace.empty(rows.shape[0], rows.dtype)
    ones.fill(1)
    np.matmul(ones, rows, out=out)
