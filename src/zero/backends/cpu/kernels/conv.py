"""Convolution kernels: im2col, one BLAS GEMM per group over the whole batch, col2im.

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
and ``grad`` is transposed into (O, P) once per backward. im2col and col2im are serial Numba
loops, each one pass over the columns (col2im a scatter-add, race-free per channel); the
columns are recomputed in backward rather than kept from the forward (C kH kW times the
input's size), and are scratch from the caching allocator.
"""
from __future__ import annotations

import numpy as np

from ._fused_support import scratch, shaped
from ._jit import njit, prange

__all__ = ["conv2d_backward", "conv2d_forward"]


def conv2d_forward(x, weight, bias, stride, padding, dilation, groups: int, out) -> None:
    batch, out_channels, out_h, out_w = out.shape
    positions = batch * out_h * out_w
    cols = _columns(x, weight.shape[2:], stride, padding, dilation, out_h, out_w)        # (C kH kW, P)
    product = shaped(scratch(out_channels * positions, out.dtype), out_channels, positions)  # (O, P)
    _group_products(_grouped(np.ascontiguousarray(weight).reshape(out_channels, -1), groups),
                    _grouped(cols, groups), _grouped(product, groups))
    by_image = product.reshape(out_channels, batch, out_h * out_w).transpose(1, 0, 2)       # (N, O, Ho Wo)
    target = out.reshape(batch, out_channels, out_h * out_w)
    if bias is None:
        np.copyto(target, by_image)
    else:
        np.add(by_image, bias.reshape(1, out_channels, 1), out=target)


def conv2d_backward(grad, x, weight, stride, padding, dilation, groups: int, grad_x, grad_weight,
                    grad_bias) -> None:
    batch, out_channels, out_h, out_w = grad.shape
    positions = batch * out_h * out_w
    grad_t = shaped(scratch(out_channels * positions, grad.dtype), out_channels, batch, out_h * out_w)
    np.copyto(grad_t, grad.reshape(batch, out_channels, out_h * out_w).transpose(1, 0, 2))
    grad_t = grad_t.reshape(out_channels, positions)                                       # (O, P)
    if grad_bias is not None:
        np.sum(grad_t, axis=1, out=grad_bias)
    if grad_weight is not None:
        cols = _columns(x, grad_weight.shape[2:], stride, padding, dilation, out_h, out_w)  # (C kH kW, P)
        _group_products(_grouped(grad_t, groups), _grouped(cols, groups).transpose(0, 2, 1),
                        _grouped(grad_weight.reshape(out_channels, -1), groups))
    if grad_x is not None:
        kernel_h, kernel_w = weight.shape[2:]
        channels = grad_x.shape[1]
        grad_cols = shaped(scratch(channels * kernel_h * kernel_w * positions, grad.dtype),
                           channels * kernel_h * kernel_w, positions)                       # (C kH kW, P)
        weight_t = np.ascontiguousarray(weight).reshape(out_channels, -1)
        _group_products(_grouped(weight_t, groups).transpose(0, 2, 1), _grouped(grad_t, groups),
                        _grouped(grad_cols, groups))
        _col2im(grad_cols.reshape(channels, kernel_h, kernel_w, batch, out_h, out_w), int_pair(stride),
                int_pair(padding), int_pair(dilation), grad_x)


def int_pair(values) -> tuple:
    """Two Python ints: the one tuple type the loops compile for (stride, padding, ...)."""
    return int(values[0]), int(values[1])


def _grouped(matrix, groups: int):
    """A (rows, columns) matrix as ``groups`` blocks of rows: (groups, rows/groups, columns), a view."""
    rows, columns = matrix.shape
    return matrix.reshape(groups, rows // groups, columns)


def _group_products(a, b, out) -> None:
    """out[g] = a[g] @ b[g] for each group: one BLAS GEMM each (transposed views as flags)."""
    for g in range(out.shape[0]):
        np.matmul(a[g], b[g], out=out[g])


def _columns(x, kernel, stride, padding, dilation, out_h: int, out_w: int):
    """im2col: cols (C kH kW, N Ho Wo) of x, in scratch (see the module docstring)."""
    batch, channels = x.shape[:2]
    kernel_h, kernel_w = kernel
    cols = shaped(scratch(channels * kernel_h * kernel_w * batch * out_h * out_w, x.dtype),
                  channels, kernel_h, kernel_w, batch, out_h, out_w)
    _im2col(x, int_pair(stride), int_pair(padding), int_pair(dilation), cols)
    return cols.reshape(channels * kernel_h * kernel_w, batch * out_h * out_w)


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
