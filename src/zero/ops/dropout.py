"""Dropout: zero each element with probability p, scale the rest by 1 / (1 - p).

No mask is stored. Forward draws one 63-bit seed from a Generator (the default
one unless ``generator=`` is given); the kernel derives element i's uniform
number from (seed, i) with a counter-based hash (SplitMix64, see the CPU
kernels' docstring), and keeps the element when that number is >= p. Backward
calls the same kernel with the same seed on the gradient, regenerating the
mask bit for bit: the gradient flows, scaled, exactly where values were kept.

Element i is the i-th element of the input in row-major order, so a given seed
and shape give the same mask whatever the input's strides.
"""
from __future__ import annotations

from ..autograd.op import Grads, Op
from ..errors import DTypeError, ShapeError, describe
from ..random import Generator, default_generator
from ..tensors.creation import rand
from ..tensors.tensor import Tensor


class Dropout(Op):
    def forward(self, x: Tensor, p: float, seed: int) -> Tensor:
        x = x.detach().contiguous()
        out = Tensor._empty(x.shape, x.dtype, x.device)
        x.device.kernels.dropout_forward(x._array, p, seed, out._array)
        self.p, self.seed = p, seed
        return out

    def backward(self, grad: Tensor) -> Grads:
        grad = grad.contiguous()
        grad_in = Tensor._empty(grad.shape, grad.dtype, grad.device)
        grad.device.kernels.dropout_backward(grad._array, self.p, self.seed, grad_in._array)
        return grad_in, None, None


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: Generator | None = None) -> Tensor:
    """PyTorch's F.dropout. Not training, or p == 0: the input itself (no op, no copy)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must lie in [0, 1], got {p}")
    if not isinstance(x, Tensor):
        raise TypeError(f"dropout: expected a tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"dropout: needs a floating-point input, got {describe(x)}")
    if not training or p == 0.0:
        return x
    seed = (generator or default_generator()).next_seed()
    return Dropout.apply(x, float(p), seed)


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, generator: Generator | None = None) -> Tensor:
    """PyTorch's F.dropout2d: whole channels of x (N, C, H, W) -- or (C, H, W) -- zeroed with
    probability p, the others scaled by 1 / (1 - p). A composition: a (N, C, 1, 1) mask drawn
    from the generator, broadcast over the channel's elements."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout2d: probability p must lie in [0, 1], got {p}")
    if not isinstance(x, Tensor) or x.ndim not in (3, 4):
        raise ShapeError(f"dropout2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got {describe(x)}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"dropout2d: needs a floating-point input, got {describe(x)}")
    if not training or p == 0.0:
        return x
    channels = x.shape[:x.ndim - 2]                                          # (N, C) or (C,)
    draws = rand(channels + (1, 1), generator=generator, dtype=x.dtype, device=x.device)
    keep = (draws >= p).to(x.dtype) * (1.0 / (1.0 - p)) if p < 1.0 else draws * 0.0
    return x * keep
