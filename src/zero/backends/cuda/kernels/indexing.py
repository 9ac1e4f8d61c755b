"""Indexing kernels on the GPU: advanced indexing, gather/scatter, index_select, triangles.

CuPy's advanced indexing wraps out-of-range indices instead of raising, so the
functions behind ``x[index]`` and ``x[index] = v`` check the bounds first, as NumPy
does on the CPU (this reads two numbers back to the host). ``index_select`` (an
embedding lookup) does not: it is on the hot path, and its indices come from data.
Accumulating scatters (``index_add``, ``scatter_add``, embedding backward) use
atomic adds, so repeated indices add up.
"""
from __future__ import annotations

from ..runtime import cupy

cp = cupy()

__all__ = ["index_get", "index_put", "index_add", "gather", "scatter_add", "index_select", "index_add_along",
           "triangle"]


def _check_bounds(x, key) -> None:
    """IndexError for an integer index array that reaches outside ``x`` (NumPy's rule)."""

    def consumed(item) -> int:  # how many of x's axes an index item stands for
        if item is None or item is Ellipsis:
            return 0
        return item.ndim if _is_bool_array(item) else 1

    axis = 0
    for item in key:
        if item is Ellipsis:
            axis += x.ndim - sum(consumed(k) for k in key)
            continue
        if isinstance(item, cp.ndarray) and item.dtype.kind in "iu" and item.size:
            size = x.shape[axis]
            low, high = int(item.min()), int(item.max())
            if low < -size or high >= size:
                raise IndexError(f"index {high if high >= size else low} is out of bounds for axis {axis} "
                                 f"with size {size}")
        axis += consumed(item)


def _is_bool_array(item) -> bool:
    return isinstance(item, cp.ndarray) and item.dtype == bool


def index_get(x, key):
    """A new array of x[key]."""
    _check_bounds(x, key)
    return x[key]


def index_put(x, key, values) -> None:
    _check_bounds(x, key)
    x[key] = values


def index_add(out, key, values) -> None:
    """out[key] += values, accumulating where an index repeats."""
    cp.add.at(out, key, values)


def gather(x, axis: int, index, out) -> None:
    """out = x picked along ``axis`` by index (index may be smaller than x elsewhere)."""
    window = x[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(index.shape))]
    cp.copyto(out, cp.take_along_axis(window, index, axis=axis))


def _open_grid(shape: tuple) -> list:
    """Index arrays that broadcast to ``shape``, one per dimension (NumPy's sparse indices)."""
    return [cp.arange(n).reshape(tuple(n if i == d else 1 for i in range(len(shape))))
            for d, n in enumerate(shape)]


def scatter_add(out, axis: int, index, values) -> None:
    """out[.., index[i, j], ..] += values[i, j] along ``axis`` (gather's backward)."""
    position = _open_grid(index.shape)
    position[axis] = index
    cp.add.at(out, tuple(position), values)


def index_select(x, axis: int, index, out) -> None:
    """out = x taken along ``axis`` at ``index`` (any shape: an embedding lookup for axis 0)."""
    if out.flags.c_contiguous:
        cp.take(x, index, axis=axis, out=out)
    else:
        cp.copyto(out, cp.take(x, index, axis=axis))


def index_add_along(out, axis: int, index, values) -> None:
    """out[.., index[k], ..] += values[.., k, ..] along ``axis`` (index_select's backward)."""
    flat = values.reshape(out.shape[:axis] + (index.size,) + out.shape[axis + 1:])
    cp.add.at(cp.moveaxis(out, axis, 0), index.reshape(-1), cp.moveaxis(flat, axis, 0))


def triangle(x, diagonal: int, upper: bool, out) -> None:
    """Keep the upper (triu) or lower (tril) triangle of the last two dims, zero the rest."""
    cp.copyto(out, cp.triu(x, diagonal) if upper else cp.tril(x, diagonal))
