"""``zero.linalg``: PyTorch's torch.linalg functions that Zero has -- the norms.

    vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)
    matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None)
    norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)

(Norms that need a singular value decomposition -- "nuc", 2, -2 -- raise NotImplementedError.)
"""
from __future__ import annotations

from .ops.norms import linalg_norm as norm
from .ops.norms import matrix_norm, vector_norm

__all__ = ["matrix_norm", "norm", "vector_norm"]
