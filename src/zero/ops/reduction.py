"""Reductions over any set of dimensions, with ``keepdim``.

Backward of a reduction is a broadcast: the gradient of the reduced tensor is
reshaped to keep the reduced dimensions as size 1 and expanded back (a
stride-0 view, no copy) to the input's shape.

Each op's functional form, with PyTorch's signature (``zero.sum``, and ``x.sum`` through
``ops/tensor_methods.py``), is at the end of the file. ``axis=`` is accepted for ``dim=``,
as PyTorch does for NumPy's habit.

Ties in max/min: ``max(dim)`` returns one index per row and the whole gradient
goes to it (PyTorch's rule); ``max()``/``amax`` over whole dimensions split the
gradient evenly between equal maxima (also PyTorch's rule).
"""
from __future__ import annotations

import builtins  # (this module defines sum, max, min, all and any: PyTorch's names)
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, overload

from .. import dtypes
from ..autograd.op import Grads, Op
from ..dtypes import DType, DTypeLike
from ..errors import DTypeError, EmptyReductionError, ShapeError, describe
from ..tensors.creation import zeros
from ..tensors.meta import Shape, normalize_dim, normalize_dims, numel
from ..tensors.tensor import Tensor
from ..autograd import autocast_hook


class ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


Dims = int | tuple[int, ...] | list[int] | None   # the dimensions to reduce: one, several, or None for all


def _reduced_output(x: Tensor, dims: tuple[int, ...], keepdim: bool,
                    dtype: DType | None = None) -> tuple[Tensor, Any, Shape]:
    """Allocate the output of reducing ``x`` over ``dims``. Returns (output tensor, the
    array a kernel writes -- the output without the reduced dims --, the input's shape with
    reduced dims kept as 1, which backward broadcasts from)."""
    shape = x._meta.shape
    kept = tuple(1 if i in dims else s for i, s in enumerate(shape))
    dropped = tuple(s for i, s in enumerate(shape) if i not in dims)
    out = Tensor._empty(kept if keepdim else dropped, dtype or x._meta.dtype, x._meta.device)
    return out, out._array.reshape(dropped), kept


def _check_not_empty(name: str, x: Tensor, dims: tuple[int, ...]) -> None:
    """A max, min or arg-reduction has no value over no elements: every reduced dimension
    must be non-empty (an empty tensor reduced over its other dimensions is fine)."""
    shape = x._meta.shape
    if builtins.any(shape[d] == 0 for d in dims):
        raise EmptyReductionError(f"{name}: cannot reduce over an empty dimension of {describe(x)}; the reduced "
                         f"dimensions {list(dims)} must have non-zero sizes")


def _expand_back(grad: Tensor, kept_shape: Shape, in_shape: Shape) -> Tensor:
    """The gradient of a reduced tensor, broadcast to the input's shape (a view)."""
    return grad.reshape(kept_shape).expand(in_shape)


class Sum(Op):
    def forward(self, x: Tensor, dims: Dims, keepdim: bool = False, dtype: DTypeLike | None = None) -> Tensor:
        meta = x._meta
        dims = normalize_dims(dims, len(meta.shape), "sum")
        if dtype is None:
            dtype = meta.dtype if meta.dtype.is_floating_point else dtypes.int64
        out, target, self.kept_shape = _reduced_output(x, dims, keepdim, dtypes.to_dtype(dtype))
        meta.device.kernels.sum(x._array, dims, target)
        self.in_shape, self.in_dtype = meta.shape, meta.dtype
        return out

    def backward(self, grad: Tensor) -> Grads:
        grad = grad if grad.dtype is self.in_dtype else grad.to(self.in_dtype)
        return (_expand_back(grad, self.kept_shape, self.in_shape), None, None, None)


class Var(Op):
    """Variance with Bessel's ``correction`` (1: unbiased, PyTorch's default), accumulated in
    float64 by the kernel (a float32 mean of values near 1e8 would lose its digits)."""

    kernel = staticmethod(lambda kernels: kernels.var)

    def forward(self, x: Tensor, dims: Dims, correction: int = 1, keepdim: bool = False) -> Tensor:
        meta = x._meta
        if not meta.dtype.is_floating_point:
            raise DTypeError(f"{self.op_name}: needs a floating-point input, got {describe(x)}")
        dims = normalize_dims(dims, len(meta.shape), self.op_name)
        out, target, self.kept_shape = _reduced_output(x, dims, keepdim)
        count = numel(tuple(meta.shape[d] for d in dims))
        self.kernel(meta.device.kernels)(x._array, dims, correction, target)
        self.save_for_backward(x)
        self.dims, self.divisor = dims, builtins.max(count - correction, 0)
        return out

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        centred = x - x.mean(self.dims, keepdim=True)
        scale = 2.0 / self.divisor if self.divisor else float("nan")  # too few elements: nan, as in PyTorch
        return (_expand_back(grad, self.kept_shape, x.shape) * centred * scale, None, None, None)


class Std(Var):
    """Standard deviation: the square root of the variance, taken before rounding to the
    input's dtype (so values near 1e38 in float32 do not overflow in the square)."""

    kernel = staticmethod(lambda kernels: kernels.std)

    def forward(self, x: Tensor, dims: Dims, correction: int = 1, keepdim: bool = False) -> Tensor:
        out = super().forward(x, dims, correction, keepdim)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, out = self.saved_tensors
        centred = x - x.mean(self.dims, keepdim=True)
        scale = 1.0 / self.divisor if self.divisor else float("nan")  # d std = d var / (2 std)
        # where std is 0 (all equal), PyTorch's gradient is 0, not 0 / 0 (the subgradient)
        per_std = (grad / out).masked_fill(out == 0, 0.0) if self.divisor else grad / out
        return (_expand_back(per_std, self.kept_shape, x.shape) * centred * scale, None, None, None)


class Amax(Op):
    """Largest value over ``dims``; equal maxima share the gradient evenly."""

    kernel = staticmethod(lambda kernels: kernels.amax)

    def forward(self, x: Tensor, dims: Dims, keepdim: bool = False) -> Tensor:
        meta, name = x._meta, self.op_name
        dims = normalize_dims(dims, len(meta.shape), name)
        _check_not_empty(name, x, dims)
        out, target, self.kept_shape = _reduced_output(x, dims, keepdim)
        self.kernel(meta.device.kernels)(x._array, dims, target)
        self.save_for_backward(x, out)
        self.dims = dims
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, out = self.saved_tensors
        hits = self.hits(x, out.reshape(self.kept_shape)).to(grad.dtype)
        count = hits.sum(self.dims, keepdim=True)
        return (_expand_back(grad, self.kept_shape, x.shape) * hits / count, None, None)

    def hits(self, x: Tensor, picked: Tensor) -> Tensor:
        """Where the extreme value was found. For amax/amin, as in PyTorch, a NaN extreme is
        found nowhere, and the gradient is NaN everywhere (0 / 0)."""
        return x == picked


class Amin(Amax):
    kernel = staticmethod(lambda kernels: kernels.amin)


class Max(Amax):
    """``x.max()`` with no dim: amax, except that a NaN maximum is found where the NaNs are,
    which share the gradient (PyTorch's max() and amax() differ in just this)."""

    def hits(self, x: Tensor, picked: Tensor) -> Tensor:
        return (x == picked).logical_or((x != x).logical_and(picked != picked))


class Min(Max):
    kernel = staticmethod(lambda kernels: kernels.amin)


class MaxWithIndices(Op):
    """max(x, dim) -> (values, indices); the gradient goes to the returned index."""

    kernel = staticmethod(lambda kernels: kernels.max_with_indices)

    def forward(self, x: Tensor, dim: int, keepdim: bool = False) -> ValuesIndices:
        meta, name = x._meta, self.op_name
        dim = normalize_dim(dim, len(meta.shape), name)
        if meta.shape and meta.shape[dim] == 0:
            raise ShapeError(f"{name}: cannot reduce an empty dimension of {describe(x)}")
        dims = (dim,) if meta.shape else ()
        values, values_target, self.kept_shape = _reduced_output(x, dims, keepdim)
        indices, indices_target, _ = _reduced_output(x, dims, keepdim, dtypes.int64)
        self.kernel(meta.device.kernels)(x._array, dim if meta.shape else None, values_target, indices_target)
        self.save_for_backward(indices)
        self.in_shape, self.in_dtype, self.dim = meta.shape, meta.dtype, dim
        return ValuesIndices(values, indices)

    def backward(self, grad: Tensor) -> Grads:
        (indices,) = self.saved_tensors
        grad_in = zeros(self.in_shape, dtype=self.in_dtype, device=grad.device)
        kernels = grad.device.kernels
        if not self.in_shape:
            kernels.copy(grad._array, grad_in._array)
        else:
            kernels.scatter_along(grad_in._array, self.dim, indices.reshape(self.kept_shape)._array,
                                  grad.reshape(self.kept_shape)._array)
        return (grad_in, None, None)


class MinWithIndices(MaxWithIndices):
    kernel = staticmethod(lambda kernels: kernels.min_with_indices)


def _arg_reduce(name: str, kernel: Callable[[Any], Any], x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    """argmax/argmin: int64 indices, never differentiable. dim=None: over the flattened tensor.
    ``kernel`` picks the function from a kernels namespace."""
    meta = x._meta
    if dim is None:
        _check_not_empty(name, x, tuple(range(len(meta.shape))))
        flat = x.reshape(-1)
        out_shape = tuple(1 for _ in meta.shape) if keepdim else ()
        out = Tensor._empty(out_shape, dtypes.int64, meta.device)
        kernel(meta.device.kernels)(flat._array, 0, out._array.reshape(()))
        return out
    dim = normalize_dim(dim, len(meta.shape), name)
    _check_not_empty(name, x, (dim,))
    out, target, _ = _reduced_output(x, (dim,), keepdim, dtypes.int64)
    kernel(meta.device.kernels)(x._array, dim, target)
    return out


class LogSumExp(Op):
    """log(sum(exp(x))) computed stably (the maximum is subtracted first)."""

    def forward(self, x: Tensor, dims: Dims, keepdim: bool = False) -> Tensor:
        meta = x._meta
        if not meta.dtype.is_floating_point:
            raise DTypeError(f"logsumexp: needs a floating-point input, got {describe(x)}")
        dims = normalize_dims(dims, len(meta.shape), "logsumexp")
        out, target, self.kept_shape = _reduced_output(x, dims, keepdim)
        meta.device.kernels.logsumexp(x._array, dims, target)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, out = self.saved_tensors
        softmax = (x - out.reshape(self.kept_shape)).exp()
        return (_expand_back(grad, self.kept_shape, x.shape) * softmax, None, None)


def _logical_reduce(name: str, kernel: Callable[[Any], Any], x: Tensor, dim: Dims, keepdim: bool) -> Tensor:
    meta = x._meta
    dims = normalize_dims(dim, len(meta.shape), name)
    out, target, _ = _reduced_output(x, dims, keepdim, dtypes.bool_)
    kernel(meta.device.kernels)(x._array, dims, target)
    return out


# -- the functional forms (zero.sum, and x.sum through ops/tensor_methods.py) ---------------------

_D = TypeVar("_D")


def _dim(dim: _D, axis: _D) -> _D:
    """``dim``, or NumPy's name for it, ``axis`` (not both)."""
    if axis is None:
        return dim
    if dim is not None:
        raise TypeError("pass dim or axis (its NumPy name), not both")
    return axis


def sum(input: Tensor, dim: Dims = None, keepdim: bool = False, dtype: DTypeLike | None = None, *,
        axis: Dims = None) -> Tensor:
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("sum", input)
    return Sum.apply(input, _dim(dim, axis), keepdim, dtype)


def mean(input: Tensor, dim: Dims = None, keepdim: bool = False, dtype: DTypeLike | None = None, *,
         axis: Dims = None) -> Tensor:
    """The sum over ``dim`` divided by the number of elements summed (nan over none)."""
    dim = _dim(dim, axis)
    if not (input.dtype.is_floating_point or dtype is not None and dtypes.to_dtype(dtype).is_floating_point):
        raise DTypeError(f"mean: needs a floating-point input or dtype=, got {describe(input)}")
    dims = normalize_dims(dim, input.ndim, "mean")
    count = numel(tuple(input.shape[d] for d in dims))
    total = Sum.apply(input if dtype is None else input.to(dtype), dims, keepdim)
    return total / count if count else total * float("nan")


def var(input: Tensor, dim: Dims = None, correction: int = 1, keepdim: bool = False, unbiased: bool | None = None,
        *, axis: Dims = None) -> Tensor:
    """The variance; ``unbiased`` (PyTorch's older argument) is correction 1 or 0."""
    if unbiased is not None:
        correction = int(unbiased)
    return Var.apply(input, _dim(dim, axis), correction, keepdim)


def std(input: Tensor, dim: Dims = None, correction: int = 1, keepdim: bool = False, unbiased: bool | None = None,
        *, axis: Dims = None) -> Tensor:
    if unbiased is not None:
        correction = int(unbiased)
    return Std.apply(input, _dim(dim, axis), correction, keepdim)


@overload
def max(input: Tensor, dim: None = None, keepdim: bool = False, *, axis: None = None) -> Tensor: ...
@overload
def max(input: Tensor, dim: Tensor, keepdim: bool = False, *, axis: None = None) -> Tensor: ...
@overload
def max(input: Tensor, dim: int, keepdim: bool = False, *, axis: None = None) -> ValuesIndices: ...
@overload
def max(input: Tensor, dim: None = None, keepdim: bool = False, *, axis: int) -> ValuesIndices: ...


def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        axis: int | None = None) -> Tensor | ValuesIndices:
    """max(x) -> the largest value; max(x, dim) -> (values, indices); max(x, other) -> maximum."""
    dim = _dim(dim, axis)
    if isinstance(dim, Tensor):
        return input.maximum(dim)
    if dim is None:
        return Max.apply(input, None, False)
    return MaxWithIndices.apply(input, dim, keepdim)


@overload
def min(input: Tensor, dim: None = None, keepdim: bool = False, *, axis: None = None) -> Tensor: ...
@overload
def min(input: Tensor, dim: Tensor, keepdim: bool = False, *, axis: None = None) -> Tensor: ...
@overload
def min(input: Tensor, dim: int, keepdim: bool = False, *, axis: None = None) -> ValuesIndices: ...
@overload
def min(input: Tensor, dim: None = None, keepdim: bool = False, *, axis: int) -> ValuesIndices: ...


def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        axis: int | None = None) -> Tensor | ValuesIndices:
    """min(x) -> the smallest value; min(x, dim) -> (values, indices); min(x, other) -> minimum."""
    dim = _dim(dim, axis)
    if isinstance(dim, Tensor):
        return input.minimum(dim)
    if dim is None:
        return Min.apply(input, None, False)
    return MinWithIndices.apply(input, dim, keepdim)


def amax(input: Tensor, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None) -> Tensor:
    return Amax.apply(input, _dim(dim, axis), keepdim)


def amin(input: Tensor, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None) -> Tensor:
    return Amin.apply(input, _dim(dim, axis), keepdim)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False, *, axis: int | None = None) -> Tensor:
    return _arg_reduce("argmax", lambda kernels: kernels.argmax, input, _dim(dim, axis), keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False, *, axis: int | None = None) -> Tensor:
    return _arg_reduce("argmin", lambda kernels: kernels.argmin, input, _dim(dim, axis), keepdim)


def logsumexp(input: Tensor, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None) -> Tensor:
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:
        input = input.to(dtypes.get_default_dtype())   # integers and bools promote, as in PyTorch
    return LogSumExp.apply(input, _dim(dim, axis), keepdim)


def all(input: Tensor, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None) -> Tensor:
    return _logical_reduce("all", lambda kernels: kernels.all, input, _dim(dim, axis), keepdim)


def any(input: Tensor, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None) -> Tensor:
    return _logical_reduce("any", lambda kernels: kernels.any, input, _dim(dim, axis), keepdim)
