"""More of torch.linalg, as compositions of the decompositions and products (their gradients
are the compositions'):

    multi_dot(tensors)                  the chained product (a 1-D first / last: a row / column)
    vecdot(x, y, dim=-1)                sum(x * y) over dim, broadcast
    vander(x, N=None)                   (..., n, N): the powers x^0 ... x^(N-1)
    tensorinv(A, ind=2)                 inv of A seen as a (prod of the first ind dims) square matrix
    tensorsolve(A, B, dims=None)        X with tensordot(A, X, X.ndim) = B
    cond(A, p=None)                     s_max / s_min (p None, 2; -2 the inverse), else
                                        matrix_norm(A, p) * matrix_norm(inv(A), p)
    solve_triangular(A, B, upper, left, unitriangular)   solve with A's triangle (diagonal 1)
    householder_product(A, tau)         the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T
    matrix_exp(A)                       scaling and squaring around a degree-18 Taylor sum
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ... import dtypes
from ...errors import LinAlgShapeError, describe
from ...tensors.creation import eye, ones
from ...tensors.tensor import Tensor
from ..joining import cat, tril, triu
from ..matmul import matmul
from .decompositions import check_matrices, inv, solve
from .norms import matrix_norm
from .products import cumprod
from .spectral import svdvals
from ...autograd import autocast_hook


def multi_dot(tensors: Sequence[Tensor], *, out: None = None) -> Tensor:
    """tensors[0] @ tensors[1] @ ...: the first may be 1-D (a row), the last 1-D (a column),
    the others matrices."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for k, t in enumerate(tensors):
        allowed = (1, 2) if k in (0, len(tensors) - 1) else (2,)
        if not isinstance(t, Tensor) or t.ndim not in allowed:
            where = "the first and last" if k in (0, len(tensors) - 1) else "all but the first and last"
            raise LinAlgShapeError(f"multi_dot(): {where} tensors must be {' or '.join(f'{d}D' for d in allowed)}, "
                                   f"got tensor {k}: {describe(t)}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have the same dtype, got {describe(tensors[0])} "
                               f"and {describe(t)}")
    row, column = tensors[0].ndim == 1, tensors[-1].ndim == 1
    result = tensors[0].unsqueeze(0) if row else tensors[0]
    for t in tensors[1:]:
        t = t.unsqueeze(-1) if t.ndim == 1 else t
        if result.shape[-1] != t.shape[0]:
            raise LinAlgShapeError(f"multi_dot(): tensors cannot be chain-multiplied: {list(result.shape)} and "
                                   f"{list(t.shape)}")
        result = matmul(result, t)
    if row:
        result = result.squeeze(0)
    return result.squeeze(-1) if column else result


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: None = None) -> Tensor:
    """The dot products of the vectors of x and y along dim (broadcast)."""
    if autocast_hook.state.active:
        x, y = autocast_hook.cast("linalg_vecdot", x, y)
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError(f"linalg.vecdot: x and y must be tensors, got {describe(x)} and {describe(y)}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{describe(x)} and y of type {describe(y)} instead.")
    return (x * y).sum(dim)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """(..., n) -> (..., n, N): column j holds x^j (N defaults to n)."""
    if not isinstance(x, Tensor) or x.ndim < 1:
        raise RuntimeError(f"linalg.vander: x must have at least one dimension, got {describe(x)}")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {n}")
    first = ones(x.shape + (1,), dtype=x.dtype, device=x.device)
    return cumprod(cat([first, x.unsqueeze(-1).expand(x.shape + (n - 1,))], -1), -1)


def tensorinv(A: Tensor, ind: int = 2, *, out: None = None) -> Tensor:
    """The inverse of A for tensordot(·, ·, ind): shape A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, columns = A.shape[:ind], A.shape[ind:]
    if math.prod(rows) != math.prod(columns):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(columns)} != {math.prod(rows)}")
    return inv(A.reshape(math.prod(rows), math.prod(columns))).reshape(columns + rows)


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[int] | None = None, *, out: None = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B; dims: A's dims moved last first."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    rest = A.shape[B.ndim:]
    if A.shape[:B.ndim] != B.shape or math.prod(rest) != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), got {describe(A)} and other {describe(B)}")
    return solve(A.reshape(B.numel(), math.prod(rest)), B.reshape(B.numel())).reshape(rest)


def cond(A: Tensor, p: str | float | None = None, *, out: None = None) -> Tensor:
    """The condition number of A in the p-norm."""
    if p is None or p in (2, -2):
        check_matrices("linalg.cond", "A", A, square=False)
        values = svdvals(A)
        large, small = values[..., 0], values[..., -1]
        return large / small if p != -2 else small / large
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    check_matrices("linalg.cond", "A", A)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out: None = None) -> Tensor:
    """X with T X = B (left) or X T = B, T the upper (lower) triangle of A, its diagonal taken
    as ones if unitriangular; batch dims broadcast."""
    check_matrices("linalg.solve_triangular", "A", A)
    check_matrices("linalg.solve_triangular", "B", B, square=False)
    if unitriangular:
        identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
        triangle = (triu(A, 1) if upper else tril(A, -1)) + identity
    else:
        triangle = triu(A) if upper else tril(A)
    return solve(triangle, B, left=left)


def householder_product(A: Tensor, tau: Tensor, *, out: None = None) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k (..., m, n): H_i = I - tau_i v_i v_i^T, v_i column
    i of A below the diagonal with a 1 on it (LAPACK's orgqr)."""
    check_matrices("linalg.householder_product", "A", A, square=False)
    m, n = A.shape[-2:]
    if not isinstance(tau, Tensor) or tau.ndim != A.ndim - 1 or tau.shape[:-1] != A.shape[:-2] or tau.shape[-1] > n:
        raise RuntimeError(f"torch.linalg.householder_product: tau must be (..., k) with k <= input.shape[-1] and "
                           f"A's batch dims, got {describe(A)} and {describe(tau)}")
    if m < n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1], got {describe(A)}")
    reflectors = tril(A, -1) + eye(m, n, dtype=A.dtype, device=A.device)     # v_i: column i
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(A.shape)
    for i in reversed(range(tau.shape[-1])):     # q = H_i q, from the last reflector to the first
        v = reflectors[..., i:i + 1]                                          # (..., m, 1)
        q = q - (v * tau[..., i, None, None]) @ (v.mT @ q)
    return q


_TAYLOR_TERMS = 18


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) = sum A^k / k!: A scaled by 2^-s to a 1-norm under 1/2, the Taylor sum, squared s
    times (s from the batch's largest 1-norm: one read of it on the host)."""
    if not isinstance(A, Tensor) or A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: expected A to be batches of square matrices, got {describe(A)}")
    if A.dtype in (dtypes.float16, dtypes.bfloat16) or not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_exp: expected a float32 or float64 tensor, got {describe(A)}")
    if A.numel() == 0:
        return A.clone()
    norm = float(A.detach().abs().sum(-2).amax().item())        # the largest 1-norm of the batch
    squarings = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 else 0
    scaled = A / 2.0 ** squarings
    identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    result = identity + scaled / _TAYLOR_TERMS               # Horner: I + A/1 (I + A/2 (I + ... ))
    for k in reversed(range(1, _TAYLOR_TERMS)):
        result = identity + (scaled @ result) / k
    for _ in range(squarings):
        result = result @ result
    return result
