"""PyTorch's older top-level linear-algebra solvers, as compositions of ``zero.linalg``'s
differentiable ops (so they run on every device and differentiate as PyTorch's):

    cholesky_solve(B, L, upper)        X with (L L^T) X = B (U^T U if upper): two triangular solves
    cholesky_inverse(L, upper)         (L L^T)^-1, cholesky_solve of the identity
    lu_solve(b, LU_data, LU_pivots)    linalg.lu_solve(LU_data, LU_pivots, b)
    lu_unpack(LU_data, LU_pivots)      (P, L, U) from lu_factor's packed form
    triangular_solve(b, A, upper, transpose, unitriangular)
                                       (solution, cloned_coefficient)
    lu(A, pivot, get_infos)            torch.lu / Tensor.lu: (LU, pivots[, infos])
    geqrf(input)                       (a, tau): LAPACK's Householder QR (the device's kernel;
                                       not differentiable, as PyTorch's)
    orgqr(input, tau)                  linalg.householder_product
    ormqr(input, tau, other, left, transpose)
                                       Q other (Q^T other, other Q ...), Q the m x m product of
                                       the reflectors (householder_product of the reflectors
                                       padded with zero columns, whose tau is 0: the identity)
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

from ... import dtypes
from ...errors import describe
from ...tensors.creation import arange, eye, zeros
from ...tensors.tensor import Tensor
from ..joining import cat, tril, triu
from .decompositions import check_matrices, solve
from .linalg_compositions import householder_product, solve_triangular
from .linalg_lu import _order_of, lu_factor_ex
from .linalg_lu import lu_solve as linalg_lu_solve


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    check_matrices("cholesky_solve", "input", B, square=False)
    check_matrices("cholesky_solve", "input2", L)
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {describe(B)} and A "
                           f"of type {describe(L)} instead.")
    if B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-1]} by "
                           f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    # Only L's triangle is read; the gradient is PyTorch's, that of A = L L^T with L taken whole
    # (the triangle's value, the whole matrix's gradient), through a solve with A.
    triangle = triu(L) if upper else tril(L)
    factor = triangle.detach() + (L - L.detach())
    A = factor.mT @ factor if upper else factor @ factor.mT
    return solve(A, B)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    check_matrices("cholesky_inverse", "input", L)
    n = L.shape[-1]
    identity = eye(n, dtype=L.dtype, device=L.device).expand(L.shape)
    return cholesky_solve(identity, L, upper)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a future "
                  "PyTorch release. X = torch.lu_solve(B, LU, pivots) should be replaced with "
                  "X = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    return linalg_lu_solve(LU_data, LU_pivots, b)


class LUUnpackResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> LUUnpackResult:
    check_matrices("lu_unpack", "LU_data", LU_data, square=False)
    if not isinstance(LU_pivots, Tensor) or LU_pivots.dtype is not dtypes.int32:
        raise RuntimeError(f"lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype, "
                           f"got {describe(LU_pivots)}")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = zeros((0,), dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        lower = tril(LU_data[..., :, :k], -1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        upper = triu(LU_data[..., :k, :])
    else:
        lower, upper = empty, empty
    if unpack_pivots:
        perm = _order_of(LU_pivots.to(dtypes.int64), m) if k else arange(m, device=LU_data.device).expand(
            LU_pivots.shape[:-1] + (m,))
        rows = arange(m, device=LU_data.device)
        permutation = (perm.unsqueeze(-2) == rows.unsqueeze(-1)).to(LU_data.dtype)
    else:
        permutation = empty
    return LUUnpackResult(permutation, lower, upper)


class TriangularSolveResult(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolveResult:
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will be "
                  "removed in a future PyTorch release. X = torch.triangular_solve(B, A).solution should be replaced "
                  "with X = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    check_matrices("triangular_solve", "A", A)
    check_matrices("triangular_solve", "b", b, square=False)
    if b.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(solution, A.clone().expand(solution.shape[:-2] + A.shape[-2:]).clone())


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    if not pivot:
        raise RuntimeError("lu without pivoting is not implemented on the CPU")
    LU, pivots, info = lu_factor_ex(A)
    if get_infos:
        return LU, pivots, info
    return LU, pivots


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    return householder_product(input, tau)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
    check_matrices("ormqr", "input", input, square=False)
    check_matrices("ormqr", "other", other, square=False)
    m, n = input.shape[-2:]
    needed = other.shape[-2] if left else other.shape[-1]
    if needed != m:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: Expected input.shape[-2] to be equal to {side}, got {m} and {needed}")
    if tau.shape[-1] > n:
        raise RuntimeError(f"torch.ormqr: Expected tau.shape[-1] <= input.shape[-1], got {tau.shape[-1]} and {n}")
    reflectors = input[..., :, :tau.shape[-1]]
    k = tau.shape[-1]
    if k < m:   # pad to m reflectors; tau = 0 makes the added ones the identity
        reflectors = cat([reflectors, zeros(reflectors.shape[:-1] + (m - k,), dtype=input.dtype,
                                            device=input.device)], -1)
        tau = cat([tau, zeros(tau.shape[:-1] + (m - k,), dtype=tau.dtype, device=tau.device)], -1)
    q = householder_product(reflectors, tau)
    if transpose:
        q = q.mT
    return q @ other if left else other @ q


class GeqrfResult(NamedTuple):
    a: Tensor
    tau: Tensor


def geqrf(input: Tensor) -> GeqrfResult:
    check_matrices("geqrf", "input", input, square=False)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"geqrf: Expected a floating point tensor, got {describe(input)}")
    m, n = input.shape[-2:]
    x = input.detach().contiguous()
    h = Tensor._empty(x.shape, x.dtype, x.device)
    tau = Tensor._empty(x.shape[:-2] + (min(m, n),), x.dtype, x.device)
    x.device.kernels.geqrf(x._array, h._array, tau._array)
    return GeqrfResult(h, tau)
