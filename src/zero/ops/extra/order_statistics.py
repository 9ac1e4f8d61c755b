"""PyTorch's order statistics beside median: ``kthvalue``, ``mode``, ``nanmedian``,
``quantile`` and ``nanquantile``.

Each sorts (``sort``, NaN last) or finds where its answer sits, then gathers the values
from the input at those indices, so the gradient goes to the elements picked (quantile's
interpolation weights are constants, as in PyTorch). ``mode`` counts runs on the host
(NumPy): its answer's shape does not depend on the data, but run counting has no op.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ... import dtypes
from ...errors import IndexRangeError
from ...tensors.creation import tensor as make_tensor
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..elementwise import where
from ..joining import gather
from .sorting import sort

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


class ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


def _check_tensor(op: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def _finish(values: Tensor, indices: Tensor, dim: int, keepdim: bool, x: Tensor) -> ValuesIndices:
    """(values, indices) picked along dim (kept with size 1), squeezed unless keepdim."""
    if x.ndim == 0:
        return ValuesIndices(values.reshape(()), indices.reshape(()))
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return ValuesIndices(values, indices)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The k-th smallest element along ``dim`` (k counts from 1) and its index."""
    x = _check_tensor("kthvalue", input)
    dim = normalize_dim(dim, x.ndim, "kthvalue")
    size = x.shape[dim] if x.ndim else 1
    if not isinstance(k, int) or not 1 <= k <= size:
        raise IndexRangeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    rows = x.reshape(1) if x.ndim == 0 else x
    order = sort(rows.detach(), dim, stable=True).indices
    indices = order.narrow(dim, k - 1, 1).contiguous()
    return _finish(gather(rows, dim, indices), indices, dim, keepdim, x)


def _mode_indices(array: np.ndarray) -> np.ndarray:
    """For rows along the last axis: the index of the last occurrence of the most frequent
    value (the smallest such value on a tie), as PyTorch's CPU mode answers."""
    n = array.shape[-1]
    rows = array.reshape(-1, n)
    out = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        order = np.argsort(row, kind="stable")
        ordered = row[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        lengths = np.diff(np.r_[starts, n])
        best = int(np.argmax(lengths))          # the first longest run: the smallest value
        out[r] = order[starts[best]:starts[best] + lengths[best]].max()
    return out.reshape(array.shape[:-1] + (1,))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The most frequent value along ``dim`` and the index of its last occurrence."""
    x = _check_tensor("mode", input)
    dim = normalize_dim(dim, x.ndim, "mode")
    rows = x.reshape(1) if x.ndim == 0 else x
    if rows.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    last = rows.movedim(dim, -1)
    found = _mode_indices(last.detach().cpu().numpy())
    indices = make_tensor(found, device=x.device).movedim(-1, dim).contiguous()
    return _finish(gather(rows, dim, indices), indices, dim, keepdim, x)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | ValuesIndices:
    """The lower median of the non-NaN elements (NaN where all are NaN); with ``dim``, the
    values and their indices."""
    x = _check_tensor("nanmedian", input)
    if dim is None:
        flat = x.reshape(-1)
        if flat.numel() == 0:
            return make_tensor(math.nan, dtype=x.dtype, device=x.device)
        return _nanmedian_along(flat, 0, False).values
    return _nanmedian_along(x, dim, keepdim)


def _nanmedian_along(x: Tensor, dim: int, keepdim: bool) -> ValuesIndices:
    dim = normalize_dim(dim, x.ndim, "nanmedian")
    rows = x.reshape(1) if x.ndim == 0 else x
    if rows.shape[dim] == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {dim} to have non-zero size.")
    order = sort(rows.detach(), dim, stable=True).indices
    count = (rows.detach() == rows.detach()).sum(dim, keepdim=True)   # the non-NaN elements
    position = ((count - 1) // 2).clamp(min=0)
    indices = gather(order, dim, position)
    return _finish(gather(rows, dim, indices), indices, dim, keepdim, x)


def _quantile(op: str, x: Tensor, q: float | Tensor, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    _check_tensor(op, x)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if not isinstance(q, Tensor):
        q_values = np.array([float(q)])
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        scalar_q = q.ndim == 0
        q_values = q.detach().cpu().numpy().reshape(-1).astype(np.float64)
    if np.any((q_values < 0) | (q_values > 1)):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if x.numel() == 0 and dim is None:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    rows = x.reshape(-1) if dim is None else (x.reshape(1) if x.ndim == 0 else x)
    axis = 0 if dim is None else normalize_dim(dim, x.ndim, op)
    if rows.shape[axis] == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    last = rows.movedim(axis, -1)                                      # (..., n)
    ordered = sort(last, -1).values                                   # NaN last
    n = last.shape[-1]
    nan_count = (last.detach() != last.detach()).sum(-1, keepdim=True)
    count = (n - nan_count) if ignore_nan else (nan_count * 0 + n)     # (..., 1)
    qs = make_tensor(q_values, dtype=dtypes.float64, device=x.device)  # (Q,)
    position = (count.to(dtypes.float64) - 1).clamp(min=0) * qs       # (..., Q)
    low = position.floor()
    high = position.ceil()
    if interpolation == "lower":
        high = low
    elif interpolation == "higher":
        low = high
    elif interpolation == "nearest":
        low = high = position.round()
    # (a row with NaN answers its NaN below: its other values must not carry NaN into the gradient)
    finite = ordered if ignore_nan else where(ordered != ordered, 0.0, ordered)
    low_values = gather(finite, -1, low.to(dtypes.int64))
    high_values = gather(finite, -1, high.to(dtypes.int64))
    if interpolation == "midpoint":
        result = low_values + (high_values - low_values) * 0.5
    elif interpolation == "linear":
        weight = (position - low).to(x.dtype)
        if isinstance(q, Tensor) and q.requires_grad:   # q's gradient too, as PyTorch gives it
            span = (count.to(dtypes.float64) - 1).clamp(min=0).to(x.dtype)
            weight = span * q.reshape(-1) - low.to(x.dtype)
        result = low_values + (high_values - low_values) * weight
    else:
        result = low_values
    if not ignore_nan:   # a row with NaN: its NaN (sorted last), whose gradient PyTorch also passes on
        result = where((nan_count > 0).expand(result.shape), ordered.narrow(-1, n - 1, 1).expand(result.shape),
                       result)
    result = result.movedim(-1, 0)                                    # (Q, ...)
    if keepdim:
        if dim is None:
            result = result.reshape((result.shape[0],) + (1,) * x.ndim)
        elif x.ndim:
            result = result.unsqueeze(axis + 1)
    return result[0] if scalar_q else result


def quantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles along ``dim`` (of all elements when None); NaN where a row has NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile ignoring NaN (NaN only where a row is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)
