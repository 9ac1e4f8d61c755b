"""Matrix products through BLAS."""
from __future__ import annotations

import numpy as np

__all__ = ["matmul"]

# -- matrix products --------------------------------------------------------------------------


def matmul(a, b, out) -> None:
    """(..., M, K) @ (..., K, N) -> (..., M, N) with broadcast batch dims. NumPy hands
    transposed views to BLAS as transpose flags, without a copy."""
    if a.ndim > 2 and b.ndim == 2 and out.flags.c_contiguous:
        # A batch of rows times one matrix is a single GEMM over the flattened rows
        # (reshape copies only when the batch dims of a cannot be merged).
        np.matmul(a.reshape(-1, a.shape[-1]), b, out=out.reshape(-1, out.shape[-1]))
    else:
        np.matmul(a, b, out=out)
