"""Reduction kernels on the GPU (CuPy's reductions). Each takes the axes to reduce and
writes ``out``, shaped as the input without those axes, as on the CPU."""
from __future__ import annotations

from ..runtime import cupy

cp = cupy()

__all__ = ["sum", "var", "amax", "amin", "all", "any", "logsumexp", "argmax", "argmin", "max_with_indices",
           "min_with_indices", "scatter_along"]


def _into(out, result) -> None:
    cp.copyto(out, result.reshape(out.shape), casting="unsafe")


def sum(x, axes: tuple, out) -> None:  # noqa: A001
    if not axes:
        cp.copyto(out, x, casting="unsafe")
    elif out.dtype == x.dtype:
        cp.sum(x, axis=axes, out=out)  # straight into out, no temporary
    else:
        _into(out, cp.sum(x, axis=axes, dtype=out.dtype))


def var(x, axes: tuple, correction: int, out) -> None:
    # Fewer elements than the correction gives nan or inf, as on the CPU (no warning on a GPU).
    _into(out, cp.var(x, axis=axes, ddof=correction))


def amax(x, axes: tuple, out) -> None:
    _into(out, cp.amax(x, axis=axes) if axes else x)


def amin(x, axes: tuple, out) -> None:
    _into(out, cp.amin(x, axis=axes) if axes else x)


def all(x, axes: tuple, out) -> None:  # noqa: A001
    _into(out, cp.all(x, axis=axes) if axes else x.astype(bool))


def any(x, axes: tuple, out) -> None:  # noqa: A001
    _into(out, cp.any(x, axis=axes) if axes else x.astype(bool))


def logsumexp(x, axes: tuple, out) -> None:
    if x.ndim == 0:
        x = x.reshape(1)
    peak = cp.amax(x, axis=axes, keepdims=True)
    peak = cp.where(cp.isfinite(peak), peak, 0)  # rows of -inf give -inf, not nan
    total = cp.log(cp.sum(cp.exp(x - peak), axis=axes, keepdims=True)) + peak
    _into(out, total)


def argmax(x, axis: int, out) -> None:
    _into(out, cp.argmax(x, axis=axis))


def argmin(x, axis: int, out) -> None:
    _into(out, cp.argmin(x, axis=axis))


def max_with_indices(x, axis: int | None, values, indices) -> None:
    """Largest value along one axis and the index of its first occurrence."""
    _extreme_with_indices(cp.argmax, x, axis, values, indices)


def min_with_indices(x, axis: int | None, values, indices) -> None:
    _extreme_with_indices(cp.argmin, x, axis, values, indices)


def _extreme_with_indices(arg_function, x, axis, values, indices) -> None:
    if axis is None:  # a 0-d tensor
        cp.copyto(values, x)
        indices.fill(0)
        return
    _into(indices, arg_function(x, axis=axis))
    picked = cp.take_along_axis(x, cp.expand_dims(indices, axis), axis=axis)
    _into(values, picked)


def scatter_along(out, axis: int, indices, values) -> None:
    """out[..., indices[...], ...] = values along ``axis`` (indices and values keep that axis)."""
    cp.put_along_axis(out, indices, values, axis=axis)
