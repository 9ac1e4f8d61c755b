"""Pooling on the GPU: max and average pooling in Triton, forward and backward.

The contract's kernels (``zero.backends.kernel_contract``; ``zero.backends.cpu.kernels.pooling``
defines the windows, the indices and the divisors in detail). Forward reads x through its strides,
one output element per lane; backward is a gather over grad_x, each element visiting the
windows that hold it (``triton_kernels.pooling``). Under ``TRITON_INTERPRET=1`` the same
functions run on NumPy arrays, as the CI tests do.
"""
from __future__ import annotations

from collections.abc import Sequence

from ...kernel_contract import Array
from ..triton_kernels.pooling import (
    avg_pool_backward_kernel,
    avg_pool_forward_kernel,
    max_pool_backward_kernel,
    max_pool_forward_kernel,
)
from ._arrays import contiguous, output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch

__all__ = ["avg_pool2d_backward", "avg_pool2d_forward", "max_pool2d_backward", "max_pool2d_forward"]


def _strides(x: Array) -> list[int]:
    return [s // x.itemsize for s in x.strides]


def max_pool2d_forward(x: Array, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                       dilation: Sequence[int], out: Array, indices: Array) -> None:
    _, channels, height, width = x.shape
    out_h, out_w = output(out).shape[2:]
    launch(max_pool_forward_kernel, elementwise_grid(out.size), x, out, output(indices), out.size, channels, height,
           width, out_h, out_w, *_strides(x), *stride, *padding, *dilation, *kernel_size,
           BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def max_pool2d_backward(grad: Array, indices: Array, kernel_size: Sequence[int], stride: Sequence[int],
                        padding: Sequence[int], dilation: Sequence[int], grad_x: Array) -> None:
    height, width = output(grad_x).shape[2:]
    out_h, out_w = grad.shape[2:]
    launch(max_pool_backward_kernel, elementwise_grid(grad_x.size), contiguous(grad), contiguous(indices), grad_x,
           grad_x.size, height, width, out_h, out_w, *stride, *padding, *dilation, *kernel_size,
           BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def avg_pool2d_forward(x: Array, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                       count_include_pad: bool, divisor_override: int | None, out: Array) -> None:
    _, channels, height, width = x.shape
    out_h, out_w = output(out).shape[2:]
    launch(avg_pool_forward_kernel, elementwise_grid(out.size), x, out, out.size, channels, height, width, out_h,
           out_w, *_strides(x), *stride, *padding, int(divisor_override or 0), *kernel_size,
           COUNT_INCLUDE_PAD=bool(count_include_pad), BLOCK=ELEMENTWISE_BLOCK,
           num_warps=4)


def avg_pool2d_backward(grad: Array, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                        count_include_pad: bool, divisor_override: int | None, grad_x: Array) -> None:
    height, width = output(grad_x).shape[2:]
    out_h, out_w = grad.shape[2:]
    launch(avg_pool_backward_kernel, elementwise_grid(grad_x.size), contiguous(grad), grad_x, grad_x.size, height,
           width, out_h, out_w, *stride, *padding, int(divisor_override or 0), *kernel_size,
           COUNT_INCLUDE_PAD=bool(count_include_pad), BLOCK=ELEMENTWISE_BLOCK,
           num_warps=4)
