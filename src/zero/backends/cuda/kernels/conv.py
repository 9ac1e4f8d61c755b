"""Convolution on the GPU: Triton im2col and col2im, cuBLAS GEMMs.

The contract and the method are the CPU ones (``zero.backends.cpu.kernels.conv``, whose
docstring lists the signatures and the columns' layout): cols (C kH kW, N Ho Wo) is made
by a Triton gather, the products of every group are one strided-batched cuBLAS call
(``linalg.matmul`` over (groups, ., .) views, transposes as flags), the (O, N Ho Wo)
product goes into out (N, O, Ho, Wo) as the bias is added (one CuPy elementwise pass),
and col2im is a Triton gather too (each input element sums the column elements read from
it: no atomics). The columns are scratch from the caching allocator for the call.

Under ``TRITON_INTERPRET=1`` the same functions run on NumPy arrays (NumPy doing the
GEMMs), which is how CI checks them against the CPU kernels.
"""
from __future__ import annotations

from ..triton_kernels.convolution import col2im_kernel, im2col_kernel
from ._arrays import array_module, output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch
from .linalg import matmul

__all__ = ["conv2d_backward", "conv2d_forward"]


def conv2d_forward(x, weight, bias, stride, padding, dilation, groups: int, out) -> None:
    xp = array_module(x)
    batch, out_channels, out_h, out_w = output(out).shape
    positions = batch * out_h * out_w
    if positions == 0:
        return
    cols = _columns(x, weight.shape[2:], stride, padding, dilation, out_h, out_w)        # (C kH kW, P)
    product = xp.empty((out_channels, positions), out.dtype)                             # (O, P)
    matmul(_grouped(weight.reshape(out_channels, -1), groups), _grouped(cols, groups), _grouped(product, groups))
    by_image = product.reshape(out_channels, batch, out_h * out_w).transpose(1, 0, 2)   # (N, O, Ho Wo)
    target = out.reshape(batch, out_channels, out_h * out_w)
    if bias is None:
        xp.copyto(target, by_image)
    else:
        xp.add(by_image, bias.reshape(1, out_channels, 1), out=target)


def conv2d_backward(grad, x, weight, stride, padding, dilation, groups: int, grad_x, grad_weight,
                    grad_bias) -> None:
    xp = array_module(grad)
    batch, out_channels, out_h, out_w = grad.shape
    positions = batch * out_h * out_w
    grad_t = xp.ascontiguousarray(grad.reshape(batch, out_channels, out_h * out_w).transpose(1, 0, 2))
    grad_t = grad_t.reshape(out_channels, positions)                                     # (O, P)
    if grad_bias is not None:
        xp.sum(grad_t, axis=1, out=grad_bias)
    if grad_weight is not None:
        cols = _columns(x, grad_weight.shape[2:], stride, padding, dilation, out_h, out_w)  # (C kH kW, P)
        matmul(_grouped(grad_t, groups), _grouped(cols, groups).transpose(0, 2, 1),
               _grouped(grad_weight.reshape(out_channels, -1), groups))
    if grad_x is not None:
        kernel_h, kernel_w = weight.shape[2:]
        channels = output(grad_x).shape[1]
        grad_cols = xp.empty((channels * kernel_h * kernel_w, positions), grad.dtype)   # (C kH kW, P)
        matmul(_grouped(weight.reshape(out_channels, -1), groups).transpose(0, 2, 1), _grouped(grad_t, groups),
               _grouped(grad_cols, groups))
        _, _, height, width = grad_x.shape
        launch(col2im_kernel, elementwise_grid(grad_x.size), grad_cols, grad_x, grad_x.size, batch, channels, height,
               width, out_h, out_w, *stride, *padding, *dilation, kernel_h, kernel_w,
               BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def _grouped(matrix, groups: int):
    """A (rows, columns) matrix as ``groups`` blocks of rows: (groups, rows/groups, columns)."""
    rows, columns = matrix.shape
    return matrix.reshape(groups, rows // groups, columns)


def _columns(x, kernel, stride, padding, dilation, out_h: int, out_w: int):
    """im2col: cols (C kH kW, N Ho Wo) of x (any strides), scratch for the call."""
    batch, channels, height, width = x.shape
    kernel_h, kernel_w = kernel
    rows, positions = channels * kernel_h * kernel_w, batch * out_h * out_w
    cols = array_module(x).empty((rows, positions), x.dtype)
    strides = [s // x.itemsize for s in x.strides]
    launch(im2col_kernel, elementwise_grid(cols.size), x, cols, cols.size, batch, height, width, out_h, out_w,
           kernel_h, kernel_w, *strides, *stride, *padding, *dilation, BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
    return cols
