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


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator: Generator | None = None) -> Tensor:
    """PyTorch's F.dropout. Not training, or p == 0: the input itself (no op, no copy).
    ``inplace``: the result written into x, and x returned."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must lie in [0, 1], got {p}")
    if not isinstance(x, Tensor):
        raise TypeError(f"dropout: expected a tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"dropout: needs a floating-point input, got {describe(x)}")
    if not training or p == 0.0:
        return x
    seed = (generator or default_generator()).next_seed()
    out = Dropout.apply(x, float(p), seed)
    return x.copy_(out) if inplace else out


def _channel_dropout(op: str, spatial: int, x: Tensor, p: float, training: bool, inplace: bool,
                     generator: Generator | None) -> Tensor:
    """Whole channels of x (N, C, *spatial) -- or unbatched (C, *spatial) -- zeroed with
    probability p, the others scaled by 1 / (1 - p). A composition: a (N, C, 1, ...) mask drawn
    from the generator, broadcast over the channel's elements."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: probability p must lie in [0, 1], got {p}")
    if not isinstance(x, Tensor) or x.ndim not in (spatial + 1, spatial + 2):
        raise ShapeError(f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, "
                         f"got {describe(x)}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point input, got {describe(x)}")
    if not training or p == 0.0:
        return x
    channels = x.shape[:x.ndim - spatial]                                    # (N, C) or (C,)
    draws = rand(channels + (1,) * spatial, generator=generator, dtype=x.dtype, device=x.device)
    keep = (draws >= p).to(x.dtype) * (1.0 / (1.0 - p)) if p < 1.0 else draws * 0.0
    out = x * keep
    return x.copy_(out) if inplace else out


def dropout1d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              generator: Generator | None = None) -> Tensor:
    """PyTorch's F.dropout1d: whole channels of x (N, C, L) or (C, L) zeroed."""
    return _channel_dropout("dropout1d", 1, x, p, training, inplace, generator)


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              generator: Generator | None = None) -> Tensor:
    """PyTorch's F.dropout2d: whole channels of x (N, C, H, W) or (C, H, W) zeroed."""
    return _channel_dropout("dropout2d", 2, x, p, training, inplace, generator)


def dropout3d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              generator: Generator | None = None) -> Tensor:
    """PyTorch's F.dropout3d: whole channels of x (N, C, D, H, W) or (C, D, H, W) zeroed."""
    return _channel_dropout("dropout3d", 3, x, p, training, inplace, generator)


SELU_ALPHA_SCALED = 1.7580993408473766    # SELU's scale · alpha: the value SELU tends to for x -> -inf, negated


def _alpha_dropout(op: str, x: Tensor, p: float, training: bool, inplace: bool, feature: bool,
                   generator: Generator | None) -> Tensor:
    """Dropout that keeps SELU's mean 0 and variance 1: dropped elements are set to SELU's
    negative saturation -alpha', then everything is scaled and shifted (PyTorch's formula):
        a = 1 / sqrt((alpha'² p + 1)(1 - p))     kept: a x + alpha' a p     dropped: alpha' a (p - 1)
    ``feature``: whole channels of x (N, C, *) dropped together."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: probability p must lie in [0, 1], got {p}")
    if not isinstance(x, Tensor) or not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point tensor, got {describe(x)}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        out = x * 0.0
    else:
        shape = x.shape[:2] + (1,) * (x.ndim - 2) if feature else x.shape
        kept = (rand(shape, generator=generator, dtype=x.dtype, device=x.device) >= p).to(x.dtype)
        alpha, a = SELU_ALPHA_SCALED, 1.0 / ((SELU_ALPHA_SCALED ** 2 * p + 1) * (1 - p)) ** 0.5
        out = x * (kept * a) + ((kept - 1.0) * (alpha * a) + alpha * a * p)
    return x.copy_(out) if inplace else out


def alpha_dropout(x: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False, *,
                  generator: Generator | None = None) -> Tensor:
    return _alpha_dropout("alpha_dropout", x, p, training, inplace, False, generator)


def feature_alpha_dropout(x: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False, *,
                          generator: Generator | None = None) -> Tensor:
    return _alpha_dropout("feature_alpha_dropout", x, p, training, inplace, True, generator)
