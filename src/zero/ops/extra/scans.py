"""PyTorch's running (scan) functions beside cumsum/cumprod: ``cummax``, ``cummin``,
``logcumsumexp``, and ``diff``.

All are compositions of existing ops, so they run on every device and differentiate
through the ops they are made of:

    cummax / cummin   a Hillis-Steele scan over (value, index) pairs: ceil(log2 n) rounds,
                      each combining every position with the one 2^k before it (the later
                      pair wins on a tie or a NaN, as PyTorch's sequential rule gives); the
                      values are then gathered at the indices, so the gradient goes to the
                      element each running extreme came from
    logcumsumexp      the same scan with logaddexp (exact: no shift by a global maximum,
                      which would underflow to -inf far below it)
    diff              out[i] = x[i + 1] - x[i], n times, after prepend/append are joined on
"""
from __future__ import annotations

from typing import NamedTuple

from ... import dtypes
from ...tensors.creation import arange
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..elementwise import where
from ..joining import cat, gather
from ..views import broadcast_to
from .binary_math import logaddexp


class ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


def _shifted_pairs(x: Tensor, dim: int, step: int) -> tuple[Tensor, Tensor]:
    """(later, earlier): x from position ``step`` on along dim, and x up to ``step`` from the end."""
    n = x.shape[dim]
    later = x.narrow(dim, step, n - step)
    earlier = x.narrow(dim, 0, n - step)
    return later, earlier


def _running_extreme(op: str, x: Tensor, dim: int, later_wins) -> ValuesIndices:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    dim = normalize_dim(dim, x.ndim, op)
    if x.ndim == 0:
        return ValuesIndices(x.clone(), x.new_zeros((), dtype=dtypes.int64))
    n = x.shape[dim]
    shape = [1] * x.ndim
    shape[dim] = n
    index = broadcast_to(arange(n, device=x.device).reshape(shape), x.shape)
    values = x.detach()
    step = 1
    while step < n:
        later_v, earlier_v = _shifted_pairs(values, dim, step)
        later_i, earlier_i = _shifted_pairs(index, dim, step)
        keep_later = later_wins(later_v, earlier_v)
        values = cat([values.narrow(dim, 0, step), where(keep_later, later_v, earlier_v)], dim)
        index = cat([index.narrow(dim, 0, step), where(keep_later, later_i, earlier_i)], dim)
        step *= 2
    index = index.contiguous()
    return ValuesIndices(gather(x, dim, index), index)


def cummax(input: Tensor, dim: int) -> ValuesIndices:
    """The running maximum along ``dim`` and where each came from (the latest of equal
    values; a NaN, once met, stays)."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:
        input_values = input.to(dtypes.uint8)
        values, indices = _running_extreme("cummax", input_values, dim, lambda b, a: (b >= a) | (b != b))
        return ValuesIndices(values.to(dtypes.bool_), indices)
    return _running_extreme("cummax", input, dim, lambda b, a: (b >= a) | (b != b))


def cummin(input: Tensor, dim: int) -> ValuesIndices:
    """The running minimum along ``dim`` and where each came from (as cummax)."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:
        input_values = input.to(dtypes.uint8)
        values, indices = _running_extreme("cummin", input_values, dim, lambda b, a: (b <= a) | (b != b))
        return ValuesIndices(values.to(dtypes.bool_), indices)
    return _running_extreme("cummin", input, dim, lambda b, a: (b <= a) | (b != b))


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(x))) along ``dim``, without overflow or underflow."""
    if not isinstance(input, Tensor):
        raise TypeError(f"logcumsumexp(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"logcumsumexp: expected a floating point tensor, got {input.dtype}")
    if input.ndim == 0:
        normalize_dim(dim, 1, "logcumsumexp")
        return input.clone()
    dim = normalize_dim(dim, input.ndim, "logcumsumexp")
    n = input.shape[dim]
    out = input.clone()
    step = 1
    while step < n:
        later, earlier = _shifted_pairs(out, dim, step)
        out = cat([out.narrow(dim, 0, step), logaddexp(later, earlier)], dim)
        step *= 2
    return out


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along ``dim``: x[1:] - x[:-1], n times (for bool
    tensors: x[1:] != x[:-1]); ``prepend``/``append`` are joined on first."""
    if not isinstance(input, Tensor):
        raise TypeError(f"diff(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = normalize_dim(dim, input.ndim, "diff")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        later, earlier = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = later != earlier if x.dtype is dtypes.bool_ else later - earlier
    return x if x is not input else input.clone()

