"""Pooling kernels: the largest or the average value of each window of 2-D planes.

The contract (every device's kernels module offers these names and signatures). The
kernels are 2-D; 1-D pooling reaches them as the op's (N, C, 1, L) view. x may have any
strides; outputs are C-contiguous and written, never returned. ``kernel_size``, ``stride``,
``padding`` and ``dilation`` are (rows, columns) pairs of ints. Window (y, x) of a plane
covers its rows y sH - pH + i dH (i < kH) and columns x sW - pW + j dW (j < kW); there are
as many windows as the output has, and each holds at least one input element (the op's
output-size rule sees to that).

    max_pool2d_forward(x, kernel_size, stride, padding, dilation, out, indices)
        x (N, C, H, W); out (N, C, Ho, Wo) the largest element of each window inside the
        input (padding is never chosen), NaN when one is NaN; indices (N, C, Ho, Wo) int64
        its position h W + w in its plane: the first of equal values, the last NaN (PyTorch's).
    max_pool2d_backward(grad, indices, kernel_size, stride, padding, dilation, grad_x)
        grad (N, C, Ho, Wo); grad_x (N, C, H, W): 0 where no window chose the element, else
        the sum of grad over the windows that chose it.

    avg_pool2d_forward(x, kernel_size, stride, padding, count_include_pad, divisor_override, out)
        (no dilation). Each window is first clipped to the padded plane, rows [-pH, H + pH)
        (so pH on either side); out = the sum of its elements inside the input, divided by
        ``divisor_override`` when it is not None, else by the clipped window's size when
        ``count_include_pad``, else by the number of its elements inside the input.
    avg_pool2d_backward(grad, kernel_size, stride, padding, count_include_pad, divisor_override, grad_x)
        grad_x (N, C, H, W): each element receives grad / divisor from every window holding it.

Serial Numba loops over (plane, window); backward scatters into grad_x window by window,
which cannot race as the planes are independent. Sums are accumulated in float64.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...kernel_contract import Array
from ._jit import njit, prange
from .conv import int_pair as _pair

__all__ = ["avg_pool2d_backward", "avg_pool2d_forward", "max_pool2d_backward", "max_pool2d_forward"]


def max_pool2d_forward(x: Array, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                       dilation: Sequence[int], out: Array, indices: Array) -> None:
    _max_pool(x, _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation), out, indices)


def max_pool2d_backward(grad: Array, indices: Array, kernel_size: Sequence[int], stride: Sequence[int],
                        padding: Sequence[int], dilation: Sequence[int], grad_x: Array) -> None:
    grad_x.fill(0)
    _max_pool_backward(grad, indices, grad_x)


def avg_pool2d_forward(x: Array, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                       count_include_pad: bool, divisor_override: int | None, out: Array) -> None:
    _avg_pool(x, _pair(kernel_size), _pair(stride), _pair(padding), bool(count_include_pad),
              int(divisor_override or 0), out)


def avg_pool2d_backward(grad: Array, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                        count_include_pad: bool, divisor_override: int | None, grad_x: Array) -> None:
    grad_x.fill(0)
    _avg_pool_backward(grad, _pair(kernel_size), _pair(stride), _pair(padding), bool(count_include_pad),
                       int(divisor_override or 0), grad_x)


@njit
def _max_pool(x, kernel, stride, padding, dilation, out, indices):
    (kernel_h, kernel_w), (stride_h, stride_w) = kernel, stride
    (pad_h, pad_w), (dilation_h, dilation_w) = padding, dilation
    batch, channels, height, width = x.shape
    out_h, out_w = out.shape[2], out.shape[3]
    for plane in prange(batch * channels):
        n, c = plane // channels, plane % channels
        for y in range(out_h):
            for x_out in range(out_w):
                best = -np.inf
                where = -1
                for i in range(kernel_h):
                    h = y * stride_h - pad_h + i * dilation_h
                    if h < 0 or h >= height:
                        continue
                    for j in range(kernel_w):
                        w = x_out * stride_w - pad_w + j * dilation_w
                        if w < 0 or w >= width:
                            continue
                        value = x[n, c, h, w]
                        if where < 0 or value > best or math.isnan(value):
                            best = value
                            where = h * width + w
                out[n, c, y, x_out] = best
                indices[n, c, y, x_out] = where


@njit
def _max_pool_backward(grad, indices, grad_x):
    batch, channels, out_h, out_w = grad.shape
    width = grad_x.shape[3]
    for plane in prange(batch * channels):
        n, c = plane // channels, plane % channels
        for y in range(out_h):
            for x_out in range(out_w):
                where = indices[n, c, y, x_out]
                grad_x[n, c, where // width, where % width] += grad[n, c, y, x_out]


@njit
def _clipped(position, stride, pad, kernel, size):
    """A window along one axis: (first, last) inside the input, and its length in the padded axis."""
    start = position * stride - pad
    end = min(start + kernel, size + pad)
    return max(start, 0), min(end, size), end - start


@njit
def _divisor(y, x_out, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, height, width, count_include_pad,
             divisor_override):
    if divisor_override:
        return divisor_override
    first_h, last_h, span_h = _clipped(y, stride_h, pad_h, kernel_h, height)
    first_w, last_w, span_w = _clipped(x_out, stride_w, pad_w, kernel_w, width)
    if count_include_pad:
        return span_h * span_w
    return (last_h - first_h) * (last_w - first_w)


@njit
def _avg_pool(x, kernel, stride, padding, count_include_pad, divisor_override, out):
    _avg_pool_pass(x, kernel, stride, padding, count_include_pad, divisor_override, out, True)


@njit
def _avg_pool_backward(grad, kernel, stride, padding, count_include_pad, divisor_override, grad_x):
    _avg_pool_pass(grad_x, kernel, stride, padding, count_include_pad, divisor_override, grad, False)


@njit
def _avg_pool_pass(image, kernel, stride, padding, count_include_pad, divisor_override, pooled, forward):
    """Window by window: with ``forward``, pooled = the window's sum / divisor; without,
    image += pooled / divisor over the window (the backward, pooled being the gradient)."""
    (kernel_h, kernel_w), (stride_h, stride_w), (pad_h, pad_w) = kernel, stride, padding
    batch, channels, height, width = image.shape
    out_h, out_w = pooled.shape[2], pooled.shape[3]
    for plane in prange(batch * channels):
        n, c = plane // channels, plane % channels
        for y in range(out_h):
            first_h, last_h, _ = _clipped(y, stride_h, pad_h, kernel_h, height)
            for x_out in range(out_w):
                first_w, last_w, _ = _clipped(x_out, stride_w, pad_w, kernel_w, width)
                divisor = _divisor(y, x_out, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, height, width,
                                   count_include_pad, divisor_override)
                if forward:
                    total = 0.0
                    for h in range(first_h, last_h):
                        for w in range(first_w, last_w):
                            total += image[n, c, h, w]
                    pooled[n, c, y, x_out] = total / divisor
                else:
                    share = pooled[n, c, y, x_out] / divisor
                    for h in range(first_h, last_h):
                        for w in range(first_w, last_w):
                            image[n, c, h, w] += share
