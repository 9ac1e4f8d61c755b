"""The functional forms of the linear algebra in ``linalg``, with PyTorch's signatures
(``zero.mm(a, b)``, ``zero.diagonal(x, 1)``, ``zero.tensordot(a, b, dims=2)`` ...)."""
from __future__ import annotations

from ..tensors.tensor import Tensor
from . import linalg


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    return linalg.mm(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    return linalg.bmm(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return linalg.mv(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    return linalg.dot(input, other)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    return linalg.vdot(input, other)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    return linalg.outer(input, vec2)


ger = outer


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return linalg.addmm(input, mat1, mat2, beta=beta, alpha=alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return linalg.addmv(input, mat, vec, beta=beta, alpha=alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return linalg.baddbmm(input, batch1, batch2, beta=beta, alpha=alpha)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    return linalg.diag(input, diagonal)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return linalg.diagonal(input, offset, dim1, dim2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return linalg.diag_embed(input, offset, dim1, dim2)


def trace(input: Tensor) -> Tensor:
    return linalg.trace(input)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    return linalg.tensordot(a, b, dims)


def kron(input: Tensor, other: Tensor) -> Tensor:
    return linalg.kron(input, other)
