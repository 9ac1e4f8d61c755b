"""Rearranging a tensor's elements: ``flip``, ``roll``, ``repeat``, ``pad``.

Each is a short composition of ops that already have their backward -- index_select
(whose backward adds the gradient back where each element came from), cat, slices,
expand -- so they are differentiable on every device without a rule of their own.
Only constant padding is an op (``ConstantPad``): filling the border and copying the
input in is one pass; its backward is the view of the gradient's interior.

    flip(x, dims)       x[..., n-1-i, ...] along each of dims                 a copy
    roll(x, s, dim)     x[..., (i - s) mod n, ...]                            a copy
    repeat(x, r0, r1)   x tiled r0 times along dim 0, r1 times along dim 1   a copy
    pad(x, (l, r, ...)) l elements before and r after the last dimension, then the
                        next pair for the dimension before, ...; a negative amount crops
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...autograd.op import Grads, Op
from ...backends.device import Device
from ...errors import ShapeError, UnsupportedModeError, describe
from ...errors import SizeTypeError, ValueArgumentError
from ...tensors.creation import arange, full, tensor, zeros
from ...tensors.meta import Shape, normalize_dim
from ...tensors.tensor import Tensor
from ..arguments import Number, Sizes, fill_value
from ..indexing import BasicIndex
from ..joining import cat
from ..new_memory import new_memory

PAD_MODES = ("constant", "reflect", "replicate", "circular")
Pairs = tuple[tuple[int, int], ...]  # (before, after) for each dimension, first to last


def flip(input: Tensor, dims: int | Sizes) -> Tensor:
    """New memory, as in PyTorch, also where nothing is flipped (``dims`` empty)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    normalized = [normalize_dim(d, input.ndim, "flip") for d in dims]
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"flip: a dim appears more than once in dims {list(dims)} (for {describe(input)})")
    x = input
    for d in normalized:
        n = x.shape[d]
        x = x.index_select(d, arange(n - 1, -1, -1, device=x.device))
    return new_memory(x, input)


def roll(input: Tensor, shifts: int | Sizes, dims: int | Sizes | None = None) -> Tensor:
    """Elements shifted by ``shifts`` places along ``dims`` (those leaving at one end come
    back at the other); without ``dims``, over the flattened tensor, keeping the shape.
    New memory, as in PyTorch, also where every shift is a multiple of its size."""
    if dims is None:
        if not isinstance(shifts, int) and len(tuple(shifts)) == 1:
            shifts = tuple(shifts)[0]   # roll((1,)): one shift over the flattened tensor, as in PyTorch
        if not isinstance(shifts, int):
            raise ShapeError(f"roll: without dims, shifts must be one int, got {shifts!r}")
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ShapeError(f"roll: {len(shifts)} shifts for {len(dims)} dims; give one shift per dim")
    x = input
    for shift, dim in zip(shifts, dims):
        d = normalize_dim(dim, x.ndim, "roll")
        n = x.shape[d]
        s = shift % n if n else 0
        if s:
            before = (slice(None),) * d
            tail, head = (BasicIndex.apply(x, before + (part,)) for part in (slice(n - s, n), slice(0, n - s)))
            x = cat([tail, head], dim=d)
    return new_memory(x, input)


def repeat(x: Tensor, sizes: Sizes) -> Tensor:
    """``x`` tiled ``sizes[i]`` times along dimension i (PyTorch's ``Tensor.repeat``; new
    leading dimensions when there are more sizes than dimensions):
    (s0, s1) repeated (r0, r1) is (1, s0, 1, s1) expanded to (r0, s0, r1, s1), reshaped;
    new memory, as in PyTorch, also when every repeat is 1."""
    if len(sizes) < x.ndim:
        raise ShapeError(f"repeat: {len(sizes)} repeats for {describe(x)}; give at least one per dimension")
    if any(not isinstance(r, int) for r in sizes):
        raise SizeTypeError(f"repeat: repeats must be ints, got {list(sizes)}")
    if any(r < 0 for r in sizes):
        raise ValueArgumentError(f"repeat: repeats must be non-negative, got {list(sizes)}")
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    interleaved = tuple(n for s in shape for n in (1, s))
    expanded = tuple(n for r, s in zip(sizes, shape) for n in (r, s))
    tiled = x.reshape(interleaved).expand(expanded).reshape(tuple(r * s for r, s in zip(sizes, shape)))
    return new_memory(tiled, x)


class ConstantPad(Op):
    """``pad`` with a constant: the output is filled with ``value``, the input copied into
    its interior (cropped where an amount is negative)."""

    def forward(self, x: Tensor, amounts: Pairs, value: Number | Tensor) -> Tensor:
        # amounts: ((before, after) for each dimension, first to last)
        shape = tuple(n + before + after for n, (before, after) in zip(x.shape, amounts))
        if any(n < 0 for n in shape):
            raise ShapeError(f"pad: the padding {list(amounts)} crops {describe(x)} below nothing")
        out = full(shape, fill_value("pad", value, x.dtype), dtype=x.dtype, device=x.device)
        inside, source = _overlap(x.shape, amounts)
        if all(s.stop > s.start for s in inside):
            out[inside] = x.detach()[source]
        self.inside, self.source, self.in_shape = inside, source, x.shape
        return out

    def backward(self, grad: Tensor) -> Grads:
        grad_in = zeros(self.in_shape, dtype=grad.dtype, device=grad.device)
        if all(s.stop > s.start for s in self.inside):
            grad_in[self.source] = grad[self.inside]
        return grad_in, None, None


def _overlap(shape: Shape, amounts: Pairs) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
    """The slices of the output and of the input that hold the same elements."""
    inside: list[slice] = []
    source: list[slice] = []
    for n, (before, after) in zip(shape, amounts):
        start = max(before, 0)
        first = max(-before, 0)
        last = n - max(-after, 0)
        inside.append(slice(start, start + max(last - first, 0)))
        source.append(slice(first, max(last, first)))
    return tuple(inside), tuple(source)


def pad(x: Tensor, amounts: Sequence[int], mode: str = "constant", value: Number | None = None) -> Tensor:
    """PyTorch's ``F.pad``: ``amounts`` pairs (before, after) from the last dimension
    backwards; ``mode`` "constant" (with ``value``, 0 by default), "reflect" (mirror
    without the edge), "replicate" (repeat the edge) or "circular" (wrap around)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"pad: expected a tensor, got {describe(x)}")
    amounts = tuple(amounts)
    if len(amounts) % 2 or len(amounts) // 2 > x.ndim or not all(isinstance(a, int) for a in amounts):
        raise ShapeError(f"pad: padding must be pairs of ints, at most one pair per dimension of {describe(x)}, "
                         f"got {list(amounts)}")
    if mode not in PAD_MODES:
        raise UnsupportedModeError(f"pad: mode must be one of {PAD_MODES}, got {mode!r}")
    pairs = [(0, 0)] * x.ndim
    for i in range(len(amounts) // 2):
        pairs[x.ndim - 1 - i] = (amounts[2 * i], amounts[2 * i + 1])
    if mode == "constant":
        return ConstantPad.apply(x, tuple(pairs), 0 if value is None else value)
    if value is not None:
        raise ValueError(f"pad: value is only for mode 'constant', not {mode!r}")
    source = x
    for d, (before, after) in enumerate(pairs):
        if before or after:
            x = x.index_select(d, _source_positions(mode, x.shape[d], before, after, x.device))
    return new_memory(x, source)  # new memory, as PyTorch's, also for zero padding


def _source_positions(mode: str, n: int, before: int, after: int, device: Device) -> Tensor:
    """For each position of the padded dimension, the input position it copies (worked out
    on the host: a few integers)."""
    if n == 0:
        raise ShapeError(f"pad: {mode} padding of an empty dimension")
    if mode == "reflect" and (before >= n or after >= n):
        raise ShapeError(f"pad: reflect padding of {max(before, after)} needs a dimension longer than that, "
                         f"got {n}")
    if mode == "circular" and (before > n or after > n):
        raise ShapeError(f"pad: circular padding of {max(before, after)} wraps around a dimension of {n} "
                         "more than once")
    positions = np.arange(-before, n + after)
    if mode == "circular" and min(before, after) < 0:
        # a negative amount crops first; the wrap-around then reads the cropped part (PyTorch)
        start, kept = max(-before, 0), n + min(before, 0) + min(after, 0)
        if kept <= 0:
            raise ShapeError(f"pad: circular padding ({before}, {after}) crops all {n} elements of a dimension")
        return tensor(start + np.arange(-max(before, 0), kept + max(after, 0)) % kept, device=device)
    if mode == "replicate":
        positions = positions.clip(0, n - 1)
    elif mode == "circular":
        positions = positions % n
    else:  # reflect: ... 2 1 [0 1 2 ... n-1] n-2 n-3 ...
        period = 2 * (n - 1)
        folded = np.abs(positions) % period if period else np.zeros_like(positions)
        positions = (n - 1) - np.abs(folded - (n - 1))
    return tensor(positions, device=device)
