"""Layer normalisation as one op (the book's ``OpLayerNorm``).

Over the last ``len(normalized_shape)`` dimensions, flattened to rows (rows, D):

    mean = sum(x) / D            rstd = 1 / sqrt(sum((x - mean)^2) / D + eps)
    xhat = (x - mean) * rstd     y = xhat * weight + bias

Forward saves the input and two numbers per row (mean and rstd), not the
normalised activations. Backward, one pass per row with g = dy * weight:

    dx      = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dweight = sum over rows of dy * xhat
    dbias   = sum over rows of dy
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..autograd.op import Grads, Op
from ..errors import DTypeError, ShapeError, describe
from ..errors import DTypeNotImplementedError
from ..tensors.meta import Shape, numel
from ..tensors.tensor import Tensor
from .arguments import array_or_none, laid_out, rows_of
from ..autograd import autocast_hook


def normalized_shape_of(normalized_shape: int | Iterable[int]) -> Shape:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


class LayerNormalization(Op):
    def forward(self, x: Tensor, weight: Tensor | None, bias: Tensor | None, normalized_shape: int | Iterable[int],
                eps: float = 1e-5) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"layer_norm: expected a tensor, got {type(x).__name__}")
        if not x.dtype.is_floating_point:
            raise DTypeNotImplementedError(f"layer_norm: needs a floating-point input, got {describe(x)}")
        shape = normalized_shape_of(normalized_shape)
        if not shape or len(shape) > x.ndim or x.shape[x.ndim - len(shape):] != shape:
            raise ShapeError(f"layer_norm: normalized_shape {list(shape)} must be the last "
                             f"dimension(s) of the input, got {describe(x)}")
        for name, param in (("weight", weight), ("bias", bias)):
            if param is None:
                continue
            if not isinstance(param, Tensor) or param.shape != shape:
                got = describe(param)
                raise ShapeError(f"layer_norm: {name} must have shape {list(shape)} (normalized_shape), "
                                 f"got {got}")
            if param.dtype is not x.dtype:
                raise DTypeError(f"layer_norm: {name} {describe(param)} must have the input's dtype "
                                 f"({describe(x)})")
        width = numel(shape)
        rows = rows_of(x, width)                                    # (R, D)
        weight = None if weight is None else laid_out(weight, (width,))
        bias = None if bias is None else laid_out(bias, (width,))
        out = Tensor._empty(x.shape, x.dtype, x.device)             # x's shape, written as (R, D)
        statistics = Tensor._empty((2, rows.shape[0]), x.dtype, x.device)   # (2, R): each row's mean, rstd
        if rows.numel():
            mean, rstd = statistics._array[0], statistics._array[1]
            x.device.kernels.layer_norm_forward(rows._array, array_or_none(weight),
                                                array_or_none(bias), float(eps),
                                                out._array.reshape(rows.shape), mean, rstd)
        self.save_for_backward(rows, weight, statistics)
        self.in_shape, self.param_shape = x.shape, shape
        return out

    def backward(self, grad: Tensor) -> Grads:
        rows, weight, statistics = self.saved_tensors
        mean, rstd = statistics._array[0], statistics._array[1]
        need_x, need_weight, need_bias = self.needs_input_grad[:3]
        grad_rows = laid_out(grad, rows.shape)                                  # (R, D)
        grad_x = Tensor._empty(self.in_shape, rows.dtype, rows.device)          # written as (R, D)
        grad_weight = Tensor._empty(self.param_shape, rows.dtype, rows.device) if need_weight else None
        grad_bias = Tensor._empty(self.param_shape, rows.dtype, rows.device) if need_bias else None
        if rows.numel():
            grad.device.kernels.layer_norm_backward(
                grad_rows._array, rows._array, array_or_none(weight), mean,
                rstd, grad_x._array.reshape(rows.shape), _flat_or_none(grad_weight),
                _flat_or_none(grad_bias))
        else:
            for t in (grad_weight, grad_bias):
                if t is not None:
                    t.device.kernels.fill(t._array, 0)
        return (grad_x if need_x else None, grad_weight, grad_bias, None, None)


def _flat_or_none(t: Tensor | None) -> Any:
    """The (D,) array a kernel writes a parameter gradient of normalized_shape into."""
    return None if t is None else t._array.reshape(-1)


def layer_norm(x: Tensor, normalized_shape: int | Iterable[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast("layer_norm", x, weight, bias)
    if weight is not None and weight._meta.dtype is not x._meta.dtype and x._meta.dtype.itemsize == 2:
        # a 16-bit input with float32 parameters (autocast's bfloat16 activations meeting a
        # float32 LayerNorm): normalised in float32, the result in the input's dtype, as PyTorch's
        return LayerNormalization.apply(x.float(), weight, bias, normalized_shape, eps).to(x._meta.dtype)
    return LayerNormalization.apply(x, weight, bias, normalized_shape, eps)
