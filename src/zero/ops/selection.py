"""Selection by a bound or a mask: clamp (clip) and masked_fill.

``clamp`` with number bounds is one op (``Clamp``); with tensor bounds it is a maximum and
a minimum whose gradients follow PyTorch's clamp rule (``ClampMin``, ``ClampMax``).
"""
from __future__ import annotations

from .. import dtypes
from ..autograd.op import Grads, Op
from ..errors import DTypeError, ValueRangeError
from ..tensors.tensor import Tensor
from .arguments import Number, Operand, fill_value
from .broadcast import broadcast_shape_of, sum_to_shape
from .elementwise import Maximum, Where


class Clamp(Op):
    """clamp(x, min, max) with Python-number bounds; the gradient passes where x is inside."""

    def forward(self, x: Tensor, low: Number | None, high: Number | None) -> Tensor:
        if low is None and high is None:
            raise ValueRangeError("clamp: at least one of min and max must be given")
        dtype = dtypes.result_type(x, *(v for v in (low, high) if v is not None))
        out = Tensor._empty(x.shape, dtype, x.device)
        x.device.kernels.clamp(x._array, low, high, out._array)
        self.save_for_backward(x)
        self.low, self.high = low, high
        return out

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        inside: Tensor | None = None
        if self.low is not None:
            inside = x >= self.low
        if self.high is not None:
            upper = x <= self.high
            inside = upper if inside is None else inside.logical_and(upper)
        return (Where.apply(inside, grad, 0.0), None, None)  # selected: inf * 0 would be nan


class MaskedFill(Op):
    """masked_fill(x, mask, value): value where mask holds; x and mask broadcast together
    (the result may be larger than x, as in PyTorch; the in-place form refuses that)."""

    def forward(self, x: Tensor, mask: Tensor, value: Number | Tensor) -> Tensor:
        if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
            raise DTypeError("masked_fill: mask must be a bool tensor")
        shape = broadcast_shape_of("masked_fill", x, mask)
        value = fill_value("masked_fill", value, x.dtype)
        out = Tensor._empty(shape, x.dtype, x.device)
        x.device.kernels.where(mask._array, value, x._array, out._array)
        self.save_for_backward(mask)
        self.x_shape = x.shape
        return out

    def backward(self, grad: Tensor) -> Grads:
        (mask,) = self.saved_tensors
        return (sum_to_shape(Where.apply(mask, grad.new_zeros(()), grad), self.x_shape), None, None)


class ClampMin(Maximum):
    """clamp(x, min=bound) with a tensor bound: maximum(x, bound), but the gradient goes
    whole to x where x >= bound (ties included) and to the bound where x < bound; a NaN
    passes it to neither (PyTorch's clamp rule, unlike maximum's split ties)."""

    def backward(self, grad: Tensor) -> Grads:
        x, saved_bound, _ = self.saved_tensors  # (x is the input: always a tensor)
        bound = saved_bound if saved_bound is not None else self.b_scalar
        return self._reduce(Where.apply(self.x_kept(x, bound), grad, 0.0),
                            Where.apply(self.bound_kept(x, bound), grad, 0.0))

    def x_kept(self, x: Tensor, bound: Operand) -> Tensor:
        return x >= bound

    def bound_kept(self, x: Tensor, bound: Operand) -> Tensor:
        return x < bound


class ClampMax(ClampMin):
    """clamp(x, max=bound) with a tensor bound: minimum(x, bound), PyTorch's gradient rule."""

    kernel = staticmethod(lambda kernels: kernels.minimum)

    def x_kept(self, x: Tensor, bound: Operand) -> Tensor:
        return x <= bound

    def bound_kept(self, x: Tensor, bound: Operand) -> Tensor:
        return x > bound


# -- the functional forms (zero.clamp, and x.clamp through ops/tensor_methods.py) ----------------


def clamp(input: Tensor, min: Tensor | Number | None = None,
          max: Tensor | Number | None = None) -> Tensor:
    """Each element kept inside [min, max]: with number bounds one op (``Clamp``), with
    tensor bounds a maximum and a minimum (``ClampMin``, ``ClampMax``)."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input
        if min is not None:
            out = ClampMin.apply(out, min)
        if max is not None:
            out = ClampMax.apply(out, max)
        return out
    return Clamp.apply(input, min, max)


def clamp_min(input: Tensor, min: Tensor | Number) -> Tensor:
    return clamp(input, min, None)


def clamp_max(input: Tensor, max: Tensor | Number) -> Tensor:
    return clamp(input, None, max)


def masked_fill(input: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    """``value`` where ``mask`` holds, else ``input`` (mask broadcasts to input)."""
    return MaskedFill.apply(input, mask, value)


clip = clamp
