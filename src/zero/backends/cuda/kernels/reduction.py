"""Sums over leading axes (bias gradients, ``x.sum(0)``) in Triton; and the extremes of
integer indices, for the range checks that a GPU defers to the next read.

CuPy's reduction over axis 0 was several times slower than PyTorch's on an H200, and
costly in host time; a GPT step makes dozens of them (the bias gradients of its linear
layers and layer norms). ``column_sums`` is two launches of ``column_sums_kernel`` at
most: bands of rows in parallel, then their sums. Figures in benchmarks/journal/ (the GPU runs).
"""
from __future__ import annotations

import math

import numpy as np

from ...array_kernels import reduction as shared
from ...kernel_contract import Array, Axes
from ..triton_kernels.reduction import column_sums_kernel, index_extremes_kernel
from ._arrays import accumulator_dtype, array_module, flat, is_half
from ._launch import cdiv, launch

__all__ = ["index_extremes_parts", "sum"]

BLOCK_R, BLOCK_C = 32, 128
PROGRAMS = 512   # enough to fill a GPU of ~130 multiprocessors a few times over


def column_sums(x: Array, out: Array, second: Array | None = None) -> None:
    """out (columns,) = x (rows, columns) summed over its rows; with ``second``, x's columns
    are out's then second's, both written by the same launches. Float64, or float32 and
    16-bit floats (x and the outputs each either), x's columns contiguous (its rows may be
    strided), out contiguous: in Triton, float64 summed in float64, the others in float32
    and rounded once to out's dtype; anything else: CuPy's sum."""
    split = out.shape[0]
    if not (x.ndim == 2 and _summable(x.dtype, out.dtype) and x.strides[1] == x.itemsize and x.strides[0] >= 0
            and out.flags.c_contiguous
            and (second is None or (_summable(x.dtype, second.dtype) and second.flags.c_contiguous))):
        sums = array_module(x).sum(x, axis=0)
        out[...] = sums[:split]
        if second is not None:
            second[...] = sums[split:]
        return
    rows, columns = x.shape
    if rows == 0 or columns == 0:
        out.fill(0)
        if second is not None:
            second.fill(0)
        return
    column_blocks = cdiv(columns, BLOCK_C)
    bands = max(1, min(cdiv(PROGRAMS, column_blocks), cdiv(rows, 4 * BLOCK_R)))
    band_rows = cdiv(cdiv(rows, bands), BLOCK_R) * BLOCK_R
    bands = cdiv(rows, band_rows)
    float64 = bool(x.dtype == np.float64)
    if second is None:
        second = out   # (never written: every column is below the split)
    if bands == 1:
        launch(column_sums_kernel, (column_blocks, 1), x, out, second, rows, columns, split,
               x.strides[0] // x.itemsize, band_rows, FLOAT64=float64, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=4)
        return
    parts = array_module(x).empty((bands, columns), accumulator_dtype(x.dtype))   # each band's sums, then theirs
    launch(column_sums_kernel, (column_blocks, bands), x, parts, parts, rows, columns, columns,
           x.strides[0] // x.itemsize, band_rows, FLOAT64=float64, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=4)
    launch(column_sums_kernel, (column_blocks, 1), parts, out, second, bands, columns, split, columns, bands,
           FLOAT64=float64, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=4)


def _summable(source, target) -> bool:
    """Whether column_sums_kernel sums ``source`` into ``target``: both float64, or each float32 or 16-bit."""
    if source == np.float64 or target == np.float64:
        return bool(source == target)
    return all(dtype == np.float32 or is_half(dtype) for dtype in (source, target))


def sum(x: Array, axes: Axes, out: Array) -> None:  # noqa: A001  (the contract's name)
    """Sums over the leading axes of a C-contiguous array as column sums (the CPU's are a
    product with ones); anything else: the shared CuPy kernel."""
    lead = len(axes)
    if (0 < lead < x.ndim and axes == tuple(range(lead)) and x.dtype == out.dtype and x.flags.c_contiguous
            and out.flags.c_contiguous):
        column_sums(x.reshape(math.prod(x.shape[:lead]), -1), out.reshape(-1))
        return
    shared.sum(array_module(x), x, axes, out)


INDEX_CHUNK, INDEX_BLOCK = 16384, 1024   # indices per program of the range check, and per step of its loop


def index_extremes_parts(index: Array, ignore: int | None, replacement: int) -> Array:
    """The (smallest, largest) of each chunk of an integer array's entries (at least one),
    with entries equal to ``ignore`` counted as ``replacement``: a new (chunks, 2) int64
    array on the device, one launch and no wait -- the host takes its extremes when the
    deferred check reads it. (On the CPU, ``index_extremes`` answers at once; on the GPU
    a masked fill and two reductions had been four launches.)"""
    values = flat(index)
    programs = cdiv(values.size, INDEX_CHUNK)
    parts = array_module(values).empty((programs, 2), np.int64)
    launch(index_extremes_kernel, (programs,), values, values.size, 0 if ignore is None else int(ignore),
           int(replacement), parts, HAS_IGNORE=ignore is not None, CHUNK=INDEX_CHUNK, BLOCK=INDEX_BLOCK,
           num_warps=4)
    return parts
