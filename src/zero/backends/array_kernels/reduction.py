"""Reductions over ``xp`` (``numpy`` or ``cupy``): over ``axes`` into ``out`` shaped as x
without them (a copy over no axes), extremes with their indices, sorts, running sums and
products, and clip_grad_norm_'s passes over many arrays at once."""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from types import ModuleType

import numpy as np

from ..kernel_contract import Array, Axes
from ._quiet import quiet


def sum(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    if not axes:
        xp.copyto(out, x, casting="unsafe")
    else:
        xp.sum(x, axis=axes, dtype=out.dtype, out=out)


def prod(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    """The product over ``axes`` (1 over none), in out's dtype."""
    if not axes:
        xp.copyto(out, x, casting="unsafe")
    else:
        xp.prod(x, axis=axes, dtype=out.dtype, out=out)


def _variance_in_float64(xp: ModuleType, x: Array, axes: Axes, correction: int) -> Array:
    """The variance accumulated in float64 (a float32 mean of values near 1e8 loses the
    digits the variance is made of; squares of values near 1e38 overflow float32)."""
    with quiet(xp), warnings.catch_warnings():  # fewer elements than the correction: nan or inf
        warnings.simplefilter("ignore", RuntimeWarning)
        return xp.var(x, axis=axes, ddof=correction, dtype=xp.float64)


def var(xp: ModuleType, x: Array, axes: Axes, correction: int, out: Array) -> None:
    xp.copyto(out, _variance_in_float64(xp, x, axes, correction), casting="unsafe")


def std(xp: ModuleType, x: Array, axes: Axes, correction: int, out: Array) -> None:
    """The square root of ``var``, taken in float64 before rounding to out's dtype."""
    xp.copyto(out, xp.sqrt(_variance_in_float64(xp, x, axes, correction)), casting="unsafe")


def amax(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    if not axes:
        xp.copyto(out, x)
    else:
        xp.amax(x, axis=axes, out=out)


def amin(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    if not axes:
        xp.copyto(out, x)
    elif xp is np:
        xp.amin(x, axis=axes, out=out)
    else:  # CuPy 14.2's min with out= raises a TypeError on its CUB path (seen on an H200); max does not
        xp.copyto(out, xp.amin(x, axis=axes))


def all(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    if not axes:
        xp.copyto(out, x, casting="unsafe")   # to bool: nonzero (and nan) is True
    else:
        xp.all(x, axis=axes, out=out)


def any(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    if not axes:
        xp.copyto(out, x, casting="unsafe")
    else:
        xp.any(x, axis=axes, out=out)


def logsumexp(xp: ModuleType, x: Array, axes: Axes, out: Array) -> None:
    """log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum (0 where it is not
    finite, so rows of -inf give -inf and not nan)."""
    if x.ndim == 0:
        x = x.reshape(1)
    if x.size == 0:  # log of an empty sum: -inf (where the output has elements at all)
        out.fill(-xp.inf)
        return
    peak = xp.amax(x, axis=axes, keepdims=True)
    xp.copyto(peak, 0, where=~xp.isfinite(peak))
    with quiet(xp):
        total = xp.sum(xp.exp(x - peak), axis=axes, keepdims=True)
        xp.log(total, out=total)
    total += peak
    xp.copyto(out, total.reshape(out.shape), casting="unsafe")


def argmax(xp: ModuleType, x: Array, axis: int, out: Array) -> None:
    xp.argmax(x, axis=axis, out=out)


def argmin(xp: ModuleType, x: Array, axis: int, out: Array) -> None:
    xp.argmin(x, axis=axis, out=out)


def _extreme_with_indices(xp: ModuleType, arg_function: Callable[..., Array], x: Array, axis: int | None,
                          values: Array, indices: Array) -> None:
    if axis is None:  # a 0-d tensor
        xp.copyto(values, x)
        indices.fill(0)
        return
    arg_function(x, axis=axis, out=indices)
    picked = xp.take_along_axis(x, xp.expand_dims(indices, axis), axis=axis)
    xp.copyto(values, picked.reshape(values.shape))


def max_with_indices(xp: ModuleType, x: Array, axis: int | None, values: Array, indices: Array) -> None:
    """Largest value along one axis and the index of its first occurrence."""
    _extreme_with_indices(xp, xp.argmax, x, axis, values, indices)


def min_with_indices(xp: ModuleType, x: Array, axis: int | None, values: Array, indices: Array) -> None:
    _extreme_with_indices(xp, xp.argmin, x, axis, values, indices)


def sort(xp: ModuleType, x: Array, axis: int, descending: bool, values: Array, indices: Array) -> None:
    """Sorted along ``axis`` and where each value came from; stable (equal values keep
    their order), NaN sorted as the largest value, as PyTorch sorts."""
    key = x
    if descending:  # ascending on a decreasing key keeps ties in order, unlike a flip
        if x.dtype.kind == "f":
            key = xp.where(xp.isnan(x), -xp.inf, -x)
        else:
            key = ~x  # -x - 1 for integers (no overflow), not for bools
    order = xp.argsort(key, axis=axis, kind="stable")
    xp.copyto(indices, order, casting="unsafe")
    xp.copyto(values, xp.take_along_axis(x, order, axis=axis))


def cumsum(xp: ModuleType, x: Array, axis: int, out: Array) -> None:
    xp.cumsum(x, axis=axis, dtype=out.dtype, out=out)


def cumprod(xp: ModuleType, x: Array, axis: int, out: Array) -> None:
    xp.cumprod(x, axis=axis, dtype=out.dtype, out=out)


# -- many arrays at once (clip_grad_norm_) -----------------------------------------------------------


def squared_norms(xp: ModuleType, arrays: Sequence[Array], out: Array) -> None:
    """out[i] = sum of the squares of arrays[i] (any shape), for out's dtype: one BLAS
    dot each, no temporary of the array's size; 16-bit floats are summed in float32."""
    with quiet(xp):
        for i, a in enumerate(arrays):
            flat = a.reshape(-1)
            if flat.dtype.itemsize < 4:
                flat = flat.astype(xp.float32)
            out[i] = xp.dot(flat, flat)


def clip_factor(xp: ModuleType, total: Array, max_norm: float, eps: float, factor: Array) -> None:
    """factor = min(max_norm / (total + eps), 1) for a 0-d ``total`` (clip_grad_norm_'s
    scale), in total's dtype and on its device: the ufunc calls of the three ops it
    replaces (add, divide, clamp), so the same bits, without their Python."""
    with quiet(xp):
        xp.add(total, eps, out=factor, casting="unsafe")
        xp.true_divide(max_norm, factor, out=factor, casting="unsafe")
        xp.minimum(factor, 1.0, out=factor, dtype=factor.dtype, casting="unsafe")


def scale_in_place(xp: ModuleType, arrays: Sequence[Array], factor: Array) -> None:
    """arrays[i] *= factor (a 0-d array: the scale stays on the device), each in its dtype."""
    with quiet(xp):
        for a in arrays:
            xp.multiply(a, factor, out=a, casting="unsafe")
