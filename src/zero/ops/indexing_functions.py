"""The functional forms of the scatters, picks, reshapes, stacks, splits and searches
(``scatter``, ``shaping``, ``searching``), with PyTorch's signatures: ``zero.hstack([a, b])``,
``zero.meshgrid(x, y, indexing="xy")``, ``zero.unique(x, return_counts=True)`` ..."""
from __future__ import annotations

from ..tensors.tensor import Tensor
from . import scatter as scatter_ops
from . import searching, shaping
from .joining import cat
from .searching import bincount, bucketize, histc, searchsorted, tril_indices, triu_indices  # noqa: F401
from .shaping import (atleast_1d, atleast_2d, atleast_3d, block_diag, cartesian_prod, column_stack,  # noqa: F401
                      concatenate, dstack, hstack, meshgrid, vstack)

concat = cat
row_stack = vstack


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None) -> Tensor:
    return scatter_ops.scatter(input, dim, index, src, value=value, reduce=reduce)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return scatter_ops.scatter_add(input, dim, index, src)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    return scatter_ops.index_add(input, dim, index, source, alpha=alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return scatter_ops.index_copy(input, dim, index, source)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    return scatter_ops.index_fill(input, dim, index, value)


def take(input: Tensor, index: Tensor) -> Tensor:
    return scatter_ops.take(input, index)


def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    return scatter_ops.take_along_dim(input, indices, dim)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    return scatter_ops.masked_select(input, mask)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    return scatter_ops.nonzero(input, as_tuple=as_tuple)


def argwhere(input: Tensor) -> Tensor:
    return scatter_ops.argwhere(input)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    return shaping.narrow(input, dim, start, length)


def tile(input: Tensor, dims) -> Tensor:
    return shaping.tile(input, dims)


def movedim(input: Tensor, source, destination) -> Tensor:
    return shaping.movedim(input, source, destination)


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return shaping.swapaxes(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return shaping.swapaxes(input, dim0, dim1)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    return shaping.unflatten(input, dim, sizes)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    return shaping.tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    return shaping.hsplit(input, indices_or_sections)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    return shaping.vsplit(input, indices_or_sections)


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    return shaping.dsplit(input, indices_or_sections)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    return shaping.rot90(input, k, dims)


def fliplr(input: Tensor) -> Tensor:
    return shaping.fliplr(input)


def flipud(input: Tensor) -> Tensor:
    return shaping.flipud(input)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim=None):
    return searching.unique(input, sorted, return_inverse, return_counts, dim)
