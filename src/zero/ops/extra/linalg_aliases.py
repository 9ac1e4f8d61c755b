"""The torch.* (and Tensor) names of the linalg factorisations, with their older signatures:

    det, logdet, slogdet, inverse, matrix_power     linalg.det, slogdet, inv, matrix_power
    pinverse(A, rcond=1e-15)                        linalg.pinv(A, rtol=rcond)
    cholesky(A, upper=False)                        linalg.cholesky
    qr(A, some=True)                                linalg.qr, mode "reduced" or "complete"
    svd(A, some=True, compute_uv=True)              (U, S, V): V, not Vh; without compute_uv,
                                                    U and V are zeros (S only differentiable)
"""
from __future__ import annotations

from typing import NamedTuple

from ...tensors.tensor import Tensor
from .decompositions import SlogdetResult, check_matrices, cholesky as linalg_cholesky, det, inv, logdet, slogdet
from .spectral import QRResult, matrix_power, pinv, qr as linalg_qr, svd as linalg_svd, svdvals
from ...autograd import autocast_hook

__all__ = ["cholesky", "det", "inverse", "logdet", "matrix_power", "pinverse", "qr", "slogdet", "svd",
           "SlogdetResult"]


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


def inverse(input: Tensor, *, out: None = None) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("inverse", input)
    return inv(input)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    return pinv(input, rtol=rcond)


def cholesky(input: Tensor, upper: bool = False, *, out: None = None) -> Tensor:
    return linalg_cholesky(input, upper=upper)


def qr(input: Tensor, some: bool = True, *, out: None = None) -> QRResult:
    return linalg_qr(input, "reduced" if some else "complete")


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: None = None) -> SVDResult:
    if not compute_uv:
        check_matrices("svd", "input", input, square=False)
        rows, columns = input.shape[-2:]
        batch = input.shape[:-2]
        return SVDResult(input.new_zeros(batch + (rows, rows)), svdvals(input),
                         input.new_zeros(batch + (columns, columns)))
    u, s, vh = linalg_svd(input, full_matrices=not some)
    return SVDResult(u, s, vh.mT)

