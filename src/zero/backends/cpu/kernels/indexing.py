"""Indexing kernels: advanced indexing, gather/scatter, index_select, triangles."""
from __future__ import annotations

import numpy as np

from ._jit import njit

__all__ = ["index_get", "index_put", "index_add", "gather", "scatter_add", "index_select", "index_add_along",
           "triangle"]

# -- indexing with integer or boolean arrays (NumPy's advanced indexing) ---------------------


def index_get(x, key):
    """A new array of x[key]."""
    return x[key]


def index_put(x, key, values) -> None:
    x[key] = values


def index_add(out, key, values) -> None:
    """out[key] += values, accumulating where an index repeats."""
    np.add.at(out, key, values)


def gather(x, axis: int, index, out) -> None:
    """out = x picked along ``axis`` by index (index may be smaller than x elsewhere)."""
    window = x[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(index.shape))]
    np.copyto(out, np.take_along_axis(window, index, axis=axis))


def scatter_add(out, axis: int, index, values) -> None:
    """out[.., index[i, j], ..] += values[i, j] along ``axis`` (gather's backward)."""
    position = list(np.indices(index.shape, sparse=True))
    position[axis] = index
    np.add.at(out, tuple(position), values)


def index_select(x, axis: int, index, out) -> None:
    """out = x taken along ``axis`` at ``index`` (any shape: an embedding lookup for axis 0)."""
    np.take(x, index, axis=axis, out=out)


def index_add_along(out, axis: int, index, values) -> None:
    """out[.., index[k], ..] += values[.., k, ..] along ``axis`` (index_select's backward)."""
    if axis == 0 and out.ndim == 2 and out.flags.c_contiguous and values.flags.c_contiguous:
        _embedding_backward_loop(index.reshape(-1), values.reshape(-1, out.shape[1]), out)
        return
    flat = values.reshape(out.shape[:axis] + (index.size,) + out.shape[axis + 1:])
    np.add.at(np.moveaxis(out, axis, 0), index.reshape(-1), np.moveaxis(flat, axis, 0))


def triangle(x, diagonal: int, upper: bool, out) -> None:
    """Keep the upper (triu) or lower (tril) triangle of the last two dims, zero the rest."""
    np.copyto(out, np.triu(x, diagonal) if upper else np.tril(x, diagonal))



@njit
def _embedding_backward_loop(index, grad, out):
    """out[index[k]] += grad[k] for each row k; serial, so repeated indices never race."""
    rows = out.shape[0]
    for k in range(index.size):
        row = index[k]
        if row < 0:
            row += rows
        for j in range(out.shape[1]):
            out[row, j] += grad[k, j]
