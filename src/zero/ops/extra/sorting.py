"""Sorting: ``sort``, ``argsort``, ``topk``, and the running sum ``cumsum``.

    sort(x, dim, descending)   (values, indices): stable, NaN as the largest value
    argsort(x, dim)            the indices alone (not differentiable)
    topk(x, k, dim, largest)   the k largest (or smallest) values and their indices, in order
    cumsum(x, dim)             y_i = x_0 + ... + x_i along dim

Backward of sort and topk sends each value's gradient back to where the value came from
(a scatter by the indices, as ``max(dim)``'s does); cumsum's is the running sum of the
gradient taken from the other end: dx_i = dy_i + ... + dy_(n-1).
"""
from __future__ import annotations

from typing import NamedTuple

from ... import dtypes
from ...autograd.op import Grads, Op
from ...dtypes import DTypeLike
from ...errors import ShapeError, describe
from ...tensors.creation import zeros
from ...tensors.meta import Shape, normalize_dim
from ...tensors.tensor import Tensor
from ..indexing import BasicIndex
from ...autograd import autocast_hook


class SortResult(NamedTuple):
    values: Tensor
    indices: Tensor


class Sort(Op):
    def forward(self, x: Tensor, dim: int, descending: bool) -> SortResult:
        if not isinstance(x, Tensor):
            raise TypeError(f"sort: expected a tensor, got {describe(x)}")
        ndim = max(x.ndim, 1)
        dim = normalize_dim(dim, x.ndim, "sort")
        source = x.reshape(1) if x.ndim == 0 else x
        values = Tensor._empty(source.shape, x.dtype, x.device)
        indices = Tensor._empty(source.shape, dtypes.int64, x.device)
        x.device.kernels.sort(source._array, dim, bool(descending), values._array, indices._array)
        self.save_for_backward(indices)
        self.in_shape, self.dim, self.ndim = x.shape, dim, ndim
        if x.ndim == 0:
            return SortResult(values.reshape(()), indices.reshape(()))
        return SortResult(values, indices)

    def backward(self, grad: Tensor) -> Grads:
        (indices,) = self.saved_tensors
        return (scatter_back(grad, indices, self.in_shape, self.dim), None, None)


def scatter_back(grad: Tensor, indices: Tensor, shape: Shape, dim: int) -> Tensor:
    """A gradient of shape ``shape`` that holds ``grad``'s values where ``indices`` took them."""
    grad_in = zeros(shape, dtype=grad.dtype, device=grad.device)
    if not shape:
        grad.device.kernels.copy(grad._array, grad_in._array)
        return grad_in
    grad.device.kernels.scatter_along(grad_in._array, dim, indices._array, grad.contiguous()._array)
    return grad_in


def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """(values, indices) sorted along ``dim`` (always stable, so ``stable`` changes nothing)."""
    return Sort.apply(x, dim, descending)


def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return Sort.apply(x.detach(), dim, descending).indices


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> SortResult:
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` and their indices,
    largest first (always in order, so ``sorted`` changes nothing)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"topk: expected a tensor, got {describe(x)}")
    d = normalize_dim(dim, x.ndim, "topk")
    size = x.shape[d] if x.ndim else 1
    if not isinstance(k, int) or not 0 <= k <= size:
        raise ShapeError(f"topk: k ({k}) must be in [0, {size}], the size of dimension {dim} of {describe(x)}")
    values, indices = Sort.apply(x, d, largest)
    if x.ndim == 0:
        return SortResult(values, indices)
    first = (slice(None),) * d + (slice(0, k),)
    return SortResult(BasicIndex.apply(values, first), BasicIndex.apply(indices, first))


class Cumsum(Op):
    def forward(self, x: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"cumsum: expected a tensor, got {describe(x)}")
        dim = normalize_dim(dim, x.ndim, "cumsum")
        if dtype is None:
            dtype = x.dtype if x.dtype.category == dtypes.FLOATING else dtypes.int64
        out = Tensor._empty(x.shape, dtypes.to_dtype(dtype), x.device)
        source = x.reshape(1) if x.ndim == 0 else x
        x.device.kernels.cumsum(source._array, dim, out._array.reshape(source.shape))
        self.dim, self.in_dtype, self.ndim = dim, x.dtype, x.ndim
        return out

    def backward(self, grad: Tensor) -> Grads:
        if self.ndim == 0:
            return (grad.to(self.in_dtype), None, None)
        reversed_grad = grad.flip(self.dim)
        return (reversed_grad.cumsum(self.dim).flip(self.dim).to(self.in_dtype), None, None)


def cumsum(x: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:
    if autocast_hook.state.active and dtype is None:
        x, = autocast_hook.cast("cumsum", x)
    return Cumsum.apply(x, dim, dtype)
