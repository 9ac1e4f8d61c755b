"""``zero.linalg``: PyTorch's torch.linalg functions that Zero has -- the norms, matmul,
diagonal, and the decompositions (ops/extra/decompositions.py, ops/extra/spectral.py).

    vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)
    matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None)
    norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)
    matmul(A, B)                                  zero.matmul
    diagonal(A, *, offset=0, dim1=-2, dim2=-1)    the last two dims by default (zero.diagonal: the first two)
    det(A)  slogdet(A)  inv(A)  solve(A, B, *, left=True)  cholesky(A, *, upper=False)
    qr(A, mode="reduced")  svd(A, full_matrices=True)  svdvals(A)  eigh(A, UPLO="L")  eigvalsh(A, UPLO="L")
    pinv(A, *, atol=None, rtol=None, hermitian=False)  matrix_power(A, n)  matrix_rank(A, *, atol, rtol, hermitian)
    lstsq(A, B, rcond=None, *, driver=None)
    multi_dot  vecdot  vander  tensorinv  tensorsolve  cond  solve_triangular  householder_product
    matrix_exp                                    (ops/extra/linalg_compositions.py)
    lu_factor  lu_factor_ex  lu  lu_solve  inv_ex  solve_ex  cholesky_ex   (ops/extra/linalg_lu.py)
    LinAlgError                                   singular / not positive-definite (a RuntimeError)
"""
from __future__ import annotations

from .ops.extra import linalg as _linalg
from .ops.matmul import matmul
from .ops.extra.norms import linalg_norm as norm
from .ops.extra.norms import matrix_norm, vector_norm
from .tensors.tensor import Tensor
from .errors import LinAlgError
from .ops.extra.decompositions import cholesky, det, inv, slogdet, solve
from .ops.extra.linalg_compositions import (cond, householder_product, matrix_exp, multi_dot, solve_triangular,
                                            tensorinv, tensorsolve, vander, vecdot)
from .ops.extra.linalg_lu import cholesky_ex, inv_ex, lu, lu_factor, lu_factor_ex, lu_solve, solve_ex
from .ops.extra.spectral import eigh, eigvalsh, lstsq, matrix_power, matrix_rank, pinv, qr, svd, svdvals
from .ops.extra.more_math import linalg_cross as cross

__all__ = ["diagonal", "matmul", "matrix_norm", "norm", "vector_norm"]
__all__ += ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power", "matrix_rank",
            "pinv", "qr", "slogdet", "solve", "svd", "svdvals"]
__all__ += ["cond", "householder_product", "matrix_exp", "multi_dot", "solve_triangular", "tensorinv",
            "tensorsolve", "vander", "vecdot"]
__all__ += ["cholesky_ex", "inv_ex", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "solve_ex"]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return _linalg.diagonal(A, offset, dim1, dim2)

__all__ += ["cross"]   # (issue 37: functions)
