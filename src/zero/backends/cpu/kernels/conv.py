"""Convolution kernels: im2col, BLAS GEMMs over many images at once, col2im.

The contract (every device's kernels module offers these names and signatures). The
kernels are 2-D; a 1-D convolution reaches them as the op's (N, C, 1, L) view. Float arrays
share one dtype (float32 or float64); inputs may have any strides, outputs are C-contiguous
and written, never returned; a gradient output passed as ``None`` is not computed.

    conv2d_forward(x, weight, bias, stride, padding, dilation, groups, out)
        x (N, C, H, W); weight (O, C/groups, kH, kW); bias (O,) or None; out (N, O, Ho, Wo).
        stride, padding, dilation: (rows, columns) pairs of ints. ``padding`` counts the zero
        rows (columns) before the input's first; there are as many windows as ``out`` has,
        and a window reaching past the input's end reads zeros there (so "same" padding, one
        zero more after than before, needs nothing more):
            out[n, o, y, x] = bias[o] + sum over c < C/groups, i < kH, j < kW of
                              weight[o, c, i, j] * x[n, g C/groups + c, y sH - pH + i dH, x sW - pW + j dW]
        with g = o // (O/groups), the group of output channel o, and x = 0 outside the input.
    conv2d_backward(grad, x, weight, stride, padding, dilation, groups, grad_x, grad_weight, grad_bias)
        grad (N, O, Ho, Wo); grad_x (N, C, H, W), grad_weight (O, C/groups, kH, kW) and
        grad_bias (O,), each None when not wanted (x may then be None when grad_weight is,
        weight when grad_x is).

How. The columns of x are the array

    cols (C, kH, kW, N, Ho, Wo):  cols[c, i, j, n, y, x] = x[n, c, y sH - pH + i dH, x sW - pW + j dW]

(0 outside), so that with K = C/groups kH kW and P = N Ho Wo, for each group g

    out_g (O/groups, P) = weight_g (O/groups, K) @ cols_g (K, P)              one GEMM
    grad_weight_g       = grad_g (O/groups, P) @ cols_gᵀ                      one GEMM
    grad_cols_g (K, P)  = weight_gᵀ @ grad_g, then col2im adds each column back where it came from.

``out`` is (N, O, Ho, Wo): the (O, P) product is transposed into it as the bias is added,
and ``grad`` is transposed into (O, P). im2col and col2im are serial Numba loops, each one
pass over the columns (col2im a scatter-add, race-free per channel).

The batch is taken a few images at a time: as many as make columns of ``COLUMN_BYTES``
(at least one image). A pass's columns are written by im2col and read by the GEMM while
they are still in the cache, and the scratch stays small; the GEMMs stay large (LeNet's
second layer: 288 x 3456 columns per pass), and each is split over the CPU pool's threads
when large (``parallel.product``). Measured by ``benchmarks/conv.py``; figures in benchmarks/journal/.
The columns are recomputed in backward rather than kept from the forward (C kH kW times
the input's size); they and the other temporaries are scratch from the caching allocator.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...kernel_contract import Array, given
from .. import parallel
from ._fused_support import scratch, shaped
from ._jit import njit, prange

__all__ = ["col2im", "conv2d_backward", "conv2d_forward", "im2col"]

COLUMN_BYTES = 4 << 20   # the columns of one pass: about this many bytes (whole images, at least one)


def conv2d_forward(x: Array, weight: Array, bias: Array | None, stride: Sequence[int], padding: Sequence[int],
                   dilation: Sequence[int], groups: int, out: Array) -> None:
    batch, out_channels, out_h, out_w = out.shape
    plane = out_h * out_w
    rows = x.shape[1] * weight.shape[2] * weight.shape[3]                  # C kH kW
    weights = _grouped(np.ascontiguousarray(weight).reshape(out_channels, -1), groups)
    step = _images_per_pass(rows * plane * x.itemsize, batch)
    cols_buffer = scratch(rows * plane * step, x.dtype)
    product_buffer = scratch(out_channels * plane * step, x.dtype)
    for first in range(0, batch, step):
        images = slice(first, min(batch, first + step))
        count = images.stop - first
        cols = _columns(x[images], weight.shape[2:], stride, padding, dilation, out_h, out_w, cols_buffer)
        product = shaped(product_buffer, out_channels, count * plane)     # (O, n Ho Wo)
        _group_products(weights, _grouped(cols, groups), _grouped(product, groups))
        by_image = product.reshape(out_channels, count, plane).transpose(1, 0, 2)   # (n, O, Ho Wo)
        target = out[images].reshape(count, out_channels, plane)
        if bias is None:
            np.copyto(target, by_image)
        else:
            np.add(by_image, bias.reshape(1, out_channels, 1), out=target)


def conv2d_backward(grad: Array, x: Array | None, weight: Array | None, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], groups: int, grad_x: Array | None,
                    grad_weight: Array | None, grad_bias: Array | None) -> None:
    batch, out_channels, out_h, out_w = grad.shape
    plane = out_h * out_w
    kernel = given(weight, grad_weight).shape[2:]
    channels = given(grad_x, x).shape[1]
    rows = channels * kernel[0] * kernel[1]                                 # C kH kW
    if grad_bias is not None:
        np.sum(grad.reshape(batch, out_channels, plane), axis=(0, 2), out=grad_bias)
    weight_grads = partial = weights_t = None
    if grad_weight is not None:
        weight_grads = _grouped(grad_weight.reshape(out_channels, -1), groups)          # (g, O/g, K)
        partial = shaped(scratch(grad_weight.size, grad.dtype), *weight_grads.shape)   # a later pass's share
        weight_grads.fill(0)
    if grad_x is not None:
        weights_t = _grouped(np.ascontiguousarray(given(weight)).reshape(out_channels, -1), groups).transpose(0, 2, 1)
    step = _images_per_pass(rows * plane * grad.itemsize, batch)
    cols_buffer = scratch(rows * plane * step, grad.dtype)
    grad_buffer = scratch(out_channels * plane * step, grad.dtype)
    for first in range(0, batch if weight_grads is not None or weights_t is not None else 0, step):
        images = slice(first, min(batch, first + step))
        count = images.stop - first
        grad_t = shaped(grad_buffer, out_channels, count, plane)
        np.copyto(grad_t, grad[images].reshape(count, out_channels, plane).transpose(1, 0, 2))
        grad_t = _grouped(grad_t.reshape(out_channels, count * plane), groups)        # (g, O/g, n Ho Wo)
        if weight_grads is not None and partial is not None:
            cols = _columns(given(x)[images], kernel, stride, padding, dilation, out_h, out_w, cols_buffer)
            _group_products(grad_t, _grouped(cols, groups).transpose(0, 2, 1), partial)
            weight_grads += partial
        if weights_t is not None:
            grad_cols = shaped(cols_buffer, rows, count * plane)             # (C kH kW, n Ho Wo)
            _group_products(weights_t, grad_t, _grouped(grad_cols, groups))
            _col2im(grad_cols.reshape(channels, kernel[0], kernel[1], count, out_h, out_w), int_pair(stride),
                    int_pair(padding), int_pair(dilation), given(grad_x)[images])


def _images_per_pass(bytes_per_image: int, batch: int) -> int:
    return max(1, min(batch, COLUMN_BYTES // max(1, bytes_per_image)))


def int_pair(values: Sequence[int]) -> tuple[int, int]:
    """Two Python ints: the one tuple type the loops compile for (stride, padding, ...)."""
    return int(values[0]), int(values[1])


def _grouped(matrix: Array, groups: int) -> Array:
    """A (rows, columns) matrix as ``groups`` blocks of rows: (groups, rows/groups, columns), a view."""
    rows, columns = matrix.shape
    return matrix.reshape(groups, rows // groups, columns)


def _group_products(a: Array, b: Array, out: Array) -> None:
    """out[g] = a[g] @ b[g] for each group: one BLAS GEMM each (transposed views as flags),
    split over the CPU pool's threads when large (``parallel.product``)."""
    for g in range(out.shape[0]):
        parallel.product(a[g], b[g], out[g])


def _columns(x: Array, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
             dilation: Sequence[int], out_h: int, out_w: int, buffer: Array) -> Array:
    """im2col: cols (C kH kW, n Ho Wo) of x (n images), in ``buffer`` (see the module docstring)."""
    batch, channels = x.shape[:2]
    cols = shaped(buffer, channels, kernel[0], kernel[1], batch, out_h, out_w)
    _im2col(x, int_pair(stride), int_pair(padding), int_pair(dilation), cols)
    return cols.reshape(channels * kernel[0] * kernel[1], batch * out_h * out_w)


@njit
def _inside(offset, step, size, count):
    """The outputs k in [0, count) whose input position k * step + offset lies in [0, size):
    the range [first, last)."""
    first = 0 if offset >= 0 else (step - 1 - offset) // step
    last = 0 if offset >= size else min(count, (size - offset + step - 1) // step)
    return first, max(first, last)


@njit
def _im2col(x, stride, padding, dilation, cols):
    _columns_pass(x, stride, padding, dilation, cols, True)


@njit
def _col2im(cols, stride, padding, dilation, grad_x):
    """grad_x = 0, then each column element added to the input element it was read from."""
    for n in range(grad_x.shape[0]):
        grad_x[n] = 0
    _columns_pass(grad_x, stride, padding, dilation, cols, False)


@njit
def _columns_pass(image, stride, padding, dilation, cols, gather):
    """One pass over the columns: with ``gather``, cols = im2col(image) (zeros outside it);
    without, image += each column element where it was read from (col2im, a scatter-add).
    Channel c of image is touched by iteration c only: the channels could run in parallel."""
    (stride_h, stride_w), (pad_h, pad_w), (dilation_h, dilation_w) = stride, padding, dilation
    batch, channels, height, width = image.shape
    kernel_h, kernel_w, out_h, out_w = cols.shape[1], cols.shape[2], cols.shape[4], cols.shape[5]
    for c in prange(channels):
        for i in range(kernel_h):
            for j in range(kernel_w):
                offset = j * dilation_w - pad_w
                first, last = _inside(offset, stride_w, width, out_w)
                for n in range(batch):
                    for y in range(out_h):
                        row = cols[c, i, j, n, y]
                        h = y * stride_h - pad_h + i * dilation_h
                        inside = 0 <= h < height
                        if gather:
                            if not inside:
                                row[:] = 0
                                continue
                            source = image[n, c, h]
                            row[:first] = 0
                            for k in range(first, last):
                                row[k] = source[k * stride_w + offset]
                            row[last:] = 0
                        elif inside:
                            target = image[n, c, h]
                            for k in range(first, last):
                                target[k * stride_w + offset] += row[k]


# -- unfold / fold (PyTorch's F.unfold, F.fold), on the same loops ------------------------------------


def im2col(x: Array, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], cols: Array) -> None:
    """cols (N, C, kH, kW, Ho, Wo) = the elements of x (N, C, H, W) each window reads (0 outside)."""
    _im2col(x, int_pair(stride), int_pair(padding), int_pair(dilation), cols.transpose(1, 2, 3, 0, 4, 5))


def col2im(cols: Array, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], out: Array) -> None:
    """out (N, C, H, W) = the sum of the elements of cols (N, C, kH, kW, Ho, Wo) read from each place."""
    _col2im(cols.transpose(1, 2, 3, 0, 4, 5), int_pair(stride), int_pair(padding), int_pair(dilation), out)
