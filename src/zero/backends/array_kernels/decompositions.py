"""Matrix decompositions over ``xp`` (``numpy``: LAPACK; ``cupy``: cuSOLVER), batched over the
leading dims: determinants, inverse, solve, Cholesky, QR, SVD, symmetric eigendecomposition.

Each writes the library's result into the arrays it is given (the op has checked shapes and
dtypes). A matrix the factorisation cannot handle (singular, not positive-definite) raises
``zero.errors.LinAlgError``; the op adds its own name and PyTorch's wording."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np

from ...errors import LinAlgError
from ..kernel_contract import Array


@contextmanager
def _lapack_errors() -> Iterator[None]:
    try:
        yield
    except np.linalg.LinAlgError as error:       # (CuPy raises NumPy's class too)
        raise LinAlgError(str(error)) from None


def _checked(xp: ModuleType, run: Callable[[], Array], strict: bool = True) -> Array:
    """run(), its LinAlgError Zero's; on CUDA with cuSOLVER's status checked (CuPy checks it
    only under ``cupyx.errstate(linalg="raise")``: a sync, as PyTorch's check on CUDA is) --
    unless not ``strict``: det and slogdet, whose LU may meet a zero pivot (det 0)."""
    with _lapack_errors():
        if xp is np or not strict:
            return run()
        import cupyx                                # (only where CuPy is the array module)
        with cupyx.errstate(linalg="raise"):
            return run()


def det(xp: ModuleType, a: Array, out: Array) -> None:
    """out (...) = det(a (..., n, n))."""
    out[...] = _checked(xp, lambda: xp.linalg.det(a), strict=False)


def slogdet(xp: ModuleType, a: Array, sign: Array, logabsdet: Array) -> None:
    """sign, logabsdet (...) of a (..., n, n): det = sign * exp(logabsdet)."""
    s, log = _checked(xp, lambda: xp.linalg.slogdet(a), strict=False)
    sign[...] = s
    logabsdet[...] = log


def inv(xp: ModuleType, a: Array, out: Array) -> None:
    """out = a^-1 (..., n, n); singular: LinAlgError."""
    out[...] = _checked(xp, lambda: xp.linalg.inv(a))


def solve(xp: ModuleType, a: Array, b: Array, out: Array) -> None:
    """out = a^-1 b, a (..., n, n), b and out (..., n, k) of one batch shape; singular: LinAlgError."""
    out[...] = _checked(xp, lambda: xp.linalg.solve(a, b))


def cholesky(xp: ModuleType, a: Array, out: Array) -> None:
    """out = L, lower-triangular, a = L L^T (..., n, n); not positive-definite: LinAlgError."""
    out[...] = _checked(xp, lambda: xp.linalg.cholesky(a))


def qr(xp: ModuleType, a: Array, q: Array | None, r: Array, complete: bool) -> None:
    """a (..., m, n) = q r: q (..., m, k) orthonormal columns, r (..., k, n) upper-triangular,
    k = m if complete else min(m, n); q None: only r."""
    if q is None:
        r[...] = _checked(xp, lambda: xp.linalg.qr(a, mode="complete" if complete else "reduced")[1])
        return
    q_, r_ = _checked(xp, lambda: xp.linalg.qr(a, mode="complete" if complete else "reduced"))
    q[...] = q_
    r[...] = r_


def svd(xp: ModuleType, a: Array, u: Array | None, s: Array, vh: Array | None) -> None:
    """a (..., m, n) = u diag(s) vh, s (..., k) descending, k = min(m, n); u (..., m, m or k) and
    vh (..., n or k, n) full or reduced as their shapes say; None: only s."""
    if u is None or vh is None:
        s[...] = _checked(xp, lambda: xp.linalg.svd(a, compute_uv=False))
        return
    full = u.shape[-1] != s.shape[-1] or vh.shape[-2] != s.shape[-1]
    u_, s_, vh_ = _checked(xp, lambda: xp.linalg.svd(a, full_matrices=full))
    u[...] = u_
    s[...] = s_
    vh[...] = vh_


def eigh(xp: ModuleType, a: Array, upper: bool, w: Array, v: Array | None) -> None:
    """Eigenvalues w (..., n) ascending and eigenvectors v (..., n, n) (columns) of the
    symmetric a, read from its lower (or upper) triangle; v None: only w."""
    uplo = "U" if upper else "L"
    if v is None:
        w[...] = _checked(xp, lambda: xp.linalg.eigvalsh(a, UPLO=uplo))
        return
    w_, v_ = _checked(xp, lambda: xp.linalg.eigh(a, UPLO=uplo))
    w[...] = w_
    v[...] = v_
