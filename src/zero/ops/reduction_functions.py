"""The functional forms of the reductions in ``reduction_methods``, with PyTorch's
signatures (``zero.prod(x, 1)`` is ``x.prod(1)``), and those PyTorch has only as functions:
``std_mean``, ``var_mean``."""
from __future__ import annotations

from ..tensors.tensor import Tensor
from . import norms, products, statistics
from .statistics import MinMax


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return products.prod(input, dim, keepdim, dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return products.cumprod(input, dim, dtype)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    return statistics.count_nonzero(input, dim)


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return statistics.nansum(input, dim, keepdim, dtype)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return statistics.nanmean(input, dim, keepdim, dtype)


def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median of all elements; with ``dim``, (values, indices) along it."""
    return statistics.median(input, dim, keepdim)


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False) -> MinMax:
    return statistics.aminmax(input, dim=dim, keepdim=keepdim)


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    return statistics.var_mean(input, dim, unbiased, keepdim, correction=correction)


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    return statistics.std_mean(input, dim, unbiased, keepdim, correction=correction)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    return norms.norm(input, p, dim, keepdim, dtype)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    return norms.dist(input, other, p)
