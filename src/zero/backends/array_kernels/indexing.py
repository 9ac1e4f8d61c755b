"""Indexing over ``xp`` (``numpy`` or ``cupy``): advanced indexing (CuPy's bounds checked,
as NumPy checks its own), gathers and scatters along an axis, triangles, NLL on
log-probabilities (a gather), and the searches and counts, which return a new array (their
size depends on the values)."""
from __future__ import annotations

import builtins
from types import ModuleType
from typing import Any

import numpy as np

from ..kernel_contract import Array, Key, Operand


def index_extremes(xp: ModuleType, index: Array) -> tuple[int, int]:
    """(smallest, largest) entry of an integer array with at least one entry, as Python
    ints (the host waits for the device; the CPU has a one-pass loop of its own)."""
    return int(index.min()), int(index.max())


def _check_bounds(xp: ModuleType, x: Array, key: Key) -> None:
    """IndexError for an integer index array that reaches outside ``x`` (NumPy's rule)."""

    def consumed(item: Any) -> int:  # how many of x's axes an index item stands for
        if item is None or item is Ellipsis:
            return 0
        return item.ndim if isinstance(item, xp.ndarray) and item.dtype == bool else 1

    axis = 0
    for item in key:
        if item is Ellipsis:
            axis += x.ndim - builtins.sum(consumed(k) for k in key)
            continue
        if isinstance(item, xp.ndarray) and item.dtype.kind in "iu" and item.size:
            size = x.shape[axis]
            low, high = index_extremes(xp, item)
            if low < -size or high >= size:
                raise IndexError(f"index {high if high >= size else low} is out of bounds for axis {axis} "
                                 f"with size {size}")
        axis += consumed(item)


def index_get(xp: ModuleType, x: Array, key: Key) -> Array:
    """A new array of x[key]."""
    if xp is not np:      # CuPy wraps out-of-range indices (the package docstring)
        _check_bounds(xp, x, key)
    return x[key]


def index_put(xp: ModuleType, x: Array, key: Key, values: Operand) -> None:
    if xp is not np:
        _check_bounds(xp, x, key)
    x[key] = values


def index_add(xp: ModuleType, out: Array, key: Key, values: Operand) -> None:
    """out[key] += values, accumulating where an index repeats."""
    xp.add.at(out, key, values)


def index_select(xp: ModuleType, x: Array, axis: int, index: Array, out: Array) -> None:
    """out = x taken along ``axis`` at ``index`` (any shape: an embedding lookup for axis 0).
    The CPU has its own (cpu/kernels/indexing.py): NumPy's take buffers ``out``."""
    if out.flags.c_contiguous:
        xp.take(x, index, axis=axis, out=out)
    else:
        xp.copyto(out, xp.take(x, index, axis=axis))


def _window(x: Array, axis: int, index: Array) -> Array:
    """x cut to index's extent in every dim but ``axis``: the window a gather or scatter covers."""
    return x[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(index.shape))]


def gather(xp: ModuleType, x: Array, axis: int, index: Array, out: Array) -> None:
    """out = x picked along ``axis`` by index (index may be smaller than x elsewhere)."""
    xp.copyto(out, xp.take_along_axis(_window(x, axis, index), index, axis=axis))


def scatter_add(xp: ModuleType, out: Array, axis: int, index: Array, values: Array) -> None:
    """out[.., index[i, j], ..] += values[i, j] along ``axis`` (gather's backward)."""
    rank = len(index.shape)
    position = [xp.arange(n).reshape(tuple(n if i == d else 1 for i in range(rank)))  # open grid
                for d, n in enumerate(index.shape)]
    position[axis] = index
    xp.add.at(out, tuple(position), values)


def scatter_along(xp: ModuleType, out: Array, axis: int, indices: Array, values: Array) -> None:
    """out[..., indices[...], ...] = values along ``axis`` (indices and values keep that axis)."""
    xp.put_along_axis(out, indices, values, axis=axis)


def scatter_window(xp: ModuleType, out: Array, axis: int, index: Array, values: Array) -> None:
    """out[.., index[i, j], ..] = values[i, j] along ``axis``, where index (and values, of
    index's shape) may be smaller than out in the other dims: the window out[:i, :j]."""
    xp.put_along_axis(_window(out, axis, index), index, values, axis=axis)


def triangle(xp: ModuleType, x: Array, diagonal: int, upper: bool, out: Array) -> None:
    """Keep the upper (triu) or lower (tril) triangle of the last two dims, zero the rest."""
    xp.copyto(out, xp.triu(x, diagonal) if upper else xp.tril(x, diagonal))


# -- NLL on log-probabilities (a gather; the CPU and CUDA have loops of their own) --------------------


def _picked(xp: ModuleType, target: Array, weight: Array | None, ignore_index: int,
            dtype: Any) -> tuple[Array, Array, Array]:
    """(valid rows, target with ignored rows pointing at class 0, per-row weight)."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    row_weight = xp.ones(target.shape, dtype) if weight is None else weight[safe]
    return valid, safe, row_weight


def nll_loss_forward(xp: ModuleType, log_probs: Array, target: Array, weight: Array | None, ignore_index: int,
                     loss: Array) -> None:
    """loss (N,) = -w[t] * log_probs[t] per row, 0 where ignored."""
    valid, safe, row_weight = _picked(xp, target, weight, ignore_index, log_probs.dtype)
    picked = xp.take_along_axis(log_probs, safe[:, None], axis=1)[:, 0]
    xp.copyto(loss, xp.where(valid, -row_weight * picked, 0), casting="unsafe")


def nll_loss_backward(xp: ModuleType, grad_loss: Array, target: Array, weight: Array | None, ignore_index: int,
                      grad_input: Array) -> None:
    """grad_input (N, C): -w[t] * grad_loss at the target, 0 elsewhere."""
    valid, safe, row_weight = _picked(xp, target, weight, ignore_index, grad_input.dtype)
    grad_input.fill(0)
    grad_input[xp.arange(safe.shape[0]), safe] = xp.where(valid, -row_weight * grad_loss, 0)


# -- searches and counts ---------------------------------------------------------------------------


def argwhere(xp: ModuleType, x: Array) -> Array:
    """(count, ndim) int64: the indices of the nonzero elements, in row-major order."""
    return xp.argwhere(x)


def unique(xp: ModuleType, x: Array, axis: int | None, return_inverse: bool,
           return_counts: bool) -> tuple[Array, Array | None, Array | None]:
    """(sorted unique values, inverse or None, counts or None); NaNs are each their own
    value (PyTorch's rule), ``axis`` None: of the flattened array."""
    found = xp.unique(x, return_inverse=return_inverse, return_counts=return_counts, axis=axis,
                      equal_nan=False)
    found = found if isinstance(found, tuple) else (found,)
    values, rest = found[0], list(found[1:])
    inverse = rest.pop(0) if return_inverse else None
    counts = rest.pop(0) if return_counts else None
    return values, inverse, counts


def bincount(xp: ModuleType, x: Array, weights: Array | None, minlength: int) -> Array:
    return xp.bincount(x, weights=weights, minlength=minlength)


def searchsorted(xp: ModuleType, sequence: Array, values: Array, right: bool) -> Array:
    """Where each value would be inserted into the sorted 1-D ``sequence`` (after equal
    elements when ``right``); a 2-D sequence (rows, n) searches row r for values[r]."""
    side = "right" if right else "left"
    if sequence.ndim == 1:
        return xp.searchsorted(sequence, values, side=side)
    if sequence.shape[0] == 0:
        return xp.zeros(values.shape, dtype=xp.int64)
    return xp.stack([xp.searchsorted(row, row_values, side=side) for row, row_values in zip(sequence, values)])


def histogram(xp: ModuleType, x: Array, bins: int, low: float, high: float) -> Array:
    """Counts of x in ``bins`` equal bins over [low, high] (the last one closed), others ignored."""
    counts, _ = xp.histogram(x, bins=bins, range=(low, high))
    return counts
