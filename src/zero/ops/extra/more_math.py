"""PyTorch's functions that were missing from Zero's other files: the gamma family
(``lgamma``, ``digamma``: kernels of their own, computed in float64), the bit shifts
(``<<``, ``>>``), ``copysign``, ``equal``, ``broadcast_shapes``/``broadcast_tensors``,
``repeat_interleave``, ``cross``, ``cdist``, ``combinations`` and ``masked_scatter``.

Beside the kernels, each is a composition of existing ops (so it runs on every device and
differentiates through them):

    copysign(a, b)        |a| * (-1 where b's sign bit is set, else 1); b gets no gradient
    repeat_interleave     index_select with the indices repeated (counted on the host:
                          the output's length depends on the counts)
    cross(a, b)           a.roll(-1) * b.roll(-2) - a.roll(-2) * b.roll(-1) along dim
    cdist(x1, x2, p)      the p-norm of x1[..., :, None, :] - x2[..., None, :, :]
    combinations          index_select of itertools' index tuples
    masked_scatter        source's elements, in order, where the mask is set:
                          where(mask, source.flatten()[cumsum(mask) - 1], input)
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import DTypeError, describe
from ...tensors.creation import tensor as make_tensor
from ...tensors.creation import zeros
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..comparison import Bitwise
from ..elementwise import UnaryOp, where
from ..joining import index_select
from ..views import broadcast_to, mark_view
from .rearrange import roll
from .unary_math import signbit
from ...autograd import autocast_hook

# -- the gamma family ---------------------------------------------------------------------------


class Lgamma(UnaryOp):
    """log |Gamma(x)|; its derivative is digamma."""
    kernel = staticmethod(lambda kernels: kernels.lgamma)

    def derivative(self, x: Tensor) -> Tensor:
        return Digamma.apply(x)


class Digamma(UnaryOp):
    """Gamma'(x) / Gamma(x); its derivative is trigamma (PyTorch's polygamma(1, x))."""
    kernel = staticmethod(lambda kernels: kernels.digamma)

    def derivative(self, x: Tensor) -> Tensor:
        return Trigamma.apply(x)


class Trigamma(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.trigamma)
    saves = None


def lgamma(input: Tensor) -> Tensor:
    return Lgamma.apply(input)


def digamma(input: Tensor) -> Tensor:
    return Digamma.apply(input)


# -- the bit shifts -------------------------------------------------------------------------------


class LeftShift(Bitwise):
    kernel = staticmethod(lambda kernels: kernels.left_shift)


class RightShift(Bitwise):
    kernel = staticmethod(lambda kernels: kernels.right_shift)


def bitwise_left_shift(input: Tensor | int, other: Tensor | int) -> Tensor:
    """input << other, bit by bit on integers (0 where other is negative or past the width)."""
    return LeftShift.apply(input, other)


def bitwise_right_shift(input: Tensor | int, other: Tensor | int) -> Tensor:
    """input >> other, arithmetic on signed integers."""
    return RightShift.apply(input, other)


# -- copysign, equal ------------------------------------------------------------------------------


def copysign(input: Tensor | float, other: Tensor | float) -> Tensor:
    """|input| with the sign of other (a float result, as in PyTorch)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("copysign(): expected a tensor argument")
    dtype = dtypes.result_type(input, other)
    if not dtype.is_floating_point:
        dtype = dtypes.get_default_dtype()
    device = (input if isinstance(input, Tensor) else other).device   # type: ignore[union-attr]
    magnitude = input.to(dtype).abs() if isinstance(input, Tensor) else \
        make_tensor(abs(float(input)), dtype=dtype, device=device)
    negative = signbit(other) if isinstance(other, Tensor) else \
        make_tensor(math.copysign(1.0, other) < 0, device=device)
    return where(negative, -magnitude, magnitude).to(dtype)


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and the same values (NaN equals nothing)."""
    for x in (input, other):
        if not isinstance(x, Tensor):
            raise TypeError(f"equal(): argument must be Tensor, not {type(x).__name__}")
    if input.device != other.device:
        raise RuntimeError(f"equal: expected both tensors on one device, got {input.device} and {other.device}")
    if input.shape != other.shape:
        return False
    return bool((input.detach() == other.detach()).all().item())


# -- broadcasting ---------------------------------------------------------------------------------


def broadcast_shapes(*shapes: int | Sequence[int]) -> tuple[int, ...]:
    """The shape that tensors of ``shapes`` broadcast to (a ``Size``)."""
    from ...tensors.size import Size
    result: list[int] = []
    for shape in shapes:
        sizes = (shape,) if isinstance(shape, int) else tuple(shape)
        for s in sizes:
            if not isinstance(s, int) or isinstance(s, bool):
                raise TypeError(f"broadcast_shapes: expected ints, got {type(s).__name__}")
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
        padded = [1] * (len(sizes) - len(result)) + result
        sizes = (1,) * (len(padded) - len(sizes)) + sizes
        merged = []
        for a, b in zip(padded, sizes):
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: "
                                   f"{tuple(padded)} and {tuple(sizes)}")
            merged.append(b if a == 1 else a)
        result = merged
    return Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Views of the tensors expanded to their common shape (a tensor of that shape already:
    itself, as PyTorch returns it)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"broadcast_tensors(): expected Tensors, got {type(t).__name__}")
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in tensors)


# -- repeat_interleave, combinations, masked_scatter: gathers of indices --------------------------


def repeat_interleave(input: Tensor, repeats: int | Tensor | None = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (each slice along ``dim``) repeated ``repeats`` times in turn; with only a
    tensor of counts, the indices 0, 0, 1, ... each repeated its count."""
    if repeats is None:   # repeat_interleave(counts)
        if not isinstance(input, Tensor) or input.ndim > 1 or input.dtype.category != dtypes.INTEGER:
            raise RuntimeError("repeat_interleave: repeats must be a 0-dim or 1-dim integer tensor")
        return repeat_interleave(make_tensor(np.arange(input.numel()), device=input.device), input, 0,
                                 output_size=output_size)
    if not isinstance(input, Tensor):
        raise TypeError(f"repeat_interleave(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None else normalize_dim(dim, x.ndim, "repeat_interleave")
    if x.ndim == 0:
        x = x.reshape(1)
    size = x.shape[axis]
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1 or repeats.dtype.category != dtypes.INTEGER:
            raise RuntimeError("repeat_interleave: repeats must be a 0-dim or 1-dim integer tensor")
        counts: np.ndarray = repeats.detach().cpu().numpy().reshape(-1).astype(np.int64)
        if counts.size == 1:
            counts = np.repeat(counts, size)
        elif counts.size != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.size} and input.size({axis}) = {size}")
    elif isinstance(repeats, int) and not isinstance(repeats, bool):
        counts = np.full(size, repeats, dtype=np.int64)
    else:
        raise TypeError(f"repeat_interleave(): repeats must be an int or a tensor, got {type(repeats).__name__}")
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    if output_size is not None and int(counts.sum()) != output_size:
        raise RuntimeError(f"repeat_interleave: allocated size ({output_size}) does not match required size "
                           f"({int(counts.sum())})")
    index = make_tensor(np.repeat(np.arange(size), counts), dtype=dtypes.int64, device=x.device)
    return index_select(x, axis, index)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The r-element combinations of a 1-D tensor's elements, one per row (itertools' order)."""
    if not isinstance(input, Tensor) or input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {getattr(input, 'shape', None)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(choose(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    index = make_tensor(rows.reshape(-1), dtype=dtypes.int64, device=input.device)
    return index_select(input, 0, index).reshape(rows.shape[0], r)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """input with source's elements written, in order, where ``mask`` (broadcast) is True."""
    for name, t in (("input", input), ("mask", mask), ("source", source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"masked_scatter(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{input.dtype} and {source.dtype}")
    mask = broadcast_to(mask, input.shape)
    positions = mask.reshape(-1).to(dtypes.int64).cumsum(0) - 1
    needed = int(positions[-1].item()) + 1 if positions.numel() else 0
    if needed > source.numel():
        raise RuntimeError(f"masked_scatter: expected source to have at least {needed} elements, "
                           f"got {source.numel()} ({describe(source)})")
    if needed == 0:
        return where(mask, input, input)
    picked = index_select(source.reshape(-1), 0, positions.clamp(min=0)).reshape(input.shape)
    return where(mask, picked, input)


# -- cross, cdist ---------------------------------------------------------------------------------


def _cross(op: str, input: Tensor, other: Tensor, dim: int | None) -> Tensor:
    for t in (input, other):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensors, got {type(t).__name__}")
    if input.ndim != other.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions: {input.ndim} and {other.ndim}")
    if input.dtype is not other.dtype:  # (PyTorch does not promote here; autocast's promote rule does, before)
        raise DTypeError(f"{op}: input {describe(input)} and other {describe(other)} must have the same dtype")
    a, b = broadcast_tensors(input, other)
    if dim is None:
        sizes = [i for i, s in enumerate(a.shape) if s == 3]
        if not sizes:
            raise RuntimeError(f"no dimension of size 3 in input: {tuple(a.shape)}")
        dim = sizes[0]
    dim = normalize_dim(dim, a.ndim, op)
    if a.shape[dim] != 3:
        raise RuntimeError(f"{op}: dimension {dim} does not have size 3 ({tuple(a.shape)})")
    return roll(a, -1, dim) * roll(b, -2, dim) - roll(a, -2, dim) * roll(b, -1, dim)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the first of size 3 when None)."""
    if autocast_hook.state.active:
        input, other = autocast_hook.cast("cross", input, other)
    return _cross("cross", input, other, dim)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``zero.linalg.cross``: as cross, along the last dim by default."""
    if autocast_hook.state.active:   # (PyTorch's cross is linalg_cross: one rule for both)
        input, other = autocast_hook.cast("cross", input, other)
    return _cross("linalg.cross", input, other, dim)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each of x2 (..., R, M): (..., P, R)."""
    if autocast_hook.state.active:
        x1, x2 = autocast_hook.cast("cdist", x1, x2)
    for t in (x1, x2):
        if not isinstance(t, Tensor):
            raise TypeError(f"cdist(): expected Tensors, got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{1 if t is x1 else 2} got: {t.dtype}")
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if t is x1 else 2} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    difference = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()            # (..., P, R, M)
    if p == 0:
        # (a count: its gradient is 0, as PyTorch's, but the result is in the graph as there)
        return (difference != 0).to(difference.dtype).sum(-1) + (difference * 0.0).sum(-1)
    if p == math.inf:
        return difference.amax(-1) if difference.shape[-1] else difference.sum(-1)
    if p == 1:
        return difference.sum(-1)
    return _PowerSum.apply(difference, float(p))


class _PowerSum(Op):
    """(sum |d|^p)^(1/p) over the last dim of a non-negative d, with PyTorch's gradient: 0
    where the distance is 0 (the composition would give 0/0)."""

    def forward(self, d: Tensor, p: float) -> Tensor:
        self.p = p
        total = (d.detach() ** p).sum(-1)
        out = total ** (1.0 / p)
        self.save_for_backward(d, out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        d, out = self.saved_tensors
        p = self.p
        distance = out.unsqueeze(-1)
        safe = where(distance == 0, 1.0, distance)
        slope = (d / safe) ** (p - 1)
        slope = where(distance == 0, 0.0, slope)
        return (grad.unsqueeze(-1) * slope, None)



# -- Tensor.unfold: sliding windows as a view ---------------------------------------------------


class Unfold(Op):
    """x.unfold(dim, size, step): dim becomes the window count, a last dim of ``size`` is the
    window; a view (the windows share, and may overlap, x's storage)."""

    def forward(self, x: Tensor, dim: int, size: int, step: int) -> Tensor:
        meta = x._meta
        dim = normalize_dim(dim, len(meta.shape), "unfold")
        length = meta.shape[dim] if meta.shape else 1
        if size > length:
            raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        count = (length - size) // step + 1
        if meta.shape:
            shape = meta.shape[:dim] + (count,) + meta.shape[dim + 1:] + (size,)
            strides = meta.strides[:dim] + (meta.strides[dim] * step,) + meta.strides[dim + 1:] + (meta.strides[dim],)
        else:
            shape, strides = (size,), (1,)
        self.in_shape, self.in_dtype, self.params = meta.shape, meta.dtype, (dim, size, step, count)
        return mark_view(x._view_as(shape, strides, meta.offset), x, (Unfold, (dim, size, step)))

    def backward(self, grad: Tensor) -> Grads:
        dim, size, step, count = self.params
        grad_in = zeros(self.in_shape, dtype=self.in_dtype, device=grad.device)
        if not self.in_shape:
            return (grad.reshape(()) if size else grad_in, None, None, None)
        for j in range(size):   # window element j of every window: positions j, j + step, ... (distinct)
            target = grad_in.narrow(dim, j, (count - 1) * step + 1)
            target = target._view_as(target.shape[:dim] + (count,) + target.shape[dim + 1:],
                                     target._meta.strides[:dim] + (target._meta.strides[dim] * step,)
                                     + target._meta.strides[dim + 1:], target._meta.offset)
            part = grad[..., j]
            grad.device.kernels.add(target._array, part._array, target._array)
        return (grad_in, None, None, None)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of ``size`` elements, ``step`` apart, along ``dimension``, as a view."""
    return Unfold.apply(self, dimension, size, step)
