"""Reduction kernels. Each takes the axes to reduce and writes ``out``, shaped as the
input without those axes."""
from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["sum", "var", "amax", "amin", "all", "any", "logsumexp", "argmax", "argmin", "max_with_indices",
           "min_with_indices", "scatter_along"]

# -- reductions -------------------------------------------------------------------------------


def sum(x, axes: tuple, out) -> None:  # noqa: A001
    np.sum(x, axis=axes, out=out)


def var(x, axes: tuple, correction: int, out) -> None:
    if math.prod(x.shape[a] for a in axes) > correction:
        np.var(x, axis=axes, ddof=correction, out=out)
        return
    # Fewer elements than the correction: nan or inf, as in PyTorch, and no NumPy warning.
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.var(x, axis=axes, ddof=correction, out=out)


def amax(x, axes: tuple, out) -> None:
    np.amax(x, axis=axes, out=out)


def amin(x, axes: tuple, out) -> None:
    np.amin(x, axis=axes, out=out)


def all(x, axes: tuple, out) -> None:  # noqa: A001
    np.all(x, axis=axes, out=out)


def any(x, axes: tuple, out) -> None:  # noqa: A001
    np.any(x, axis=axes, out=out)


def logsumexp(x, axes: tuple, out) -> None:
    if x.ndim == 0:  # NumPy reduces a 0-d array to a scalar, which peak[...] = 0 cannot write
        x = x.reshape(1)
    peak = np.amax(x, axis=axes, keepdims=True)
    peak[~np.isfinite(peak)] = 0  # rows of -inf give -inf, not nan
    with np.errstate(all="ignore"):
        total = np.sum(np.exp(x - peak), axis=axes, keepdims=True)
        np.log(total, out=total)
    total += peak
    np.copyto(out, total.reshape(out.shape), casting="unsafe")


def argmax(x, axis: int, out) -> None:
    np.argmax(x, axis=axis, out=out)


def argmin(x, axis: int, out) -> None:
    np.argmin(x, axis=axis, out=out)


def max_with_indices(x, axis: int | None, values, indices) -> None:
    """Largest value along one axis and the index of its first occurrence."""
    _extreme_with_indices(np.argmax, x, axis, values, indices)


def min_with_indices(x, axis: int | None, values, indices) -> None:
    _extreme_with_indices(np.argmin, x, axis, values, indices)


def _extreme_with_indices(arg_function, x, axis, values, indices) -> None:
    if axis is None:  # a 0-d tensor
        np.copyto(values, x)
        indices.fill(0)
        return
    arg_function(x, axis=axis, out=indices)
    picked = np.take_along_axis(x, np.expand_dims(indices, axis), axis=axis)
    np.copyto(values, picked.reshape(values.shape))


def scatter_along(out, axis: int, indices, values) -> None:
    """out[..., indices[...], ...] = values along ``axis`` (indices and values keep that axis)."""
    np.put_along_axis(out, indices, values, axis=axis)
