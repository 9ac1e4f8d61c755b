"""Searching and counting, PyTorch's: unique, bincount, searchsorted, bucketize, histc,
tril_indices, triu_indices. None is differentiable (their results are indices and counts;
histc's and bincount's with weights are piecewise constant in the input, as PyTorch has them
without a gradient).

    unique(x, dim=None)          the sorted distinct values (or slices along dim), optionally
                                 with the inverse (where each element went) and the counts;
                                 NaNs are each distinct, as in PyTorch
    bincount(x, weights)         how often each of 0..max(x) occurs (or the weights' sum)
    searchsorted(seq, v)         where v would be inserted into the sorted last dim of seq,
                                 before equal values (after with right=True / side="right")
    bucketize(v, boundaries)     searchsorted(boundaries, v)
    histc(x, bins, min, max)     counts in equal bins over [min, max] (the data's range when
                                 min == max, as both are by default); values outside are ignored
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

from ... import dtypes
from ...backends.device import Device
from ...dtypes import DTypeLike, Number
from ...errors import DTypeError, ShapeError, describe
from ...tensors.creation import tensor
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from .scatter import _to_tensor


@overload
def unique(input: Tensor, sorted: bool = True, return_inverse: Literal[False] = False,
           return_counts: Literal[False] = False, dim: int | None = None) -> Tensor: ...
@overload
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Tensor | tuple[Tensor, ...]: ...


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
    """The distinct values (always sorted, as PyTorch's CPU and CUDA kernels give them even with
    sorted=False); with ``dim``, the distinct slices along it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unique: expected a tensor, got {describe(input)}")
    axis = None if dim is None else normalize_dim(dim, input.ndim, "unique")
    source = input.reshape(1) if input.ndim == 0 else input
    values, inverse, counts = input.device.kernels.unique(source._array, axis, return_inverse, return_counts)
    result = [_to_tensor(values, input.dtype, input.device)]
    if return_inverse:
        assert inverse is not None  # (the kernel returns it when asked)
        inverse_shape = input.shape if axis is None else (input.shape[axis],)
        result.append(_to_tensor(inverse.reshape(inverse_shape), dtypes.int64, input.device))
    if return_counts:
        assert counts is not None
        result.append(_to_tensor(counts, dtypes.int64, input.device))
    return result[0] if len(result) == 1 else tuple(result)


def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts of each value 0..max(x) of a 1-D non-negative integer tensor (at least
    ``minlength`` of them): int64, or the sum of the weights (float32 stays float32, other
    weights are summed in float64, as in PyTorch)."""
    if not isinstance(x, Tensor) or x.dtype.category != dtypes.INTEGER and x.dtype is not dtypes.bool_:
        raise DTypeError(f"bincount: needs a 1-D tensor of non-negative integers, got {describe(x)}")
    if x.ndim != 1:
        raise ShapeError(f"bincount: needs a 1-D tensor of non-negative integers, got {describe(x)}")
    if x.numel() and int(x.amin().item()) < 0:
        raise ValueError(f"bincount: the values must be non-negative, got a minimum of {int(x.amin().item())}")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    out_dtype = dtypes.int64
    weight_array = None
    if weights is not None:
        if not isinstance(weights, Tensor) or weights.shape != x.shape:
            raise ShapeError(f"bincount: weights must be a tensor of the input's shape {list(x.shape)}, "
                             f"got {describe(weights)}")
        out_dtype = dtypes.float32 if weights.dtype is dtypes.float32 else dtypes.float64
        weight_array = weights.detach().to(dtypes.float64)._array
    counts = x.device.kernels.bincount(x._array, weight_array, minlength)
    return _to_tensor(counts, out_dtype, x.device)


def _side(right: bool, side: str | None) -> bool:
    """Whether to search on the right of equal values, from ``right`` and ``side``."""
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if right and side == "left":
        raise ValueError("searchsorted: side='left' and right=True ask for opposite sides")
    return side == "right"


def searchsorted(sorted_sequence: Tensor, values: Tensor | Number | Sequence[Number], *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """For each value, the index in the sorted last dim of ``sorted_sequence`` where it would
    be inserted to keep it sorted. A 1-D sequence serves every value; an N-D one has the
    leading dims of ``values``, row by row. ``sorter``: indices that sort the sequence."""
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"searchsorted: sorted_sequence must be a tensor, got {describe(sorted_sequence)}")
    on_right = _side(right, side)
    values = values if isinstance(values, Tensor) else tensor(values, device=sorted_sequence.device)
    sequence = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    if sequence.ndim > 1 and sequence.shape[:-1] != values.shape[:-1]:
        raise ShapeError(f"searchsorted: the sorted sequence must be 1-D or have the leading dims of the values: "
                         f"got {describe(sorted_sequence)} and {describe(values)}")
    common = dtypes.result_type(sequence, values)
    sequence, values = sequence.detach().to(common), values.detach().to(common)
    if sequence.ndim <= 1:
        found = sequence.device.kernels.searchsorted(sequence.reshape(-1)._array, values._array, on_right)
    else:  # row by row: each row of values in its own row of the sequence
        rows = sequence.reshape(-1, sequence.shape[-1]).contiguous()
        row_values = values.reshape(rows.shape[0], -1) if values.numel() else values.reshape(rows.shape[0], 0)
        found = sequence.device.kernels.searchsorted(rows._array, row_values.contiguous()._array, on_right)
        found = found.reshape(values.shape)
    return _to_tensor(found, dtypes.int32 if out_int32 else dtypes.int64, sequence.device)


def bucketize(x: Tensor | Number | Sequence[Number], boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each element among the sorted 1-D ``boundaries``: i with
    boundaries[i-1] < x <= boundaries[i] (right=True: boundaries[i-1] <= x < boundaries[i])."""
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        raise ShapeError(f"bucketize: boundaries must be a 1-D tensor, got {describe(boundaries)}")
    return searchsorted(boundaries, x, out_int32=out_int32, right=right)


def histc(x: Tensor, bins: int = 100, min: float = 0.0, max: float = 0.0) -> Tensor:
    """A histogram of the elements of a floating-point tensor, in x's dtype."""
    if not isinstance(x, Tensor) or not x.dtype.is_floating_point:
        raise DTypeError(f"histc: needs a floating-point tensor, got {describe(x)} (as in PyTorch)")
    if bins <= 0:
        raise ValueError(f"histc: bins must be positive, got {bins}")
    low, high = float(min), float(max)
    if low == high and x.numel():  # (PyTorch: not only when both are 0)
        low, high = float(x.amin().item()), float(x.amax().item())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise ValueError(f"histc: max ({high}) must be larger than min ({low})")
    counts = x.device.kernels.histogram(x.detach()._array, bins, low, high)
    return _to_tensor(counts, x.dtype, x.device)


def _triangle_indices(op: str, upper: bool, row: int, col: int, offset: int, dtype: DTypeLike | None,
                      device: Device | str | None) -> Tensor:
    if row < 0 or col < 0:
        raise ValueError(f"{op}: row and col must be non-negative, got {row} and {col}")
    pick = np.triu_indices if upper else np.tril_indices
    return tensor(np.stack(pick(row, offset, col)).astype(np.int64).reshape(2, -1),
                  dtype=dtypes.int64 if dtype is None else dtype, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike | None = None,
                 device: Device | str | None = None) -> Tensor:
    """(2, N): the row and column indices of the lower triangle (offset: above or below the
    main diagonal) of a row x col matrix, row by row."""
    return _triangle_indices("tril_indices", False, row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike | None = None,
                 device: Device | str | None = None) -> Tensor:
    return _triangle_indices("triu_indices", True, row, col, offset, dtype, device)
