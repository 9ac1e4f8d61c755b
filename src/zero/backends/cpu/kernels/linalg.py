"""Matrix products through BLAS, and sums over leading axes as products with a vector of ones.

BLAS runs single-threaded under Zero (``zero.backends.cpu.threads`` says why): a large
product is cut into independent products, one per thread, by ``parallel.product`` (a
batch into ranges of its matrices, a matrix product into ranges of the output's rows or
columns). A product split into row ranges is not bit for bit the unsplit product (BLAS
blocks a shorter matrix differently): results repeat exactly for a given number of
threads, and agree to rounding across thread counts.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...array_kernels import reduction as shared
from ...kernel_contract import Array, Axes
from .. import parallel

__all__ = ["matmul", "ones_vector", "sum"]


def matmul(a: Array, b: Array, out: Array) -> None:
    """(..., M, K) @ (..., K, N) -> (..., M, N) with broadcast batch dims. NumPy hands
    transposed views to BLAS as transpose flags, without a copy."""
    if a.ndim > 2 and b.ndim == 2 and out.flags.c_contiguous:
        # A batch of rows times one matrix is a single GEMM over the flattened rows
        # (reshape copies only when the batch dims of a cannot be merged).
        parallel.product(a.reshape(-1, a.shape[-1]), b, out.reshape(-1, out.shape[-1]))
    else:
        parallel.product(a, b, out)


def sum(x: Array, axes: Axes, out: Array) -> None:  # noqa: A001  (the contract's name)
    """Sums over the leading axes of a C-contiguous float array (bias gradients, x.sum(0))
    as a product with a vector of ones: BLAS's GEMV is faster than np.sum there and comes
    closer to the float64 sum (it keeps several partial sums). A large one is split by
    columns (``parallel.product``): like the split products, it repeats bit for bit for a
    given number of threads and agrees to rounding across thread counts. Anything else:
    NumPy."""
    lead = len(axes)
    if (0 < lead < x.ndim and axes == tuple(range(lead)) and x.dtype == out.dtype
            and x.dtype.type in (np.float32, np.float64) and x.flags.c_contiguous and out.flags.c_contiguous):
        rows = math.prod(x.shape[:lead])
        parallel.product(ones_vector(rows, x.dtype), x.reshape(rows, out.size), out.reshape(-1))
    else:
        shared.sum(np, x, axes, out)


@functools.lru_cache(maxsize=16)
def ones_vector(count: int, dtype: np.dtype) -> Array:
    """A read-only vector of ``count`` ones: column sums as BLAS products (kept for reuse)."""
    ones = np.ones(count, dtype)
    ones.flags.writeable = False
    return ones
