"""Dropout: zero each element with probability p, scale the rest by 1 / (1 - p).

No mask is stored. Forward draws one 63-bit seed from a Generator (the default
one unless ``generator=`` is given); the kernel derives element i's uniform
number from (seed, i) with a counter-based hash (SplitMix64, see the CPU
kernels' docstring), and keeps the element when that number is >= p. Backward
calls the same kernel with the same seed on the gradient, regenerating the
mask bit for bit: the gradient flows, scaled, exactly where values were kept.

Element i is the i-th element of the input in row-major order, so a given seed
and shape give the same mask whatever the input's strides.

Every dropout here -- elements, whole channels, the alpha dropouts -- gets its seed from
``_seed_for``. The seed is a Python int, or a *seed tensor*: a 1-element int64 tensor on
the input's device whose value the kernel reads on the device (``dropout_forward_seeded``).
A CUDA graph's capture hands dropout such a slot and rewrites it before each replay, so
each replay drops other elements (an int would be frozen into the graph); backward keeps
the same seed object, so a replayed backward reads the slot its forward read.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from ..autograd.op import Grads, Op
from ..errors import DTypeError, ShapeError, describe
from ..random import Generator, default_generator
from ..dtypes import int64
from ..tensors.creation import ones, tensor
from ..tensors.tensor import Tensor

if TYPE_CHECKING:
    from ..backends.device import Device

Seed: TypeAlias = "int | Tensor"    # a drawn seed, or a seed tensor read on the device


def _seed_for(generator: Generator | None, device: Device) -> Seed:
    """The seed of one dropout call on ``device``: the one place every dropout gets it.
    A 63-bit int drawn from ``generator`` (the default one when None); while a CUDA graph is
    being captured on ``device``, a slot the graph refills from ``generator`` before each replay."""
    generator = generator or default_generator()
    capture = device._capture
    if capture is None:
        return generator.next_seed()
    slots = capture.before_replay.get(_SeedSlots)
    if slots is None:
        slots = capture.before_replay[_SeedSlots] = _SeedSlots(capture, device)
    return slots.next(generator)


class _SeedSlots:
    """Dropout's seeds in a captured graph: a slot per draw, in the order the capture drew,
    refilled before each replay with a seed from the draw's generator -- so replay n drops the
    elements eager step n would have.

    While capturing, a draw advances its generator as in eager mode, and a draw from a state
    already met (a checkpoint's recomputation, which restores the generator to redraw its
    forward's seeds) gets that state's slot again, as eager mode gets the same seed again;
    when the capture ends the generators are put back where they were (the capture itself
    draws nothing). Slots are views of device buffers of ``PER_BUFFER`` seeds."""

    PER_BUFFER = 64

    def __init__(self, capture, device: Device):
        self.device = device
        self.buffers: list[Tensor] = []
        self.generators: list[Generator] = []   # each slot's, in order
        self.by_state: dict[tuple, Tensor] = {}   # (generator, its state before the draw) -> the slot
        self.before: dict[int, tuple[Generator, dict]] = {}   # the generators' states before the capture
        capture.at_end.append(self._restore_generators)

    def next(self, generator: Generator) -> Tensor:
        state = generator.get_state()
        self.before.setdefault(id(generator), (generator, state))
        key = (id(generator), repr(state))
        generator.next_seed()
        slot = self.by_state.get(key)
        if slot is None:
            index = len(self.generators) % self.PER_BUFFER
            if index == 0:   # (made during the capture: the graph's memory, written by no kernel in it)
                self.buffers.append(Tensor._empty((self.PER_BUFFER,), int64, self.device))
            self.generators.append(generator)
            slot = self.by_state[key] = self.buffers[-1][index:index + 1]
        return slot

    def _restore_generators(self) -> None:
        for generator, state in self.before.values():
            generator.set_state(state)

    def __call__(self) -> None:
        seeds = [generator.next_seed() for generator in self.generators]
        for i, buffer in enumerate(self.buffers):
            part = seeds[i * self.PER_BUFFER:(i + 1) * self.PER_BUFFER]
            buffer[:len(part)].copy_(tensor(part, dtype=int64, device=self.device))


class Dropout(Op):
    def forward(self, x: Tensor, p: float, seed: Seed) -> Tensor:
        x = x.detach().contiguous()
        out = Tensor._empty(x.shape, x.dtype, x.device)
        kernels = x.device.kernels
        if isinstance(seed, Tensor):
            kernels.dropout_forward_seeded(x._array, p, seed._array, out._array)
        else:
            kernels.dropout_forward(x._array, p, seed, out._array)
        self.p, self.seed = p, seed
        return out

    def backward(self, grad: Tensor) -> Grads:
        grad = grad.contiguous()
        grad_in = Tensor._empty(grad.shape, grad.dtype, grad.device)
        kernels, seed = grad.device.kernels, self.seed
        if isinstance(seed, Tensor):   # (the slot read again: a replayed backward sees its forward's seed)
            kernels.dropout_backward_seeded(grad._array, self.p, seed._array, grad_in._array)
        else:
            kernels.dropout_backward(grad._array, self.p, seed, grad_in._array)
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
    out = Dropout.apply(x, float(p), _seed_for(generator, x.device))
    return x.copy_(out) if inplace else out


def _scaled_mask(x: Tensor, shape: tuple[int, ...], p: float, generator: Generator | None) -> Tensor:
    """A (shape) tensor of x's dtype and device: 1 / (1 - p) where kept, 0 where dropped
    (all 0 for p = 1) -- the dropout kernel applied to ones, with a seed from ``_seed_for``."""
    return Dropout.apply(ones(shape, dtype=x.dtype, device=x.device), float(p), _seed_for(generator, x.device))


def _channel_dropout(op: str, spatial: int, x: Tensor, p: float, training: bool, inplace: bool,
                     generator: Generator | None) -> Tensor:
    """Whole channels of x (N, C, *spatial) -- or unbatched (C, *spatial) -- zeroed with
    probability p, the others scaled by 1 / (1 - p). A composition: a (N, C, 1, ...) mask
    (``_scaled_mask``), broadcast over the channel's elements."""
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
    out = x * _scaled_mask(x, channels + (1,) * spatial, p, generator)
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
        kept = (_scaled_mask(x, shape, p, generator) != 0.0).to(x.dtype)       # 1 kept, 0 dropped
        alpha, a = SELU_ALPHA_SCALED, 1.0 / ((SELU_ALPHA_SCALED ** 2 * p + 1) * (1 - p)) ** 0.5
        out = x * (kept * a) + ((kept - 1.0) * (alpha * a) + alpha * a * p)
    return x.copy_(out) if inplace else out


def alpha_dropout(x: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False, *,
                  generator: Generator | None = None) -> Tensor:
    return _alpha_dropout("alpha_dropout", x, p, training, inplace, False, generator)


def feature_alpha_dropout(x: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False, *,
                          generator: Generator | None = None) -> Tensor:
    return _alpha_dropout("feature_alpha_dropout", x, p, training, inplace, True, generator)
