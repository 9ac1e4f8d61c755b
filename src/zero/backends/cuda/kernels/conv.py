"""Convolution on the GPU: Triton im2col and col2im, cuBLAS GEMMs.

The contract's kernels (``zero.backends.kernel_contract``), by the CPU's method
(``zero.backends.cpu.kernels.conv``, whose docstring has the shapes and the columns'
layout): cols (C kH kW, n Ho Wo) is made by a Triton gather, the products of every group
are one strided-batched cuBLAS call (``linalg.matmul`` over (groups, ., .) views,
transposes as flags; grad_weight accumulates pass after pass with beta = 1,
``matmul_accumulate``), the (O, n Ho Wo) product goes into out (N, O, Ho, Wo) as the bias
is added (one CuPy elementwise pass), and col2im is a Triton gather too (each input
element sums the column elements read from it: no atomics).

Images are taken as many at a time as make ``COLUMN_BYTES`` of columns (at least one):
the whole batch of a small network, while a large layer (say 256 x 256 x 56 x 56 with a
3 x 3 kernel, 7.4 GB of float32 columns) does not need its columns at once. They are
scratch from the caching allocator for the call.

Under ``TRITON_INTERPRET=1`` the same functions run on NumPy arrays (NumPy doing the
GEMMs), which is how CI checks them against the CPU kernels.
"""
from __future__ import annotations

from collections.abc import Sequence

from ...kernel_contract import Array, given
from ..triton_kernels.convolution import col2im_kernel, im2col_kernel
from ._arrays import array_module, output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch
from .linalg import matmul, matmul_accumulate

__all__ = ["col2im", "conv2d_backward", "conv2d_forward", "im2col"]

COLUMN_BYTES = 256 << 20   # the columns of one pass: about this many bytes (whole images, at least one)


def conv2d_forward(x: Array, weight: Array, bias: Array | None, stride: Sequence[int], padding: Sequence[int],
                   dilation: Sequence[int], groups: int, out: Array) -> None:
    xp = array_module(x)
    batch, out_channels, out_h, out_w = output(out).shape
    plane = out_h * out_w
    rows = x.shape[1] * weight.shape[2] * weight.shape[3]                  # C kH kW
    weights = _grouped(weight.reshape(out_channels, -1), groups)
    step = _images_per_pass(rows * plane * x.itemsize, batch)
    for first in range(0, batch, step):
        images = slice(first, min(batch, first + step))
        count = images.stop - first
        cols = _columns(x[images], weight.shape[2:], stride, padding, dilation, out_h, out_w)   # (C kH kW, n Ho Wo)
        product = xp.empty((out_channels, count * plane), out.dtype)                           # (O, n Ho Wo)
        matmul(weights, _grouped(cols, groups), _grouped(product, groups))
        by_image = product.reshape(out_channels, count, plane).transpose(1, 0, 2)             # (n, O, Ho Wo)
        target = out[images].reshape(count, out_channels, plane)
        if bias is None:
            xp.copyto(target, by_image)
        else:
            xp.add(by_image, bias.reshape(1, out_channels, 1), out=target)


def conv2d_backward(grad: Array, x: Array | None, weight: Array | None, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], groups: int, grad_x: Array | None,
                    grad_weight: Array | None, grad_bias: Array | None) -> None:
    xp = array_module(grad)
    batch, out_channels, out_h, out_w = grad.shape
    plane = out_h * out_w
    kernel = given(weight, grad_weight).shape[2:]
    channels = given(None if grad_x is None else output(grad_x), x).shape[1]
    rows = channels * kernel[0] * kernel[1]                                 # C kH kW
    if grad_bias is not None:
        xp.sum(grad.reshape(batch, out_channels, plane), axis=(0, 2), out=grad_bias)
    weight_grads = None if grad_weight is None else _grouped(grad_weight.reshape(out_channels, -1), groups)
    if weight_grads is not None:
        weight_grads.fill(0)
    weights_t = (None if grad_x is None
                 else _grouped(given(weight).reshape(out_channels, -1), groups).transpose(0, 2, 1))
    step = _images_per_pass(rows * plane * grad.itemsize, batch)
    for first in range(0, batch if weight_grads is not None or weights_t is not None else 0, step):
        images = slice(first, min(batch, first + step))
        count = images.stop - first
        grad_t = xp.ascontiguousarray(grad[images].reshape(count, out_channels, plane).transpose(1, 0, 2))
        grad_t = _grouped(grad_t.reshape(out_channels, count * plane), groups)        # (g, O/g, n Ho Wo)
        if weight_grads is not None:
            cols = _columns(given(x)[images], kernel, stride, padding, dilation, out_h, out_w)
            matmul_accumulate(grad_t, _grouped(cols, groups).transpose(0, 2, 1), weight_grads)
        if weights_t is not None:
            grad_cols = xp.empty((rows, count * plane), grad.dtype)                   # (C kH kW, n Ho Wo)
            matmul(weights_t, grad_t, _grouped(grad_cols, groups))
            target = given(grad_x)[images]
            _, _, height, width = target.shape
            launch(col2im_kernel, elementwise_grid(target.size), grad_cols, target, target.size, count, channels,
                   height, width, out_h, out_w, *stride, *padding, *dilation, *kernel, BLOCK=ELEMENTWISE_BLOCK,
                   num_warps=4)


def _images_per_pass(bytes_per_image: int, batch: int) -> int:
    return max(1, min(batch, COLUMN_BYTES // max(1, bytes_per_image)))


def _grouped(matrix: Array, groups: int) -> Array:
    """A (rows, columns) matrix as ``groups`` blocks of rows: (groups, rows/groups, columns)."""
    rows, columns = matrix.shape
    return matrix.reshape(groups, rows // groups, columns)


def _columns(x: Array, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
             dilation: Sequence[int], out_h: int, out_w: int) -> Array:
    """im2col: cols (C kH kW, N Ho Wo) of x (any strides), scratch for the call."""
    batch, channels, height, width = x.shape
    kernel_h, kernel_w = kernel
    rows, positions = channels * kernel_h * kernel_w, batch * out_h * out_w
    cols = array_module(x).empty((rows, positions), x.dtype)
    strides = [s // x.itemsize for s in x.strides]
    launch(im2col_kernel, elementwise_grid(cols.size), x, cols, cols.size, batch, height, width, out_h, out_w,
           kernel_h, kernel_w, *strides, *stride, *padding, *dilation, BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
    return cols


# -- unfold / fold (PyTorch's F.unfold, F.fold), on the same Triton kernels ---------------------------


def im2col(x: Array, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], cols: Array) -> None:
    """cols (N, C, kH, kW, Ho, Wo) = the elements of x (N, C, H, W) each window reads (0 outside)."""
    batch, channels, kernel_h, kernel_w, out_h, out_w = output(cols).shape
    columns = _columns(x, (kernel_h, kernel_w), stride, padding, dilation, out_h, out_w)   # (C kH kW, N Ho Wo)
    array_module(x).copyto(cols, columns.reshape(channels, kernel_h, kernel_w, batch, out_h, out_w)
                           .transpose(3, 0, 1, 2, 4, 5))


def col2im(cols: Array, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], out: Array) -> None:
    """out (N, C, H, W) = the sum of the elements of cols (N, C, kH, kW, Ho, Wo) read from each place."""
    batch, channels, kernel_h, kernel_w, out_h, out_w = cols.shape
    height, width = output(out).shape[2:]
    columns = array_module(cols).ascontiguousarray(cols.transpose(1, 2, 3, 0, 4, 5))   # (C, kH, kW, N, Ho, Wo)
    launch(col2im_kernel, elementwise_grid(out.size), columns, out, out.size, batch, channels, height, width,
           out_h, out_w, *stride, *padding, *dilation, kernel_h, kernel_w, BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
