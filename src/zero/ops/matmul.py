"""Matrix products: 1-D, 2-D and batched with batch broadcasting.

    [M, K]    @ [K, N]    -> [M, N]
    [B, M, K] @ [B, K, N] -> [B, M, N]
    [1, M, K] @ [B, K, N] -> [B, M, N]      (batch dims broadcast)

Backward: dA = dC @ Bᵀ and dB = Aᵀ @ dC, each summed back over the batch
dimensions that broadcasting added. Bᵀ is a transposed *view*; the kernels read
any strides (BLAS takes a transposed matrix as a flag), so nothing is copied.
"""
from __future__ import annotations

from ..autograd import autocast_hook
from ..autograd.op import Grads, Op
from ..errors import DTypeError, ShapeError, describe
from ..tensors.meta import broadcast_shapes
from ..tensors.tensor import Tensor
from .broadcast import sum_to_shape


class MatMul(Op):
    """Both operands have at least 2 dimensions; ``matmul`` below handles 1-D ones."""

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        sa, sb = a._meta.shape, b._meta.shape
        if a._meta.dtype is not b._meta.dtype:
            raise DTypeError(f"matmul: both operands must have the same dtype, got {describe(a)} "
                             f"and {describe(b)}; convert one with .to(dtype)")
        if sa[-1] != sb[-2]:
            raise ShapeError(f"matmul: inner dimensions differ: {describe(a)} @ {describe(b)} "
                             f"({sa[-1]} != {sb[-2]})")
        batch = broadcast_shapes(sa[:-2], sb[:-2], op="matmul")
        out = Tensor._empty(batch + (sa[-2], sb[-1]), a._meta.dtype, a._meta.device)
        a._meta.device.kernels.matmul(a._array, b._array, out._array)
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.a_shape, self.b_shape = sa, sb
        return out

    def backward(self, grad: Tensor) -> Grads:
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        grad_a = sum_to_shape(grad @ b.mT, self.a_shape) if need_a else None
        grad_b = None
        if need_b:
            if len(self.a_shape) > 2 and len(self.b_shape) == 2:
                # A weight shared across the batch (x @ Wᵀ in a linear layer): one large
                # product over the flattened batch instead of one per batch and then a sum.
                grad_b = a.reshape(-1, a.shape[-1]).mT @ grad.reshape(-1, grad.shape[-1])
            else:
                grad_b = sum_to_shape(a.mT @ grad, self.b_shape)
        return grad_a, grad_b


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """PyTorch's matmul: a 1-D operand is a row (left) or column (right) vector that is
    dropped from the result again."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"matmul: both operands must be tensors, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    if autocast_hook.state.active:
        input, other = autocast_hook.cast("matmul", input, other)
    if input.ndim == 0 or other.ndim == 0:
        raise ShapeError(f"matmul: both operands need at least one dimension, got {describe(input)} and "
                         f"{describe(other)}")
    left_vector, right_vector = input.ndim == 1, other.ndim == 1
    if left_vector:
        input = input.unsqueeze(0)
    if right_vector:
        other = other.unsqueeze(-1)
    out = MatMul.apply(input, other)
    if left_vector:  # (..., 1, N) -> (..., N); first, so that 1-D @ 1-D works: (1, 1) -> (1,) -> ()
        out = out.squeeze(-2)
    if right_vector:
        out = out.squeeze(-1)
    return out
