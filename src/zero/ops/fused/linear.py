"""Linear as one op (the book's ``OpLinearBias``): y = x Wᵀ + b.

    x (*, IN)   weight (OUT, IN)   bias (OUT,) or None   ->   y (*, OUT)

Forward is one GEMM over the flattened rows (N, IN) into the output, the bias added in
place. Backward, with g the output gradient as (N, OUT), computes only what is needed:

    grad_x = g @ W          (N, IN)      needs W
    grad_W = gᵀ @ x         (OUT, IN)    needs x
    grad_b = column sums    (OUT,)

so it saves x only when the weight needs a gradient, and W only when x does.
"""
from __future__ import annotations

from ...autograd.op import Grads, Op
from ...errors import ShapeError, describe
from ...tensors.tensor import Tensor
from ..arguments import array_or_none, check_floats, check_shape, rows_of
from ...autograd import autocast_hook


class LinearBias(Op):
    def forward(self, x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        check_floats("linear", input=x, weight=weight, bias=bias)
        if weight.ndim != 2:
            raise ShapeError(f"linear: weight must be [out_features, in_features], got {describe(weight)}")
        out_features, in_features = weight.shape
        if x.ndim == 0 or x.shape[-1] != in_features:
            raise ShapeError(f"linear: input {describe(x)} must end in in_features={in_features} to "
                             f"match weight {describe(weight)}")
        check_shape("linear", "bias", bias, (out_features,), "out_features")
        rows = rows_of(x, in_features)                                       # (N, IN)
        weight = weight.detach()
        out = Tensor._empty(x.shape[:-1] + (out_features,), x.dtype, x.device)  # (*, OUT), written as (N, OUT)
        x.device.kernels.linear_forward(rows._array, weight._array, array_or_none(bias),
                                        out._array.reshape(rows.shape[0], out_features))
        need_x, need_weight = self.needs_input_grad[:2]
        self.save_for_backward(rows if need_weight else None, weight if need_x else None)
        self.in_shape, self.weight_shape = x.shape, weight.shape
        return out

    def backward(self, grad: Tensor) -> Grads:
        rows, weight = self.saved_tensors
        need_x, need_weight, need_bias = self.needs_input_grad
        out_features, in_features = self.weight_shape
        grad_rows = rows_of(grad, out_features)                               # (N, OUT)
        dtype, device = grad.dtype, grad.device
        grad_x = Tensor._empty(self.in_shape, dtype, device) if need_x else None   # (*, IN), written as (N, IN)
        grad_weight = Tensor._empty(self.weight_shape, dtype, device) if need_weight else None
        grad_bias = Tensor._empty((out_features,), dtype, device) if need_bias else None
        device.kernels.linear_backward(grad_rows._array, array_or_none(rows), array_or_none(weight),
                                       grad_x._array.reshape(-1, in_features) if grad_x is not None else None,
                                       array_or_none(grad_weight), array_or_none(grad_bias))
        return (grad_x, grad_weight, grad_bias)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weightᵀ + bias as one op: (*, IN) x (OUT, IN) -> (*, OUT)."""
    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast("linear", x, weight, bias)
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"linear: input and weight must be tensors, got {describe(x)} and {describe(weight)}")
    return LinearBias.apply(x, weight, bias)
