"""Statistics over dimensions, PyTorch's: count_nonzero, nansum, nanmean, median, aminmax,
std_mean and var_mean. Most are compositions of reductions that have their backward
(sum, amin/amax, var, std); median is an op of its own.

    median(x)           the lower median of all elements (of n sorted values, the one at
                        (n - 1) // 2), NaN if there is one; the gradient is shared by the
                        elements equal to it (NaN counting as equal to NaN), as PyTorch does
    median(x, dim)      (values, indices) along dim: the lower median, or the first NaN of a
                        row that has one; the index is where it stood (of equal values, the
                        one a stable sort puts there); the gradient goes to that index
    aminmax(x, dim=)    (min, max) -- amin and amax, equal extremes sharing the gradient
    nansum, nanmean     NaN counted as absent: 0 in the sum, not in the count
"""
from __future__ import annotations

from typing import NamedTuple, overload

from ... import dtypes
from ...dtypes import DTypeLike
from ...errors import DTypeError, ShapeError, describe
from ...tensors.creation import full
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..arguments import check_floats
from ..elementwise import Where
from ..reduction import Amax, Amin, Dims, Max, MaxWithIndices, Sum, ValuesIndices, Var, mean, std


class MinMax(NamedTuple):
    min: Tensor
    max: Tensor


def count_nonzero(input: Tensor, dim: Dims = None) -> Tensor:
    """How many elements are not 0 (NaN counts), over ``dim`` (an int, a tuple, None: all): int64."""
    if not isinstance(input, Tensor):
        raise TypeError(f"count_nonzero: expected a tensor, got {describe(input)}")
    return Sum.apply(input != 0, dim, False)


def nansum(input: Tensor, dim: Dims = None, keepdim: bool = False, dtype: DTypeLike | None = None) -> Tensor:
    """The sum with NaN counted as 0 (whose gradient is then 0)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nansum: expected a tensor, got {describe(input)}")
    if input.dtype.is_floating_point:
        input = input.masked_fill(input.isnan(), 0.0)
    return Sum.apply(input, dim, keepdim, dtype)


def nanmean(input: Tensor, dim: Dims = None, keepdim: bool = False, dtype: DTypeLike | None = None) -> Tensor:
    """The mean of the elements that are not NaN (NaN where all are)."""
    check_floats("nanmean", input=input if dtype is None else input.to(dtype))
    if dtype is not None:
        input = input.to(dtype)
    count = Sum.apply(input.isnan().logical_not(), dim, keepdim)
    return nansum(input, dim, keepdim) / count


def _lower_median(x: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """(values, indices) of the lower median along ``dim`` of a tensor without graph, both
    with ``dim`` kept as size 1: a stable sort (NaN last), then the element at (n - 1) // 2,
    or at n - count(NaN) -- the first NaN -- where the row has one."""
    n = x.shape[dim]
    ordered = Tensor._empty(x.shape, x.dtype, x.device)
    order = Tensor._empty(x.shape, dtypes.int64, x.device)
    x.device.kernels.sort(x._array, dim, False, ordered._array, order._array)
    position = full(x.shape[:dim] + (1,) + x.shape[dim + 1:], (n - 1) // 2, dtype=dtypes.int64, device=x.device)
    if x.dtype.is_floating_point:
        nans = Sum.apply(x.isnan(), dim, True)
        position = Where.apply(nans > 0, n - nans, position)
    return ordered.gather(dim, position), order.gather(dim, position)


class MedianAlongDim(MaxWithIndices):
    """median(x, dim) -> (values, indices); backward (max(dim)'s) sends the gradient to the index."""

    def forward(self, x: Tensor, dim: int, keepdim: bool = False) -> ValuesIndices:
        dim = normalize_dim(dim, x.ndim, "median")
        source = x.detach().reshape(1) if x.ndim == 0 else x.detach()
        if source.shape[dim] == 0:
            raise ShapeError(f"median: cannot take the median over an empty dimension {dim} of {describe(x)}")
        values, indices = _lower_median(source, dim)
        self.save_for_backward(indices)
        self.in_shape, self.in_dtype, self.dim = x.shape, x.dtype, dim
        self.kept_shape = x.shape[:dim] + (1,) + x.shape[dim + 1:] if x.ndim else ()
        if not keepdim or x.ndim == 0:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return ValuesIndices(values, indices)


class Median(Max):
    """median(x): the lower median of all elements; equal elements share the gradient (Max's rule)."""

    def forward(self, x: Tensor, dims: Dims = None, keepdim: bool = False) -> Tensor:
        if x.numel() == 0:
            if not x.dtype.is_floating_point:
                raise ShapeError(f"median: the median of an empty integer tensor is undefined ({describe(x)})")
            out = full((), float("nan"), dtype=x.dtype, device=x.device)
        else:
            values, _ = _lower_median(x.detach().reshape(-1), 0)
            out = values.reshape(())
        self.save_for_backward(x, out)
        self.dims, self.kept_shape = tuple(range(x.ndim)), (1,) * x.ndim
        return out


@overload
def median(input: Tensor, dim: None = None, keepdim: bool = False) -> Tensor: ...
@overload
def median(input: Tensor, dim: int, keepdim: bool = False) -> ValuesIndices: ...


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | ValuesIndices:
    """The lower median of all elements, or with ``dim`` the (values, indices) along it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"median: expected a tensor, got {describe(input)}")
    if input.dtype is dtypes.bool_:
        raise DTypeError(f"median: not defined for a bool tensor ({describe(input)}), as in PyTorch; "
                         "convert it with .long() first")
    if dim is None:
        return Median.apply(input)
    return MedianAlongDim.apply(input, dim, keepdim)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """(min, max) over ``dim`` (one int, or every dimension for None)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"aminmax: expected a tensor, got {describe(input)}")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax: dim must be an int or None, got {dim!r}")
    if input.numel() == 0 and (dim is None or input.ndim
                               and input.shape[normalize_dim(dim, input.ndim, "aminmax")] == 0):
        raise ShapeError(f"aminmax: cannot reduce an empty dimension of {describe(input)} (there is no identity)")
    return MinMax(Amin.apply(input, dim, keepdim), Amax.apply(input, dim, keepdim))


def _correction(correction: int | None, unbiased: bool | None) -> int:
    if unbiased is not None:
        return int(unbiased)
    return 1 if correction is None else correction


def _dim_or_axis(op: str, dim: Dims, axis: Dims) -> Dims:
    """``dim``, or NumPy's name for it, ``axis`` (PyTorch takes either, not both)."""
    if axis is None:
        return dim
    if dim is not None:
        raise TypeError(f"{op}: pass dim or axis (its NumPy name), not both")
    return axis


def var_mean(input: Tensor, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: int | None = None, axis: Dims = None) -> tuple[Tensor, Tensor]:
    """(var, mean) over ``dim`` with Bessel's ``correction`` (1 by default)."""
    check_floats("var_mean", input=input)
    dim = _dim_or_axis("var_mean", dim, axis)
    return Var.apply(input, dim, _correction(correction, unbiased), keepdim), mean(input, dim, keepdim)


def std_mean(input: Tensor, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: int | None = None, axis: Dims = None) -> tuple[Tensor, Tensor]:
    """(std, mean) over ``dim`` with Bessel's ``correction`` (1 by default)."""
    check_floats("std_mean", input=input)
    dim = _dim_or_axis("std_mean", dim, axis)
    return std(input, dim, _correction(correction, unbiased), keepdim), mean(input, dim, keepdim)

