"""index_select without NumPy's buffered output, index_add_along (its backward) with a
Numba loop for the embedding case, and the extremes of an index array in one pass. The
other indexing kernels -- advanced indexing, gather/scatter, triangles -- are NumPy calls
(``zero.backends.array_kernels``)."""
from __future__ import annotations

import numpy as np

from ...kernel_contract import Array
from ._jit import njit

__all__ = ["index_add_along", "index_extremes", "index_extremes_parts", "index_select"]


def index_select(x: Array, axis: int, index: Array, out: Array) -> None:
    """out = x taken along ``axis`` at ``index``, every index in [-size, size) (the op has
    checked). np.take's default mode="raise" writes to a buffer and copies it to ``out``;
    mode="wrap" writes ``out`` directly, and for indices in that range it takes the same
    elements, in about a third of the time at GPT's embedding lookups."""
    if out.flags.c_contiguous:
        np.take(x, index, axis=axis, out=out, mode="wrap")
    else:
        np.copyto(out, np.take(x, index, axis=axis, mode="wrap"))


def index_add_along(out: Array, axis: int, index: Array, values: Array) -> None:
    """out[.., index[k], ..] += values[.., k, ..] along ``axis`` (index_select's backward)."""
    if values.size == 0:  # nothing to add (and reshape(-1, 0) cannot infer the rows)
        return
    if axis == 0 and out.ndim == 2 and out.flags.c_contiguous and values.flags.c_contiguous:
        _embedding_backward_loop(index.reshape(-1), values.reshape(index.size, out.shape[1]), out)
        return
    flat = values.reshape(out.shape[:axis] + (index.size,) + out.shape[axis + 1:])
    np.add.at(np.moveaxis(out, axis, 0), index.reshape(-1), np.moveaxis(flat, axis, 0))


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


def index_extremes(index: Array) -> tuple[int, int]:
    """(smallest, largest) entry of an integer array with at least one entry, as Python ints:
    what every range check of indices asks (embedding lookups, gathers, class targets). One
    pass (NumPy's min and max are two, and each pays its call)."""
    smallest, largest = _extremes(np.ascontiguousarray(index).reshape(-1))
    return int(smallest), int(largest)


def index_extremes_parts(index: Array, ignore: int | None, replacement: int) -> Array:
    """``index_extremes`` with entries equal to ``ignore`` counted as ``replacement``, in the
    GPU's form (a (chunks, 2) int64 array; here one chunk, computed at once): the CPU's
    check takes it when an ignored entry may be an extreme, and a device played by the
    CPU in tests for every check."""
    values = np.ascontiguousarray(index).reshape(-1)
    if ignore is not None:
        values = np.where(values == ignore, replacement, values)
    return np.array([index_extremes(values)], np.int64)


@njit
def _extremes(values):
    smallest = largest = values[0]
    for i in range(values.size):
        v = values[i]
        smallest = v if v < smallest else smallest
        largest = v if v > largest else largest
    return smallest, largest
