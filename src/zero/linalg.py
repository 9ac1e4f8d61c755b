"""``zero.linalg``: PyTorch's torch.linalg functions that Zero has -- the norms, matmul and
diagonal.

    vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)
    matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None)
    norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)
    matmul(A, B)                                  zero.matmul
    diagonal(A, *, offset=0, dim1=-2, dim2=-1)    the last two dims by default (zero.diagonal: the first two)

(Norms that need a singular value decomposition -- "nuc", 2, -2 -- raise NotImplementedError.)
"""
from __future__ import annotations

from .ops.extra import linalg as _linalg
from .ops.matmul import matmul
from .ops.extra.norms import linalg_norm as norm
from .ops.extra.norms import matrix_norm, vector_norm
from .tensors.tensor import Tensor
from .ops.extra.more_math import linalg_cross as cross

__all__ = ["diagonal", "matmul", "matrix_norm", "norm", "vector_norm"]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return _linalg.diagonal(A, offset, dim1, dim2)

__all__ += ["cross"]   # (issue 37: functions)
