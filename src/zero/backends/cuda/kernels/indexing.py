"""index_add_along (index_select's backward, the embedding gradient) on the GPU. The other
indexing kernels -- advanced indexing with CuPy's wrapped indices checked, gather/scatter,
index_select, triangles -- are CuPy calls (``zero.backends.array_kernels``). Accumulating
scatters use atomic adds, so repeated indices add up.
"""
from __future__ import annotations

from ...kernel_contract import Array
from ..runtime import cupy

cp = cupy()

__all__ = ["index_add_along"]


def index_add_along(out: Array, axis: int, index: Array, values: Array) -> None:
    """out[.., index[k], ..] += values[.., k, ..] along ``axis`` (index_select's backward):
    an atomic scatter-add, so repeated indices add up."""
    flat = values.reshape(out.shape[:axis] + (index.size,) + out.shape[axis + 1:])
    cp.add.at(cp.moveaxis(out, axis, 0), index.reshape(-1), cp.moveaxis(flat, axis, 0))
