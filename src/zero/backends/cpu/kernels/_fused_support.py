"""What the fused CPU kernels share: scratch memory from the allocator, and weight
gradients summed by ranges of rows (the vectorisable exp, tanh and normal CDF are in
``_fastmath``).

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
from collections.abc import Callable, Sequence

import numpy as np

from ...kernel_contract import Array, given
from .. import parallel
from ..memory import lease
from .linalg import ones_vector

# One product's share of the weight gradients: (g (N, OUT), a (N, IN), grad_w (OUT, IN) or None,
# grad_b (OUT,) or None).
WeightProduct = tuple[Array, Array, Array | None, Array | None]


def scratch(count: int, dtype: np.dtype | type) -> np.ndarray:
    """A flat array of ``count`` elements of ``dtype`` from the pool; shape it with ``shaped``."""
    dtype = np.dtype(dtype)
    return np.ndarray((count,), dtype, buffer=lease(max(count, 1) * dtype.itemsize))


def shaped(flat: np.ndarray, *shape: int) -> np.ndarray:
    """The first prod(shape) elements of a flat scratch array, as a C-contiguous array."""
    return flat[:math.prod(shape)].reshape(shape)


def weight_gradients_by_rows(rows: int, grain: int, chain: Callable[[int, int], None],
                             products: Sequence[WeightProduct]) -> None:
    """One parallel region over ranges of the N rows: each range runs ``chain(lo, hi)``,
    then for each (g (N, OUT), a (N, IN), grad_w (OUT, IN) or None, grad_b (OUT,) or None)
    of ``products`` its rows' share g[lo:hi]ᵀ a[lo:hi] and the column sums of g[lo:hi].
    The first range writes into grad_w and grad_b, the others into scratch leased here,
    added to them in range order after the region: each sum has a fixed order for a given
    number of threads. Against a second region splitting the weights' rows (every thread
    reading all N rows of g and a, half of them from the other core's cache): one hand-off
    less, and the products read rows their own thread has just written. (The split is part
    of the arithmetic -- a share per range -- so it is this function's, sized by ``grain``.)"""
    parts = parallel.ranges(rows, grain)
    wanted = [(g, a, grad_w, grad_b) for g, a, grad_w, grad_b in products if grad_w is not None or grad_b is not None]
    ones = ones_vector(max(hi - lo for lo, hi in parts), wanted[0][0].dtype) if wanted else np.ones(0)
    # shares[k][j]: range k's (grad_w, grad_b) for product j; range 0's are the outputs
    shares = [[(grad_w, grad_b) for _, _, grad_w, grad_b in wanted]]
    for _ in parts[1:]:
        shares.append([(None if grad_w is None else shaped(scratch(grad_w.size, grad_w.dtype), *grad_w.shape),
                        None if grad_b is None else scratch(grad_b.size, grad_b.dtype))
                       for _, _, grad_w, grad_b in wanted])

    def part(k: int) -> Callable[[], None]:
        def run() -> None:
            lo, hi = parts[k]
            chain(lo, hi)
            for (g, a, _, _), (grad_w, grad_b) in zip(wanted, shares[k]):
                if grad_w is not None:
                    np.matmul(g[lo:hi].T, a[lo:hi], out=grad_w)
                if grad_b is not None:
                    np.matmul(ones[:hi - lo], g[lo:hi], out=grad_b)
        return run

    parallel.run_all([part(k) for k in range(len(parts))])
    for later in shares[1:]:
        for (grad_w, grad_b), (share_w, share_b) in zip(shares[0], later):
            if grad_w is not None:
                np.add(grad_w, given(share_w), out=grad_w)
            if grad_b is not None:
                np.add(grad_b, given(share_b), out=grad_b)
