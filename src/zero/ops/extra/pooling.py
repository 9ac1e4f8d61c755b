"""Pooling: max and average over windows (1-D and 2-D), and adaptive average pooling.

    x (N, C, *in) or (C, *in)  ->  (N, C, *out),  per spatial dimension
    out = floor((in + 2 padding - dilation (kernel - 1) - 1) / stride) + 1      (ceil with ceil_mode,
          less one when the last window would start in the padding after the input)

    max:      out = the window's largest element; backward sends grad to that element
              (``indices``, its position in the plane, PyTorch's return_indices)
    average:  out = sum / divisor (the window's size, with or without the padding, or
              divisor_override); backward spreads grad / divisor over the window

The kernels are 2-D (``max_pool2d_*``, ``avg_pool2d_*``); 1-D pooling runs as 2-D over
the (N, C, 1, L) view, as convolution does. Adaptive average pooling (PyTorch's windows:
output i of n averages the inputs from floor(i in / n) to ceil((i + 1) in / n)) is average
pooling when the output size divides the input's, and otherwise two products with
averaging matrices, one per dimension (an average over a rectangle is separable).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import DTypeError, ShapeError, describe
from ...tensors.creation import tensor
from ...tensors.meta import Shape
from ...tensors.tensor import Tensor
from ..arguments import Sizes
from .convolution import as_pair, int_tuple, planes

Ints = tuple[int, ...]  # one per spatial dimension
INTEGER_DTYPES = (dtypes.uint8, dtypes.int32, dtypes.int64)


def pooled_size(op: str, x: Tensor, size: int, kernel: int, stride: int, pad: int, dilation: int,
                ceil_mode: bool) -> int:
    """PyTorch's output length of a pooled dimension (a ShapeError when nothing is left)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1  # the last window would start past the input and its left padding
    if out < 1:
        raise ShapeError(f"{op}: input {describe(x)} is too small for kernel_size {kernel} (dilation {dilation}, "
                         f"padding {pad}): the output would be empty")
    return out


def pool_arguments(op: str, x: Tensor, dims: int, kernel_size: int | Sizes, stride: int | Sizes | None,
                   padding: int | Sizes, dilation: int | Sizes,
                   ceil_mode: bool) -> tuple[Ints, Ints, Ints, Ints, Shape]:
    """Checked (kernel, stride, padding, dilation) tuples and the output's spatial size."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(x).__name__}")
    if x.ndim not in (dims + 1, dims + 2) or 0 in x.shape[-dims - 1:]:
        raise ShapeError(f"{op}: expected a non-empty {dims + 1}-D (C, ...) or {dims + 2}-D (N, C, ...) input, "
                         f"got {describe(x)}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point input, got {describe(x)}")
    kernel = int_tuple(op, "kernel_size", kernel_size, dims, 1)
    stride = kernel if stride is None or stride == [] or stride == () else int_tuple(op, "stride", stride, dims, 1)
    padding = int_tuple(op, "padding", padding, dims, 0)
    dilation = int_tuple(op, "dilation", dilation, dims, 1)
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise ShapeError(f"{op}: padding should be at most half of the effective kernel size, got padding "
                             f"{list(padding)} for kernel_size {list(kernel)} and dilation {list(dilation)}")
    out = tuple(pooled_size(op, x, n, k, s, p, d, ceil_mode)
                for n, k, s, p, d in zip(x.shape[-dims:], kernel, stride, padding, dilation))
    return kernel, stride, padding, dilation, out


def batched(x: Tensor, dims: int) -> Tensor:
    """An unbatched (C, *in) input as (1, C, *in); a batched one unchanged."""
    return x.unsqueeze(0) if x.ndim == dims + 1 else x


class MaxPool(Op):
    """Max pooling over x (N, C, *in): returns (values, indices), both (N, C, *out)."""

    def forward(self, x: Tensor, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                out_size: Shape) -> tuple[Tensor, Tensor]:
        dims = len(kernel)
        shape = x.shape[:2] + out_size
        values = Tensor._empty(shape, x.dtype, x.device)
        indices = Tensor._empty(shape, dtypes.int64, x.device)
        self.arguments = (as_pair(kernel, 1), as_pair(stride, 1), as_pair(padding, 0), as_pair(dilation, 1))
        x.device.kernels.max_pool2d_forward(planes(x._array, dims), *self.arguments, planes(values._array, dims),
                                            planes(indices._array, dims))
        self.save_for_backward(indices)
        self.in_shape = x.shape
        return values, indices

    def backward(self, grad: Tensor) -> Grads:
        (indices,) = self.saved_tensors
        dims = len(self.in_shape) - 2
        grad_x = Tensor._empty(self.in_shape, grad.dtype, grad.device)
        grad.device.kernels.max_pool2d_backward(planes(grad._array, dims), planes(indices._array, dims),
                                                *self.arguments, planes(grad_x._array, dims))
        return grad_x, None, None, None, None, None


class AvgPool(Op):
    """Average pooling over x (N, C, *in) -> (N, C, *out)."""

    def forward(self, x: Tensor, kernel: Ints, stride: Ints, padding: Ints, out_size: Shape,
                count_include_pad: bool, divisor_override: int | None) -> Tensor:
        dims = len(kernel)
        out = Tensor._empty(x.shape[:2] + out_size, x.dtype, x.device)
        self.arguments = (as_pair(kernel, 1), as_pair(stride, 1), as_pair(padding, 0), bool(count_include_pad),
                          divisor_override)
        x.device.kernels.avg_pool2d_forward(planes(x._array, dims), *self.arguments, planes(out._array, dims))
        self.in_shape = x.shape
        return out

    def backward(self, grad: Tensor) -> Grads:
        dims = len(self.in_shape) - 2
        grad_x = Tensor._empty(self.in_shape, grad.dtype, grad.device)
        grad.device.kernels.avg_pool2d_backward(planes(grad._array, dims), *self.arguments,
                                                planes(grad_x._array, dims))
        return grad_x, None, None, None, None, None, None


def max_pool(op: str, dims: int, x: Tensor, kernel_size: int | Sizes, stride: int | Sizes | None = None,
             padding: int | Sizes = 0, dilation: int | Sizes = 1, ceil_mode: bool = False,
             return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """PyTorch's F.max_pool1d (dims 1) and F.max_pool2d (dims 2). An integer input is pooled
    (forward only) through float64 for the windows' choices, and its values taken from it
    at the chosen places, so the result keeps its dtype (int64 beyond 2**53 may choose
    among nearly equal values as float64 sees them)."""
    if isinstance(x, Tensor) and x.dtype in INTEGER_DTYPES:
        _, indices = max_pool(op, dims, x.double(), kernel_size, stride, padding, dilation, ceil_mode, True)
        values = x.flatten(-dims).gather(-1, indices.flatten(-dims)).reshape(indices.shape)
        return (values, indices) if return_indices else values
    kernel, stride, padding, dilation, out_size = pool_arguments(op, x, dims, kernel_size, stride, padding,
                                                                 dilation, ceil_mode)
    values, indices = MaxPool.apply(batched(x, dims), kernel, stride, padding, dilation, out_size)
    if x.ndim == dims + 1:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def avg_pool(op: str, dims: int, x: Tensor, kernel_size: int | Sizes, stride: int | Sizes | None = None,
             padding: int | Sizes = 0, ceil_mode: bool = False, count_include_pad: bool = True,
             divisor_override: int | None = None) -> Tensor:
    """PyTorch's F.avg_pool1d (dims 1) and F.avg_pool2d (dims 2)."""
    kernel, stride, padding, _, out_size = pool_arguments(op, x, dims, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and (not isinstance(divisor_override, int) or divisor_override == 0):
        raise ValueError(f"{op}: divisor_override must be a non-zero int or None, got {divisor_override!r}")
    out = AvgPool.apply(batched(x, dims), kernel, stride, padding, out_size, count_include_pad, divisor_override)
    return out.squeeze(0) if x.ndim == dims + 1 else out


def adaptive_avg_pool(op: str, dims: int, x: Tensor, output_size: int | Sequence[int | None] | None) -> Tensor:
    """PyTorch's F.adaptive_avg_pool1d / 2d: ``output_size`` an int or one per dimension (None
    keeps the input's)."""
    sizes = adaptive_sizes(op, dims, x, output_size)
    in_sizes = x.shape[-dims:]
    if dims < 3 and all(n % s == 0 for n, s in zip(in_sizes, sizes)):  # equal windows: plain average pooling
        kernel = tuple(n // s for n, s in zip(in_sizes, sizes))
        return avg_pool(op, dims, x, kernel, kernel)
    for axis, (n, s) in enumerate(zip(in_sizes, sizes)):  # (.., n, ..) -> (.., s, ..), one dimension at a time
        dim = x.ndim - dims + axis
        averaging = tensor(averaging_matrix(n, s), dtype=x.dtype, device=x.device)   # (n, s)
        x = (x.transpose(dim, -1) @ averaging).transpose(dim, -1)
    return x


def adaptive_sizes(op: str, dims: int, x: Tensor, output_size: int | Sequence[int | None] | None) -> tuple[int, ...]:
    """The checked output sizes of an adaptive pool (None keeps the input's size)."""
    if not isinstance(x, Tensor) or x.ndim not in (dims + 1, dims + 2) or 0 in x.shape[-dims:]:
        raise ShapeError(f"{op}: expected a non-empty {dims + 1}-D or {dims + 2}-D input, got {describe(x)}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point input, got {describe(x)}")
    sizes = (output_size,) * dims if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(sizes) != dims:
        raise ShapeError(f"{op}: output_size must be an int or {dims} ints (None keeps the input's size), got "
                         f"{output_size!r}")
    return int_tuple(op, "output_size", tuple(n if s is None else s for n, s in zip(x.shape[-dims:], sizes)),
                     dims, 1)


def averaging_matrix(size: int, out: int) -> np.ndarray:
    """(size, out): column i averages inputs floor(i size / out) to ceil((i + 1) size / out)."""
    matrix = np.zeros((size, out))
    for i in range(out):
        start, end = (i * size) // out, -(-(i + 1) * size // out)
        matrix[start:end, i] = 1.0 / (end - start)
    return matrix
