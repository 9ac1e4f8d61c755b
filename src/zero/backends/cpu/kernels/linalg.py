"""Matrix products through BLAS, split over the CPU pool's threads.

BLAS runs single-threaded under Zero (``zero.backends.cpu.threads`` says why), so a large
product is cut here into independent products, one per thread, each one BLAS call on
views: a batch into ranges of its matrices, a matrix product into ranges of the output's
rows, or of its columns when it has more columns than rows. A product is split only when
each part gets at least ``SPLIT_FLOPS`` (12 MFLOP, ~0.14 ms of one core at 85 GFLOP/s): a
hand-off costs 45-200 µs (more the longer the worker has slept). Measured against parts of
at least 32 MFLOP (``benchmarks/step_ab.py``, one process, 16-24 pairs): the MNIST MLP's
step 0.89 of the time (its first layer, 64 x 784 -> 512, now split by columns), the small
GPT's 0.95, the tiny one's 0.97-1.02 (its attention projection and linear + cross-entropy
forward now split: the latter 277 against 321-336 µs). A product split into row ranges is
not bit for bit the unsplit product (BLAS blocks a shorter matrix differently): results
repeat exactly for a given number of threads, and agree to rounding across thread counts.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...array_kernels import array_kernels
from ..threads import get_num_threads, parallel_for, single_threaded_blas

__all__ = ["matmul", "sum"]  # product: for the fused kernels, not a kernel of the device contract

_numpy_sum = array_kernels(np)["sum"]

SPLIT_FLOPS = 12e6          # the fewest floating-point operations of a part of a split product
MIN_ROWS = 8                # nor cut into parts of fewer rows (or columns, or matrices)


def row_grain(flops_per_row: float) -> int:
    """The fewest rows worth a thread of their own, for products of ``flops_per_row`` a row
    (for kernels that split a chain of products by rows themselves)."""
    return max(MIN_ROWS, int(SPLIT_FLOPS // max(flops_per_row, 1)))


def matmul(a, b, out) -> None:
    """(..., M, K) @ (..., K, N) -> (..., M, N) with broadcast batch dims. NumPy hands
    transposed views to BLAS as transpose flags, without a copy."""
    if a.ndim > 2 and b.ndim == 2 and out.flags.c_contiguous:
        # A batch of rows times one matrix is a single GEMM over the flattened rows
        # (reshape copies only when the batch dims of a cannot be merged).
        product(a.reshape(-1, a.shape[-1]), b, out.reshape(-1, out.shape[-1]))
    else:
        product(a, b, out)


def product(a, b, out) -> None:
    """np.matmul(a, b, out=out), split over the pool's threads when it is large (see the
    module docstring); broadcast batch dimensions are left to one call."""
    single_threaded_blas()
    depth = a.shape[-1] if a.ndim else 1
    if 2.0 * out.size * depth < 2 * SPLIT_FLOPS or get_num_threads() == 1:
        np.matmul(a, b, out=out)
    elif out.ndim >= 3 and a.ndim == b.ndim == out.ndim and a.shape[0] == b.shape[0] == out.shape[0]:
        parallel_for(out.shape[0], lambda lo, hi: np.matmul(a[lo:hi], b[lo:hi], out=out[lo:hi]), 1)
    elif out.ndim == 2 and a.ndim == b.ndim == 2:
        if out.shape[0] >= out.shape[1]:
            parallel_for(out.shape[0], lambda lo, hi: np.matmul(a[lo:hi], b, out=out[lo:hi]), MIN_ROWS)
        else:
            parallel_for(out.shape[1], lambda lo, hi: np.matmul(a, b[:, lo:hi], out=out[:, lo:hi]), MIN_ROWS)
    elif out.ndim == 1 and a.ndim == 1 and b.ndim == 2:       # a row vector times a matrix
        parallel_for(out.shape[0], lambda lo, hi: np.matmul(a, b[:, lo:hi], out=out[lo:hi]), MIN_ROWS)
    elif out.ndim == 1 and a.ndim == 2 and b.ndim == 1:       # a matrix times a column vector
        parallel_for(out.shape[0], lambda lo, hi: np.matmul(a[lo:hi], b, out=out[lo:hi]), MIN_ROWS)
    else:
        np.matmul(a, b, out=out)


def sum(x, axes: tuple, out) -> None:  # noqa: A001  (the device contract's name)
    """Sums over the leading axes of a C-contiguous float array (bias gradients, x.sum(0))
    as a product with a vector of ones: BLAS's GEMV took 0.38-0.67 of np.sum's time at
    (2048, 512) to (16384, 1536), one thread, and came 2.6-4x closer to the float64 sum. A
    large one is split by columns (``product``): like the split products, it repeats bit for
    bit for a given number of threads and agrees to rounding across thread counts (at
    3000 x 6001 the column split changed the last bits). Anything else: NumPy."""
    lead = len(axes)
    if (0 < lead < x.ndim and axes == tuple(range(lead)) and x.dtype == out.dtype
            and x.dtype.type in (np.float32, np.float64) and x.flags.c_contiguous and out.flags.c_contiguous):
        rows = math.prod(x.shape[:lead])
        product(ones_vector(rows, x.dtype), x.reshape(rows, out.size), out.reshape(-1))
    else:
        _numpy_sum(x, axes, out)


@functools.lru_cache(maxsize=16)
def ones_vector(count: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``count`` ones: column sums as BLAS products (kept for reuse)."""
    ones = np.ones(count, dtype)
    ones.flags.writeable = False
    return ones
