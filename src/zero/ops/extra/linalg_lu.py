"""torch.linalg's LU factorisation and the ``_ex`` forms that report failures as ``info``:

    lu_factor(A, pivot=True)                    (LU, pivots): L below the diagonal (its unit
    lu_factor_ex(A, pivot=True, check_errors)   diagonal implied), U on and above; pivots
                                                1-based int32, LAPACK's getrf convention; _ex:
                                                info = j where U[j, j] is the first zero (1-based)
    lu(A, pivot=True)                           (P, L, U) with A = P L U
    lu_solve(LU, pivots, B, left, adjoint)      X with A X = B (A^T X = B; X A = B ...)
    inv_ex, solve_ex, cholesky_ex               (result, info): info 0, or where the
                                                factorisation failed; NaN in that matrix's
                                                result (PyTorch leaves what LAPACK left there)

The factorisation is Gaussian elimination with partial pivoting (the largest |a| of the
column, the first of equal ones: LAPACK's choice, so the pivots are PyTorch's) written as
tensor ops, one step per column, on every device; its gradient is that of the composition
(the pivots are constant near A). NumPy has no getrf, and Zero does not depend on SciPy.
Without pivoting is refused, as PyTorch refuses it on the CPU.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ... import dtypes
from ...errors import LinAlgError, describe
from ...tensors.creation import arange, eye, zeros
from ...tensors.meta import broadcast_shapes
from ...tensors.tensor import Tensor
from ..elementwise import Where
from ..joining import stack, tril, triu
from .decompositions import check_matrices, cholesky, det, inv, solve
from .linalg_compositions import solve_triangular
from .sorting import argsort


class LUFactorResult(NamedTuple):
    LU: Tensor
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class LUResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


class InvExResult(NamedTuple):
    inverse: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    result: Tensor
    info: Tensor


class CholeskyExResult(NamedTuple):
    L: Tensor
    info: Tensor


def _swap(positions: Tensor, j: int, p: Tensor) -> Tensor:
    """The index (..., m) that swaps entries j and p (p: (...) int64) of the last dim."""
    p = p.unsqueeze(-1)
    return Where.apply(positions == j, p, Where.apply(positions == p, j, positions))


def _first_zero(diagonal: Tensor) -> Tensor:
    """1 + the index of the first 0 along the last dim, 0 where there is none (int32)."""
    k = diagonal.shape[-1]
    if k == 0:
        return zeros(diagonal.shape[:-1], dtype=dtypes.int32, device=diagonal.device)
    order = arange(k, 0, -1, device=diagonal.device)                # k ... 1: the first zero scores highest
    score = (diagonal == 0).to(dtypes.int64) * order
    best = score.amax(-1)
    return Where.apply(best > 0, k + 1 - best, 0).to(dtypes.int32)


def _factor(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(LU, the row order perm (..., m) int64 with LU = (L U of) A[perm], pivots int32)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    rows = arange(m, device=A.device)
    columns = arange(n, device=A.device)
    lu = A
    perm = rows.expand(A.shape[:-1])
    pivots = []
    for j in range(k):
        candidates = Where.apply(rows >= j, lu.detach()[..., :, j].abs(), -1.0)
        p = candidates.argmax(-1)                                     # (...)
        pivots.append(p + 1)
        order = _swap(rows.expand(A.shape[:-1]), j, p)
        lu = lu.gather(-2, order.unsqueeze(-1).expand(lu.shape))
        perm = perm.gather(-1, order)
        pivot = lu[..., j, j]
        safe = Where.apply(pivot == 0, 1.0, pivot)
        below = rows > j
        multipliers = Where.apply(below, lu[..., :, j] / safe.unsqueeze(-1), 0.0)          # (..., m)
        pivot_row = Where.apply(columns > j, lu[..., j, :], 0.0)                          # (..., n)
        lu = lu - multipliers.unsqueeze(-1) * pivot_row.unsqueeze(-2)
        lu = Where.apply(below.unsqueeze(-1).logical_and(columns == j), multipliers.unsqueeze(-1), lu)
    if pivots:
        pivot_tensor = stack(pivots, -1).to(dtypes.int32)
    else:
        pivot_tensor = zeros(A.shape[:-2] + (0,), dtype=dtypes.int32, device=A.device)
    return lu, perm, pivot_tensor


def _check_pivot(op: str, pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: None = None) -> LUFactorExResult:
    check_matrices("linalg.lu_factor_ex", "A", A, square=False)
    _check_pivot("linalg.lu_factor_ex", pivot)
    lu, _, pivots = _factor(A)
    info = _first_zero(lu.detach().diagonal(0, -2, -1))
    if check_errors and bool((info > 0).any()):
        raise LinAlgError(f"linalg.lu_factor_ex: The factorization could not be completed because the input "
                          f"{describe(A)} is singular")
    return LUFactorExResult(lu, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True, out: None = None) -> LUFactorResult:
    check_matrices("linalg.lu_factor", "A", A, square=False)
    _check_pivot("linalg.lu_factor", pivot)
    lu, _, pivots = _factor(A)
    info = _first_zero(lu.detach().diagonal(0, -2, -1))
    if bool((info > 0).any()):
        j = int(info.amax().item())
        raise RuntimeError(f"torch.linalg.lu_factor: U[{j},{j}] is zero and using it on lu_solve would result in a "
                           "division by zero. If you still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return LUFactorResult(lu, pivots)


def lu(A: Tensor, *, pivot: bool = True, out: None = None) -> LUResult:
    check_matrices("linalg.lu", "A", A, square=False)
    _check_pivot("linalg.lu", pivot)
    m, n = A.shape[-2:]
    k = min(m, n)
    packed, perm, _ = _factor(A)
    rows = arange(m, device=A.device)
    permutation = (perm.unsqueeze(-2) == rows.unsqueeze(-1)).to(A.dtype)    # P[perm[i], i] = 1
    lower = tril(packed[..., :, :k], -1) + eye(m, k, dtype=A.dtype, device=A.device)
    return LUResult(permutation, lower, triu(packed[..., :k, :]))


def _order_of(pivots: Tensor, m: int) -> Tensor:
    """The row order perm (..., m) that the swaps of ``pivots`` (1-based) make."""
    rows = arange(m, device=pivots.device).expand(pivots.shape[:-1] + (m,))
    perm = rows
    for j in range(pivots.shape[-1]):
        perm = perm.gather(-1, _swap(rows, j, pivots[..., j].to(dtypes.int64) - 1))
    return perm


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out: None = None) -> Tensor:
    """X with A X = B (A^T X = B if adjoint; X A = B, X A^T = B if not left), A = P L U given
    by lu_factor's (LU, pivots)."""
    check_matrices("linalg.lu_solve", "LU", LU)
    check_matrices("linalg.lu_solve", "B", B, square=False)
    if not isinstance(pivots, Tensor) or pivots.dtype is not dtypes.int32 or pivots.shape != LU.shape[:-1]:
        raise RuntimeError(f"linalg.lu_solve: Expected pivots to be int32 of shape {list(LU.shape[:-1])}, got "
                           f"{describe(pivots)}")
    if not left:                                      # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    n = LU.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    batch = broadcast_shapes(LU.shape[:-2], B.shape[:-2], op="linalg.lu_solve")
    LU, B = LU.expand(batch + LU.shape[-2:]), B.expand(batch + B.shape[-2:])
    perm = _order_of(pivots.expand(batch + pivots.shape[-1:]), n)
    if not adjoint:                                   # X = U^-1 L^-1 (P^T B), (P^T B)[i] = B[perm[i]]
        permuted = B.gather(-2, perm.unsqueeze(-1).expand(B.shape))
        y = solve_triangular(LU, permuted, upper=False, unitriangular=True)
        return solve_triangular(LU, y, upper=True)
    y = solve_triangular(LU.mT, B, upper=False)       # A^T = U^T L^T P^T: X = P L^-T U^-T B
    y = solve_triangular(LU.mT, y, upper=True, unitriangular=True)
    return y.gather(-2, argsort(perm, -1).unsqueeze(-1).expand(y.shape))


def _nan_where(failed: Tensor, result: Tensor) -> Tensor:
    mask = failed.reshape(failed.shape + (1,) * (result.ndim - failed.ndim))
    return Where.apply(mask, math.nan, result)


def _identity_where(failed: Tensor, A: Tensor) -> Tensor:
    return Where.apply(failed.unsqueeze(-1).unsqueeze(-1), eye(A.shape[-1], dtype=A.dtype, device=A.device), A)


def inv_ex(A: Tensor, *, check_errors: bool = False, out: None = None) -> InvExResult:
    check_matrices("linalg.inv_ex", "A", A)
    try:
        return InvExResult(inv(A), zeros(A.shape[:-2], dtype=dtypes.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
    info = lu_factor_ex(A.detach()).info
    failed = info > 0
    return InvExResult(_nan_where(failed, inv(_identity_where(failed, A))), info)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out: None = None) -> SolveExResult:
    check_matrices("linalg.solve_ex", "A", A)
    try:
        return SolveExResult(solve(A, B, left=left), zeros(A.shape[:-2], dtype=dtypes.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
    info = lu_factor_ex(A.detach()).info
    failed = info > 0
    return SolveExResult(_nan_where(failed, solve(_identity_where(failed, A), B, left=left)), info)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out: None = None) -> CholeskyExResult:
    """info: the order of the first leading minor that is not positive-definite (Sylvester's
    criterion on the symmetric matrix of A's lower triangle), 0 if none."""
    check_matrices("linalg.cholesky_ex", "A", A)
    try:
        return CholeskyExResult(cholesky(A, upper=upper), zeros(A.shape[:-2], dtype=dtypes.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
    symmetric = (tril(A) + tril(A, -1).mT).detach()
    n = A.shape[-1]
    info = zeros(A.shape[:-2], dtype=dtypes.int32, device=A.device)
    for k in range(n, 0, -1):                          # the smallest failing order wins: last written
        failing = det(symmetric[..., :k, :k]) <= 0
        info = Where.apply(failing, k, info).to(dtypes.int32)
    failed = info > 0
    return CholeskyExResult(_nan_where(failed, cholesky(_identity_where(failed, A), upper=upper)), info)
