"""Softmax and log-softmax over any dimension.

The kernels work on contiguous rows ``(rows, C)``: the op moves ``dim`` last,
makes the result contiguous (a copy only when ``dim`` is not already last or
the input is not contiguous), runs one pass per row, and moves the dim back:

    x: (A, C, B), dim=1  ->  (A, B, C)  ->  rows (A*B, C)  ->  kernel  ->  (A, C, B)

Forward saves its output, in the row layout, since both backward rules are
written in terms of it:

    softmax:      dx = y * (dy - sum(dy * y))
    log_softmax:  dx = dy - exp(y) * sum(dy)

A row that is entirely -inf gives NaN from softmax and log_softmax, as in PyTorch
(the row's maximum is -inf, and exp(-inf - -inf) is NaN with no test for it);
``MaskedSoftmax``, attention's, gives zeros there, as PyTorch's attention does (a
fully masked query row), and so a zero gradient.
"""
from __future__ import annotations

from ..autograd.op import Grads, Op
from ..dtypes import DTypeLike
from ..errors import DTypeNotImplementedError, describe
from ..tensors.meta import Shape, normalize_dim
from ..tensors.tensor import Tensor
from .arguments import rows_of
from ..autograd import autocast_hook


def rows_last(x: Tensor, dim: int) -> tuple[Tensor, Shape]:
    """``x`` with ``dim`` moved last, as a contiguous (rows, C) tensor (no graph), and the
    moved shape. ``x`` must already be detached."""
    moved = x.transpose(dim, -1) if dim != x.ndim - 1 else x
    shape = moved.shape
    return rows_of(moved, shape[-1] if shape else 1), shape


def rows_back(rows: Tensor, moved_shape: Shape, dim: int, ndim: int) -> Tensor:
    """Inverse of ``rows_last``: (rows, C) back to the original layout (a view when dim is
    not last, since transposing is its own inverse)."""
    moved = rows.reshape(moved_shape)
    return moved.transpose(dim, -1) if dim != ndim - 1 else moved


class Softmax(Op):
    """softmax(x, dim): exp(x) / sum(exp(x)) along ``dim``, stable (the row max is subtracted)."""

    forward_kernel = staticmethod(lambda kernels: kernels.softmax_forward)
    backward_kernel = staticmethod(lambda kernels: kernels.softmax_backward)

    def forward(self, x: Tensor, dim: int) -> Tensor:
        name = self.op_name
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}: expected a tensor, got {type(x).__name__}")
        if not x.dtype.is_floating_point:
            raise DTypeNotImplementedError(f"{name}: needs a floating-point input, got {describe(x)}; "
                             "convert it with .float() first")
        ndim = x.ndim
        dim = normalize_dim(dim, ndim, name)
        x = x.detach()
        rows, moved_shape = rows_last(x, dim)                     # (rows, C)
        out_rows = Tensor._empty(rows.shape, x.dtype, x.device)   # (rows, C)
        self.forward_kernel(x.device.kernels)(rows._array, out_rows._array)
        self.save_for_backward(out_rows)
        self.dim, self.ndim, self.moved_shape = dim, ndim, moved_shape
        return rows_back(out_rows, moved_shape, dim, ndim).contiguous()

    def backward(self, grad: Tensor) -> Grads:
        (out_rows,) = self.saved_tensors
        grad_rows, _ = rows_last(grad, self.dim)                  # (rows, C)
        grad_in = Tensor._empty(out_rows.shape, out_rows.dtype, out_rows.device)
        self.backward_kernel(grad.device.kernels)(grad_rows._array, out_rows._array, grad_in._array)
        return rows_back(grad_in, self.moved_shape, self.dim, self.ndim), None


class LogSoftmax(Softmax):
    """log_softmax(x, dim) = x - logsumexp(x, dim), in one pass per row."""

    forward_kernel = staticmethod(lambda kernels: kernels.log_softmax_forward)
    backward_kernel = staticmethod(lambda kernels: kernels.log_softmax_backward)


class MaskedSoftmax(Softmax):
    """softmax whose rows of all -inf give zeros (attention's fully masked query rows); the
    same backward (out = 0 there gives a zero gradient)."""

    forward_kernel = staticmethod(lambda kernels: kernels.masked_softmax_forward)


def softmax(input: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("softmax", input)
    if dtype is not None:
        input = input.to(dtype)
    return Softmax.apply(input, dim)


def log_softmax(input: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("log_softmax", input)
    if dtype is not None:
        input = input.to(dtype)
    return LogSoftmax.apply(input, dim)
