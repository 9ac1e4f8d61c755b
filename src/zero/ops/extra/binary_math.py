"""More elementwise functions of two or three tensors, PyTorch's: atan2, hypot, logaddexp,
xlogy, fmax/fmin, the rounded divisions and remainders, lerp, addcmul and addcdiv.

All broadcast (NumPy's rule), accept a Python number for a tensor operand, promote as
PyTorch does (``dtypes.result_type``) and sum each gradient back to its operand's shape.

    atan2(a, b)        angle of (b, a)         d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
                                               (0 at a = b = 0, as in PyTorch)
    hypot(a, b)        sqrt(a^2 + b^2)         d/da = a / out (nan at 0, as in PyTorch)
    logaddexp(a, b)    log(e^a + e^b)          d/da = e^a / (e^a + e^b) = sigmoid(a - b)
    xlogy(x, y)        x log y, 0 at x = 0     d/dx = log y (0 where x = 0 and y <= 0), d/dy = x / y
    fmax, fmin         max/min ignoring NaN    the gradient goes to the picked operand (ties: a)
    floor_divide(a, b) floor(a / b)            Python's //: -7 // 2 = -4; gradient 0
    div(.., "trunc")   trunc(a / b)            C's: -7 / 2 -> -3; gradient 0
    remainder(a, b)    a - b floor(a / b)      Python's %: the sign of b; d/db = -floor(a / b)
    fmod(a, b)         a - b trunc(a / b)      C's fmod: the sign of a;   d/db = -trunc(a / b)
    lerp(s, e, w)      s + w (e - s)           d/ds = 1 - w, d/de = w, d/dw = e - s
    addcmul(x, t1, t2, value)   x + value t1 t2
    addcdiv(x, t1, t2, value)   x + value t1 / t2

Integer division by zero raises ZeroDivisionError (PyTorch's CPU error), where NumPy would
give 0 with a warning; float division by zero gives inf or nan, as everywhere. The
functional forms (``zero.atan2``, and ``x.atan2``, ``x.atan2_``, ``x // y`` through
``ops/tensor_methods.py``) are at the end of the file.
"""
from __future__ import annotations

import math

from ... import dtypes
from ...autograd.op import Grads, Op
from ...dtypes import DType
from ...errors import DTypeError, describe
from ...tensors.creation import zeros_like
from ...tensors.tensor import Tensor
from ..arguments import check_floats
from ..broadcast import broadcast_shape_of, operand_shape, sum_to_shape
from ..arguments import Number, Operand
from ..comparison import LogicalAnd
from ..elementwise import BinaryOp, Div, SavingBinaryOp, Sigmoid, Where, _array, _dtype_of, _in_dtype
from ..inplace import apply_, true_divide_
from ...autograd import autocast_hook


def _isnan(x: Operand) -> Tensor | bool:
    return x.isnan() if isinstance(x, Tensor) else math.isnan(x)


class Atan2(SavingBinaryOp):
    kernel = staticmethod(lambda kernels: kernels.arctan2)
    result_is_float = True

    def backward(self, grad: Tensor) -> Grads:
        a, b, _ = self.saved_operands()
        squares = a * a + b * b
        scale = Where.apply(squares == 0, 0.0, grad / squares)  # (selected: 0 / 0 would be nan)
        return self._reduce(scale * b, -scale * a)


class Hypot(SavingBinaryOp):
    kernel = staticmethod(lambda kernels: kernels.hypot)
    result_is_float = True

    def backward(self, grad: Tensor) -> Grads:
        a, b, out = self.saved_operands()
        return self._reduce(grad * a / out, grad * b / out)


class Logaddexp(SavingBinaryOp):
    kernel = staticmethod(lambda kernels: kernels.logaddexp)
    result_is_float = True

    def backward(self, grad: Tensor) -> Grads:
        a, b, _ = self.saved_operands()
        return self._reduce(grad * Sigmoid.apply(a - b), grad * Sigmoid.apply(b - a))  # (a or b is a tensor)


class Xlogy(SavingBinaryOp):
    kernel = staticmethod(lambda kernels: kernels.xlogy)
    result_is_float = True

    def backward(self, grad: Tensor) -> Grads:
        x, y, _ = self.saved_operands()
        need_x, need_y = self.needs_input_grad
        grad_x = Where.apply(LogicalAnd.apply(x == 0, y <= 0), 0.0, Xlogy.apply(grad, y)) if need_x else None
        grad_y = grad * x / y if need_y else None
        return self._reduce(grad_x, grad_y)


class Fmax(SavingBinaryOp):
    """maximum that ignores a NaN (NaN only where both are); the gradient goes to a where a
    was picked (ties included, and where b is NaN), to b elsewhere (PyTorch's rule)."""

    kernel = staticmethod(lambda kernels: kernels.fmax)

    def backward(self, grad: Tensor) -> Grads:
        a, b, _ = self.saved_operands()
        a_picked = self.a_at_least_b(a, b)
        a_picked = a_picked.logical_or(_isnan(b)) if isinstance(a_picked, Tensor) else _isnan(b)
        return self._reduce(Where.apply(a_picked, grad, 0.0), Where.apply(a_picked, 0.0, grad))

    def a_at_least_b(self, a: Operand, b: Operand) -> Tensor | bool:
        return a >= b


class Fmin(Fmax):
    kernel = staticmethod(lambda kernels: kernels.fmin)

    def a_at_least_b(self, a: Operand, b: Operand) -> Tensor | bool:
        return a <= b


# -- rounded division and remainders --------------------------------------------------------------


class IntegerRounding(BinaryOp):
    """A division that rounds (floor_divide, div(rounding_mode=...)) or its remainder: bools
    are refused, and integer division by zero raises instead of giving NumPy's 0."""

    def forward(self, a: Operand, b: Operand) -> Tensor:
        dtype = dtypes.result_type(a, b)
        if dtype is dtypes.bool_:
            raise DTypeError(f"{self.op_name}: not defined for two bool operands ({describe(a)}, {describe(b)}), "
                             "as in PyTorch; convert them with .long() first")
        if dtype.category == dtypes.INTEGER:
            divisor = _in_dtype(b, dtype)
            has_zero = divisor.device.kernels.any_zero(divisor._array) if isinstance(divisor, Tensor) else divisor == 0
            if has_zero:
                raise ZeroDivisionError(f"{self.op_name}: integer division by zero ({describe(a)} by "
                                        f"{describe(b)} holding a 0)")
        return super().forward(a, b)


class FloorDivide(IntegerRounding):
    kernel = staticmethod(lambda kernels: kernels.floor_divide)

    def backward(self, grad: Tensor) -> Grads:
        return self._reduce(zeros_like(grad), zeros_like(grad))


class TruncDivide(FloorDivide):
    kernel = staticmethod(lambda kernels: kernels.truncate_divide)


class Remainder(IntegerRounding):
    kernel = staticmethod(lambda kernels: kernels.remainder)
    quotient = FloorDivide  # a = quotient * b + remainder

    def forward(self, a: Operand, b: Operand) -> Tensor:
        out = super().forward(a, b)
        a, b = self.operands
        self.save_for_backward(a if isinstance(a, Tensor) and self.needs_input_grad[1] else None,
                               b if isinstance(b, Tensor) and self.needs_input_grad[1] else None)
        self.a_scalar, self.b_scalar = a, b
        return out

    def backward(self, grad: Tensor) -> Grads:
        need_b = self.needs_input_grad[1]
        grad_b = None
        if need_b:
            a, b = self.saved_tensors
            grad_b = -grad * self.quotient.apply(a if a is not None else self.a_scalar, b)
        return self._reduce(grad, grad_b)


class Fmod(Remainder):
    kernel = staticmethod(lambda kernels: kernels.fmod)
    quotient = TruncDivide


ROUNDING_MODES: dict[str | None, type[IntegerRounding] | None] = {
    None: None, "trunc": TruncDivide, "floor": FloorDivide}


# -- three operands -------------------------------------------------------------------------------


class TernaryOp(Op):
    """out = f(x, y, z) with all three broadcast; backward sums each gradient back."""

    def allocate(self, dtype: DType, *operands: Operand) -> Tensor:
        self.shapes = [operand_shape(x) for x in operands]
        self.dtypes = [_dtype_of(x) for x in operands]
        device = next(x.device for x in operands if isinstance(x, Tensor))
        return Tensor._empty(broadcast_shape_of(self.op_name, *operands), dtype, device)

    def reduce(self, *grads: Tensor | None) -> Grads:
        return tuple(sum_to_shape(g, shape, dtype) if need and g is not None else None
                     for g, shape, dtype, need in zip(grads, self.shapes, self.dtypes, self.needs_input_grad))


class Lerp(TernaryOp):
    def forward(self, start: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
        check_floats("lerp", start=start, end=end, weight=weight if isinstance(weight, Tensor) else None)
        if not isinstance(weight, (Tensor, float, int)) or isinstance(weight, bool):
            raise TypeError(f"lerp: weight must be a tensor or a number, got {describe(weight)}")
        out = self.allocate(start.dtype, start, end, weight)
        start.device.kernels.lerp(start._array, end._array, _array(weight), out._array)
        self.save_for_backward(start, end, weight if isinstance(weight, Tensor) else None)
        self.weight = weight
        return out

    def backward(self, grad: Tensor) -> Grads:
        start, end, saved_weight = self.saved_tensors
        weight = saved_weight if saved_weight is not None else self.weight
        need_start, need_end, need_weight = self.needs_input_grad
        return self.reduce(grad * (1 - weight) if need_start else None, grad * weight if need_end else None,
                           grad * (end - start) if need_weight else None)


class Addcmul(TernaryOp):
    """x + value * t1 * t2 (value a number, in the operands' promoted dtype)."""

    kernel = staticmethod(lambda kernels: kernels.addcmul)

    def forward(self, x: Tensor, tensor1: Tensor, tensor2: Tensor, value: Number = 1) -> Tensor:
        for name, t in (("input", x), ("tensor1", tensor1), ("tensor2", tensor2)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{self.op_name}: {name} must be a tensor, got {describe(t)}")
        dtype = self.result_dtype(x, tensor1, tensor2)
        if not isinstance(value, (bool, int, float)):
            raise TypeError(f"{self.op_name}: value must be a number, got {describe(value)}")
        if isinstance(value, float) and not dtype.is_floating_point:
            raise DTypeError(f"{self.op_name}: a float value ({value!r}) for {dtype.name} operands; "
                             "value must be an integer for integer tensors (as in PyTorch)")
        out = self.allocate(dtype, x, tensor1, tensor2)
        x, tensor1, tensor2 = (_in_dtype(t, dtype) for t in (x, tensor1, tensor2))
        self.kernel(out.device.kernels)(x._array, tensor1._array, tensor2._array, value, out._array)
        self.save_for_backward(tensor1, tensor2)
        self.value = value
        return out

    def result_dtype(self, x: Tensor, tensor1: Tensor, tensor2: Tensor) -> DType:
        return dtypes.result_type(x, tensor1, tensor2)

    def backward(self, grad: Tensor) -> Grads:
        tensor1, tensor2 = self.saved_tensors
        _, need_1, need_2 = self.needs_input_grad
        scaled = grad * self.value
        return self.reduce(grad, scaled * tensor2 if need_1 else None, scaled * tensor1 if need_2 else None)


class Addcdiv(Addcmul):
    """x + value * t1 / t2; two integer tensors are refused (PyTorch removed integer addcdiv)."""

    kernel = staticmethod(lambda kernels: kernels.addcdiv)

    def result_dtype(self, x: Tensor, tensor1: Tensor, tensor2: Tensor) -> DType:
        if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
            raise DTypeError(f"addcdiv: integer division of tensor1 {describe(tensor1)} by tensor2 "
                             f"{describe(tensor2)} is not supported (as in PyTorch); use "
                             "input + value * tensor1.div(tensor2, rounding_mode='trunc'), or floats")
        return super().result_dtype(x, tensor1, tensor2)

    def backward(self, grad: Tensor) -> Grads:
        tensor1, tensor2 = self.saved_tensors
        _, need_1, need_2 = self.needs_input_grad
        scaled = grad * self.value / tensor2
        return self.reduce(grad, scaled if need_1 else None, -scaled * tensor1 / tensor2 if need_2 else None)


# -- the functional forms (zero.atan2, and x.atan2 through ops/tensor_methods.py) ----------------


def atan2(input: Operand, other: Operand) -> Tensor:
    if autocast_hook.state.active:
        input, other = autocast_hook.cast("atan2", input, other)
    return Atan2.apply(input, other)


def hypot(input: Operand, other: Operand) -> Tensor:
    return Hypot.apply(input, other)


def logaddexp(input: Operand, other: Operand) -> Tensor:
    return Logaddexp.apply(input, other)


def xlogy(input: Operand, other: Operand) -> Tensor:
    return Xlogy.apply(input, other)


def fmax(input: Operand, other: Operand) -> Tensor:
    return Fmax.apply(input, other)


def fmin(input: Operand, other: Operand) -> Tensor:
    return Fmin.apply(input, other)


def floor_divide(input: Operand, other: Operand) -> Tensor:
    return FloorDivide.apply(input, other)


def remainder(input: Operand, other: Operand) -> Tensor:
    return Remainder.apply(input, other)


def fmod(input: Operand, other: Operand) -> Tensor:
    return Fmod.apply(input, other)


def div(input: Operand, other: Operand, *, rounding_mode: str | None = None) -> Tensor:
    """input / other; with ``rounding_mode`` "trunc" (toward zero) or "floor" (down), rounded,
    in the operands' promoted dtype (integers stay integers)."""
    if rounding_mode not in ROUNDING_MODES:
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    op = ROUNDING_MODES[rounding_mode]
    return Div.apply(input, other) if op is None else op.apply(input, other)


def div_(input: Tensor, other: Operand, *, rounding_mode: str | None = None) -> Tensor:
    """``div`` in place: one kernel writing into ``input`` when not rounded."""
    if rounding_mode is None:
        return true_divide_(input, other)
    return apply_(input, "div_", lambda old: div(old, other, rounding_mode=rounding_mode), (other,))


def lerp(input: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    return Lerp.apply(input, end, weight)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    if autocast_hook.state.active:
        input, tensor1, tensor2 = autocast_hook.cast("addcmul", input, tensor1, tensor2)
    return Addcmul.apply(input, tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    if autocast_hook.state.active:
        input, tensor1, tensor2 = autocast_hook.cast("addcdiv", input, tensor1, tensor2)
    return Addcdiv.apply(input, tensor1, tensor2, value=value)


divide, arctan2 = div, atan2
