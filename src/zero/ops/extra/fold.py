"""Unfold (im2col) and fold (col2im): PyTorch's F.unfold and F.fold over 2-D planes.

    unfold:  x (N, C, H, W)  ->  cols (N, C kH kW, L),  L = Ho Wo windows
             cols[n, (c, i, j), (y, x)] = x[n, c, y sH - pH + i dH, x sW - pW + j dW]   (0 outside)
    fold:    cols (N, C kH kW, L)  ->  out (N, C, H, W), each element the sum of the column
             elements read from it (fold is unfold's adjoint, not its inverse)
    Ho = floor((H + 2 pH - dH (kH - 1) - 1) / sH) + 1, likewise Wo.

Each is the other's backward. The kernels are the convolution's (``im2col``, ``col2im`` of
the contract), on (N, C, kH, kW, Ho, Wo) views of the columns. ``fold_blocks`` is fold
without the check that the windows cover (Ho, Wo) exactly, for the transposed 3-D
convolution (whose output padding may leave a partial window).
"""
from __future__ import annotations

from ...autograd.op import Grads, Op
from ...errors import ShapeError, describe
from ...tensors.tensor import Tensor
from ..arguments import Sizes
from .convolution import int_tuple

Pair = tuple[int, int]


def window_count(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """How many windows fit along one dimension (may be 0 or less: none)."""
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


class Unfold(Op):
    """x (N, C, H, W) -> cols (N, C kH kW, Ho Wo)."""

    def forward(self, x: Tensor, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Tensor:
        batch, channels, height, width = x.shape
        blocks = tuple(window_count(n, k, s, p, d) for n, k, s, p, d in zip((height, width), kernel, stride, padding,
                                                                            dilation))
        cols = Tensor._empty((batch, channels) + kernel + blocks, x.dtype, x.device)   # (N, C, kH, kW, Ho, Wo)
        x.device.kernels.im2col(x._array, stride, padding, dilation, cols._array)
        self.arguments, self.in_shape, self.kernel_blocks = (stride, padding, dilation), x.shape, kernel + blocks
        return cols.view(batch, channels * kernel[0] * kernel[1], blocks[0] * blocks[1])

    def backward(self, grad: Tensor) -> Grads:
        grad_x = Tensor._empty(self.in_shape, grad.dtype, grad.device)
        grad.device.kernels.col2im(_blocks(grad, self.in_shape[1], self.kernel_blocks)._array, *self.arguments,
                                   grad_x._array)
        return grad_x, None, None, None, None


class Fold(Op):
    """cols (N, C kH kW, Ho Wo) -> out (N, C, H, W); ``blocks`` = (Ho, Wo)."""

    def forward(self, cols: Tensor, out_size: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
                blocks: Pair) -> Tensor:
        batch, rows = cols.shape[:2]
        channels = rows // (kernel[0] * kernel[1])
        out = Tensor._empty((batch, channels) + out_size, cols.dtype, cols.device)
        cols.device.kernels.col2im(_blocks(cols, channels, kernel + blocks)._array, stride, padding, dilation,
                                   out._array)
        self.arguments, self.kernel_blocks, self.cols_shape = (stride, padding, dilation), kernel + blocks, cols.shape
        return out

    def backward(self, grad: Tensor) -> Grads:
        batch, rows, count = self.cols_shape
        channels = grad.shape[1]
        cols = Tensor._empty((batch, channels) + self.kernel_blocks, grad.dtype, grad.device)
        grad.device.kernels.im2col(grad._array, *self.arguments, cols._array)
        return cols.view(batch, rows, count), None, None, None, None, None, None


def _blocks(cols: Tensor, channels: int, kernel_blocks: tuple[int, ...]) -> Tensor:
    """(N, C kH kW, Ho Wo) as the kernels' (N, C, kH, kW, Ho, Wo) (a view when it can be)."""
    return cols.reshape((cols.shape[0], channels) + tuple(kernel_blocks))


def _arguments(op: str, kernel_size: int | Sizes, dilation: int | Sizes, padding: int | Sizes,
               stride: int | Sizes) -> tuple[Pair, Pair, Pair, Pair]:
    return (int_tuple(op, "kernel_size", kernel_size, 2, 1), int_tuple(op, "stride", stride, 2, 1),  # type: ignore
            int_tuple(op, "padding", padding, 2, 0), int_tuple(op, "dilation", dilation, 2, 1))


def unfold(x: Tensor, kernel_size: int | Sizes, dilation: int | Sizes = 1, padding: int | Sizes = 0,
           stride: int | Sizes = 1) -> Tensor:
    """PyTorch's F.unfold: (N, C, H, W) -> (N, C kH kW, L), or unbatched (C, H, W) -> (C kH kW, L)."""
    if not isinstance(x, Tensor) or x.ndim not in (3, 4):
        raise ShapeError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input, got {describe(x)}")
    kernel, stride_, padding_, dilation_ = _arguments("unfold", kernel_size, dilation, padding, stride)
    if x.ndim == 3:
        return unfold(x.unsqueeze(0), kernel, dilation_, padding_, stride_).squeeze(0)
    blocks = [window_count(n, k, s, p, d) for n, k, s, p, d in zip(x.shape[2:], kernel, stride_, padding_, dilation_)]
    if min(blocks) < 1:
        raise ShapeError(f"unfold: the kernel {list(kernel)} (dilation {list(dilation_)}, padding {list(padding_)}) "
                         f"is larger than the input {describe(x)}: no sliding block fits")
    return Unfold.apply(x, kernel, stride_, padding_, dilation_)


def fold(x: Tensor, output_size: int | Sizes, kernel_size: int | Sizes, dilation: int | Sizes = 1,
         padding: int | Sizes = 0, stride: int | Sizes = 1) -> Tensor:
    """PyTorch's F.fold: (N, C kH kW, L) -> (N, C, H, W) with (H, W) = output_size, or
    unbatched (C kH kW, L) -> (C, H, W); each element sums the column elements read from it."""
    if not isinstance(x, Tensor) or x.ndim not in (2, 3):
        raise ShapeError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input, got {describe(x)}")
    kernel, stride_, padding_, dilation_ = _arguments("fold", kernel_size, dilation, padding, stride)
    out_size: Pair = int_tuple("fold", "output_size", output_size, 2, 1)  # type: ignore[assignment]
    if x.ndim == 2:
        return fold(x.unsqueeze(0), out_size, kernel, dilation_, padding_, stride_).squeeze(0)
    if x.shape[1] % (kernel[0] * kernel[1]):
        raise ShapeError(f"fold: expected size of input's dimension 1 ({describe(x)}) to be divisible by the "
                         f"product of kernel_size {list(kernel)}")
    blocks = tuple(window_count(n, k, s, p, d) for n, k, s, p, d in zip(out_size, kernel, stride_, padding_,
                                                                        dilation_))
    if min(blocks) < 1 or x.shape[2] != blocks[0] * blocks[1]:
        raise ShapeError(f"fold: given output_size={list(out_size)}, kernel_size={list(kernel)}, dilation="
                         f"{list(dilation_)}, padding={list(padding_)}, stride={list(stride_)}, expected size of "
                         f"input's dimension 2 to match the calculated number of sliding blocks "
                         f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got {describe(x)}")
    return Fold.apply(x, out_size, kernel, stride_, padding_, dilation_, blocks)


def fold_blocks(x: Tensor, out_size: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
                blocks: Pair) -> Tensor:
    """fold of x (N, C kH kW, Ho Wo) with the windows' count given, unchecked (see the docstring)."""
    return Fold.apply(x, out_size, kernel, stride, padding, dilation, blocks)
