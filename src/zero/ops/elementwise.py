"""Elementwise ops: each output element depends on the same position of the inputs.

    binary     + - * / ** (Add ... Pow), maximum, minimum: broadcast, a Python number on
               either side, PyTorch's type promotion (``dtypes.result_type``)
    unary      neg, abs, sign, exp, log, sqrt, rsqrt, sin, cos, tanh, and the activations
               sigmoid, relu, silu, gelu
    where      where(condition, a, b)

Binary backward rules compute full-shape gradients and hand them to ``sum_to_shape``.
Backward rules are written with tensor ops (they run under no_grad), so they work on
every device without a line of device code. Each op's functional form (``zero.add``,
``x.add``) is at the end of the file; comparisons are in ``comparison``, clamp and
masked_fill in ``selection``, PyTorch's other math functions in ``extra/``.
"""
from __future__ import annotations

import math
from typing import Any, Literal, overload

from .. import dtypes
from ..autograd.op import Grads, Op
from ..backends.device import Device
from ..dtypes import DType
from ..errors import DTypeError, ValueRangeError, describe
from ..tensors.creation import zeros_like
from ..tensors.meta import TensorMeta
from ..tensors.tensor import Tensor
from .arguments import Number, Operand
from .broadcast import broadcast_shape_of, operand_shape, sum_to_shape
from .conversion import Cast, Copy
from ..autograd import autocast_hook


def _array(x: Operand) -> Any:
    """What a kernel receives for an operand: the array view, or the scalar itself."""
    return x._array if isinstance(x, Tensor) else x


@overload
def _in_dtype(x: Tensor, dtype: DType) -> Tensor: ...
@overload
def _in_dtype(x: Number, dtype: DType) -> Number: ...


def _in_dtype(x: Operand, dtype: DType) -> Operand:
    """A tensor operand converted to the dtype the op computes in (PyTorch computes in the
    promoted dtype: uint8 [2] min int32 -5 is min(2, 251)); a Python number as it is."""
    if isinstance(x, Tensor) and x._meta.dtype is not dtype:
        return x.detach().to(dtype)
    return x


def _device_of(*operands: Operand) -> Device:
    for x in operands:
        if isinstance(x, Tensor):
            return x._meta.device
    raise TypeError("an elementwise op needs at least one tensor operand")


def _dtype_of(x: Operand) -> DType | None:
    return x._meta.dtype if isinstance(x, Tensor) else None


def _check_operand(op_name: str, x: object) -> None:
    if not isinstance(x, (Tensor, bool, int, float)):
        raise TypeError(f"{op_name}: operands must be tensors or Python numbers, got {type(x).__name__}")


# -- binary -----------------------------------------------------------------------------------


_PLAIN_SCALARS = (bool, int, float)


def _unconverted(a: Operand, b: Operand, result_is_float: bool) -> TensorMeta | None:
    """The metadata of the output when the operands need no broadcasting and no conversion:
    two tensors of one shape and dtype, or a tensor and a Python number whose category
    (bool < int < float) is not above the tensor's, which then keeps its dtype. None
    otherwise. The fast path of ``BinaryOp.forward`` (a residual add, ``x * 0.5``), which
    ``allocate``'s general rules would answer the same way, only slower."""
    if isinstance(a, Tensor):
        meta = a._meta
        if isinstance(b, Tensor):
            if b._meta.shape != meta.shape or b._meta.dtype is not meta.dtype:
                return None
        elif type(b) not in _PLAIN_SCALARS or dtypes.scalar_dtype(b).category > meta.dtype.category:
            return None
    elif isinstance(b, Tensor) and type(a) in _PLAIN_SCALARS:
        meta = b._meta
        if dtypes.scalar_dtype(a).category > meta.dtype.category:
            return None
    else:
        return None
    if result_is_float and not meta.dtype.is_floating_point:
        return None
    return meta


class BinaryOp(Op):
    """a (op) b with broadcasting. Subclasses name their kernel and give a backward."""

    kernel = staticmethod(lambda kernels: kernels.add)  # this op's function in a kernels namespace
    result_is_float = False  # true division: int / int -> float

    def forward(self, a: Operand, b: Operand) -> Tensor:
        meta = _unconverted(a, b, self.result_is_float)
        if meta is not None:  # nothing to broadcast or convert: allocate and check nothing more
            out = Tensor._empty(meta.shape, meta.dtype, meta.device)
            self.operands = (a, b)    # as computed with (the subclasses save from these)
            if self.recording:
                self._remember(a, b)
            self.kernel(meta.device.kernels)(_array(a), _array(b), out._array)
            return out
        out = self.allocate(a, b)
        self.operands = converted = (_in_dtype(a, out._meta.dtype), _in_dtype(b, out._meta.dtype))
        if self.recording:
            self._remember(a, b)
        self.kernel(out._meta.device.kernels)(_array(converted[0]), _array(converted[1]), out._array)
        return out

    def _remember(self, a: Operand, b: Operand) -> None:
        """What ``_reduce`` needs in backward (so only when the call is recorded): the
        operands' own shapes and dtypes."""
        self.a_shape, self.b_shape = operand_shape(a), operand_shape(b)
        self.a_dtype, self.b_dtype = _dtype_of(a), _dtype_of(b)

    def allocate(self, a: Operand, b: Operand, dtype: DType | None = None) -> Tensor:
        """Check the operands; the output tensor of their broadcast shape and ``dtype``
        (by default the promoted dtype of the operands)."""
        name = self.op_name
        _check_operand(name, a)
        _check_operand(name, b)
        if dtype is None:
            dtype = dtypes.result_type(a, b)
            if self.result_is_float and not dtype.is_floating_point:
                dtype = dtypes.get_default_dtype()
        return Tensor._empty(broadcast_shape_of(name, a, b), dtype, _device_of(a, b))

    def _reduce(self, grad_a: Tensor | None, grad_b: Tensor | None) -> Grads:
        """Sum each full-shape gradient back to its operand's shape and dtype. A gradient may
        be None where its operand needs none: ``needs_input_grad`` says which are summed."""
        need_a, need_b = self.needs_input_grad
        # (a needed gradient is a tensor by the callers' contract, which mypy cannot follow)
        return (sum_to_shape(grad_a, self.a_shape, self.a_dtype) if need_a else None,  # type: ignore[arg-type]
                sum_to_shape(grad_b, self.b_shape, self.b_dtype) if need_b else None)  # type: ignore[arg-type]


class Add(BinaryOp):
    kernel = staticmethod(lambda kernels: kernels.add)

    def backward(self, grad: Tensor) -> Grads:
        return self._reduce(grad, grad)


class Sub(BinaryOp):
    kernel = staticmethod(lambda kernels: kernels.sub)

    def forward(self, a: Operand, b: Operand) -> Tensor:
        if dtypes.bool_ in (_dtype_of(a), _dtype_of(b)) or isinstance(a, bool) or isinstance(b, bool):
            raise DTypeError(f"sub: subtraction with a bool operand ({describe(a)} - {describe(b)}) is not "
                             "defined (as in PyTorch); to invert a mask use ~ or logical_not(), for the "
                             "difference of two masks logical_xor() (^)")
        return super().forward(a, b)

    def backward(self, grad: Tensor) -> Grads:
        return self._reduce(grad, -grad if self.needs_input_grad[1] else None)


class Mul(BinaryOp):
    kernel = staticmethod(lambda kernels: kernels.mul)

    def forward(self, a: Operand, b: Operand) -> Tensor:
        out = super().forward(a, b)
        a, b = self.operands
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(b if need_a and isinstance(b, Tensor) else None,
                               a if need_b and isinstance(a, Tensor) else None)
        self.a_scalar, self.b_scalar = a, b  # used when the other side is a Python number
        return out

    def backward(self, grad: Tensor) -> Grads:
        b, a = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        grad_a = grad * (b if b is not None else self.b_scalar) if need_a else None
        grad_b = grad * (a if a is not None else self.a_scalar) if need_b else None
        return self._reduce(grad_a, grad_b)


class Div(BinaryOp):
    kernel = staticmethod(lambda kernels: kernels.div)
    result_is_float = True

    def forward(self, a: Operand, b: Operand) -> Tensor:
        out = super().forward(a, b)
        b = self.operands[1]
        self.save_for_backward(b if isinstance(b, Tensor) else None,
                               out if self.needs_input_grad[1] else None)
        self.b_scalar = b
        return out

    def backward(self, grad: Tensor) -> Grads:
        b, out = self.saved_tensors
        divisor = b if b is not None else self.b_scalar
        need_a, need_b = self.needs_input_grad
        grad_a = grad / divisor if need_a else None
        # d(a/b)/db = -a/b^2 = -(out/b), rounded in PyTorch's order (out/b first: no overflow of grad*out)
        grad_b = -grad * (out / divisor) if need_b else None
        return self._reduce(grad_a, grad_b)


class Pow(BinaryOp):
    kernel = staticmethod(lambda kernels: kernels.pow)

    def forward(self, a: Operand, b: Operand) -> Tensor:
        if isinstance(a, Tensor) and a.dtype.category == dtypes.INTEGER and isinstance(b, int) \
                and not isinstance(b, bool) and b < 0:
            raise ValueRangeError(f"pow: integers to negative integer powers are not allowed ({describe(a)} ** {b}); "
                             "make the base floating point with .float()")
        out = super().forward(a, b)
        a, b = self.operands
        self.save_for_backward(a if isinstance(a, Tensor) else None,
                               b if isinstance(b, Tensor) else None,
                               out if self.needs_input_grad[1] else None)
        self.a_scalar, self.b_scalar = a, b
        return out

    def backward(self, grad: Tensor) -> Grads:
        a, b, out = self.saved_tensors
        base = a if a is not None else self.a_scalar
        exponent = b if b is not None else self.b_scalar
        need_a, need_b = self.needs_input_grad
        grad_a = None
        if need_a:
            # x ** 0 has slope 0 everywhere, 0 ** 0 included (not 0 * 0 ** -1 = nan), as in PyTorch.
            if isinstance(exponent, Tensor):
                grad_a = Where.apply(exponent == 0, 0.0, grad * exponent * base ** (exponent - 1))
            else:
                grad_a = grad * exponent * base ** (exponent - 1) if exponent != 0 else grad * 0.0
        grad_b = None
        if need_b:
            if isinstance(base, Tensor):
                # 0 ** b has slope 0 in b for b >= 0 (not 0 * log 0 = nan), as in PyTorch.
                grad_b = Where.apply((base == 0).logical_and(exponent >= 0), 0.0, grad * out * base.log())
            else:
                grad_b = grad * out * _scalar_log(base)
        return self._reduce(grad_a, grad_b)


def _scalar_log(value: float) -> float:
    return math.log(value) if value > 0 else float("nan")


class SavingBinaryOp(BinaryOp):
    """A binary op whose backward needs both operands (as computed: in the result's dtype)
    and the output."""

    def forward(self, a: Operand, b: Operand) -> Tensor:
        out = super().forward(a, b)
        a, b = self.operands
        self.save_for_backward(a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None, out)
        self.a_scalar, self.b_scalar = a, b  # used when that side is a Python number
        return out

    def saved_operands(self) -> tuple[Operand, Operand, Tensor]:
        """(a, b, out) as saved, with the Python number where an operand was one."""
        a, b, out = self.saved_tensors
        return (a if a is not None else self.a_scalar, b if b is not None else self.b_scalar, out)


class Maximum(SavingBinaryOp):
    kernel = staticmethod(lambda kernels: kernels.maximum)

    def backward(self, grad: Tensor) -> Grads:
        return _pick_gradient(self, grad)


class Minimum(Maximum):
    kernel = staticmethod(lambda kernels: kernels.minimum)


def _pick_gradient(op: Maximum, grad: Tensor) -> Grads:
    """maximum/minimum: the gradient goes to the operand that was picked, ties split it in
    half between both, and a NaN passes it on (PyTorch's rule). The operands are compared
    with each other, never with the output (which may be rounded to a narrower dtype), and
    the gradient is selected, not multiplied by a mask (an infinite gradient times 0 would
    be NaN)."""
    a, b, _ = op.saved_tensors
    a = a if a is not None else op.a_scalar  # (saved in the dtype it was computed in)
    b = b if b is not None else op.b_scalar
    larger = (a < b) if isinstance(op, Minimum) else (a > b)     # where a was picked alone
    smaller = (a > b) if isinstance(op, Minimum) else (a < b)    # where b was
    tie = a == b
    half = grad * 0.5
    zero = 0.0
    grad_a = Where.apply(tie, half, Where.apply(smaller, zero, grad)) if op.needs_input_grad[0] else None
    grad_b = Where.apply(tie, half, Where.apply(larger, zero, grad)) if op.needs_input_grad[1] else None
    return op._reduce(grad_a, grad_b)


# -- unary ------------------------------------------------------------------------------------


class UnaryOp(Op):
    """f(x) elementwise. A subclass names its kernel and writes f's derivative in terms of
    what it saves: the input x (``saves = "input"``) or the output f(x) (``"output"``);
    backward is then grad * f'(x). An op that saves nothing (``None``: a constant slope, or
    no gradient) writes its own backward.

    ``float_only`` ops (exp, log, ...) promote integer and bool inputs to the default
    float dtype, as PyTorch does."""

    kernel = staticmethod(lambda kernels: kernels.copy)  # this op's function in a kernels namespace
    float_only = True
    saves: Literal["input", "output"] | None = "input"

    def forward(self, x: Tensor) -> Tensor:
        out = self.allocate(x)
        if out._meta.dtype is not x._meta.dtype:
            x = Cast.apply(x, out._meta.dtype)  # compute in the result's float type, not the input's
        self.kernel(x._meta.device.kernels)(x._array, out._array)
        if self.saves is not None:
            self.save_for_backward(x if self.saves == "input" else out)
        return out

    def allocate(self, x: Tensor) -> Tensor:
        """Check the operand; the output tensor (the input's shape, the result dtype)."""
        if not isinstance(x, Tensor):
            raise TypeError(f"{self.op_name}: expected a tensor, got {type(x).__name__}")
        dtype = x._meta.dtype
        if self.float_only and not dtype.is_floating_point:
            dtype = dtypes.get_default_dtype()
        return Tensor._empty(x._meta.shape, dtype, x._meta.device)

    def derivative(self, saved: Tensor) -> Tensor:
        """f'(x) elementwise, from the saved input or output. A bool tensor
        means a slope of 1 where True and 0 elsewhere: the gradient is then selected, not
        multiplied (an infinite gradient times 0 would be nan; PyTorch gives 0)."""
        raise NotImplementedError

    def backward(self, grad: Tensor) -> Grads:
        slope = self.derivative(self.saved_tensors[0])
        if isinstance(slope, Tensor) and slope.dtype is dtypes.bool_:
            return (Where.apply(slope, grad, 0.0),)
        return (grad * slope,)


def _refuse_bool(op: Op, x: Tensor, hint: str) -> None:
    if isinstance(x, Tensor) and x.dtype is dtypes.bool_:
        raise DTypeError(f"{op.op_name}: not defined for a bool tensor ({describe(x)}), as in PyTorch; {hint}")


class Neg(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.neg)
    float_only, saves = False, None

    def allocate(self, x: Tensor) -> Tensor:
        if isinstance(x, Tensor) and x.dtype is dtypes.bool_:
            raise DTypeError("neg: negation of a bool tensor is not defined; use logical_not()")
        return super().allocate(x)

    def backward(self, grad: Tensor) -> Grads:
        return (-grad,)


class Abs(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.abs)
    float_only = False

    def allocate(self, x: Tensor) -> Tensor:
        _refuse_bool(self, x, "it is the bool itself")
        return super().allocate(x)

    def derivative(self, x: Tensor) -> Tensor:
        return x.sign()


class Sign(UnaryOp):
    """-1, 0 or 1 (the sign of a bool is itself); its gradient is 0 everywhere."""

    kernel = staticmethod(lambda kernels: kernels.sign)
    float_only, saves = False, None

    def forward(self, x: Tensor) -> Tensor:
        if isinstance(x, Tensor) and x.dtype is dtypes.bool_:
            return Copy.apply(x)
        return super().forward(x)

    def backward(self, grad: Tensor) -> Grads:
        return (zeros_like(grad),)


class Exp(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.exp)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return out                        # exp' = exp


class Log(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.log)

    def derivative(self, x: Tensor) -> Tensor:
        return 1.0 / x


class Sqrt(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.sqrt)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return 0.5 / out                  # 1 / (2 sqrt(x))


class Rsqrt(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.rsqrt)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return -0.5 * out * out * out     # d x^-1/2 = -1/2 x^-3/2


class Sin(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.sin)

    def derivative(self, x: Tensor) -> Tensor:
        return x.cos()


class Cos(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.cos)

    def derivative(self, x: Tensor) -> Tensor:
        return -x.sin()


class Tanh(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.tanh)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return 1 - out * out


class Sigmoid(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.sigmoid)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return out * (1 - out)


class Relu(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.relu)
    float_only, saves = False, "output"

    def allocate(self, x: Tensor) -> Tensor:
        _refuse_bool(self, x, "convert the mask with .float() first")
        return super().allocate(x)

    def backward(self, grad: Tensor) -> Grads:
        (out,) = self.saved_tensors
        grad_in = Tensor._empty(out._meta.shape, grad._meta.dtype, grad._meta.device)
        # 0 where out <= 0, else grad: PyTorch's rule (a NaN output passes the gradient on)
        grad._meta.device.kernels.relu_backward(grad._array, out._array, grad_in._array)
        return (grad_in,)


class Silu(UnaryOp):
    """x * sigmoid(x); d/dx = s (1 + x (1 - s)) with s = sigmoid(x)."""

    kernel = staticmethod(lambda kernels: kernels.silu)

    def derivative(self, x: Tensor) -> Tensor:
        s = x.sigmoid()
        return s * (1 + x * (1 - s))


class Gelu(UnaryOp):
    """GELU, exact (x * Phi(x)) or ``approximate="tanh"``; forward and backward are kernels."""

    def forward(self, x: Tensor, approximate: str = "none") -> Tensor:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        out = self.allocate(x)
        x._meta.device.kernels.gelu(x._array, out._array, approximate=approximate)
        self.approximate = approximate
        self.save_for_backward(x)
        return out

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        grad = grad.contiguous()
        out = Tensor._empty(x.shape, x.dtype, x.device)
        x.device.kernels.gelu_backward(grad._array, x._array, out._array, approximate=self.approximate)
        return (out,)



# -- three operands ---------------------------------------------------------------------------


class Where(Op):
    """where(condition, a, b): a where condition holds, else b (all three broadcast)."""

    def forward(self, condition: Tensor, a: Operand, b: Operand) -> Tensor:
        if not isinstance(condition, Tensor) or condition.dtype is not dtypes.bool_:
            raise DTypeError(f"where: condition must be a bool tensor, got "
                             f"{describe(condition)}")
        dtype = dtypes.result_type(a, b)
        shape = broadcast_shape_of("where", condition, a, b)
        out = Tensor._empty(shape, dtype, condition.device)
        condition.device.kernels.where(condition._array, _array(a), _array(b), out._array)
        self.save_for_backward(condition)
        self.a_shape, self.b_shape = operand_shape(a), operand_shape(b)
        self.a_dtype, self.b_dtype = _dtype_of(a), _dtype_of(b)
        return out

    def backward(self, grad: Tensor) -> Grads:
        (condition,) = self.saved_tensors
        _, need_a, need_b = self.needs_input_grad
        zero = grad.new_zeros(())
        grad_a = sum_to_shape(Where.apply(condition, grad, zero), self.a_shape, self.a_dtype) if need_a else None
        grad_b = sum_to_shape(Where.apply(condition, zero, grad), self.b_shape, self.b_dtype) if need_b else None
        return None, grad_a, grad_b


# -- the functional forms (zero.add, and x.add through ops/tensor_methods.py) ---------------------


def _check_alpha(op: str, input: Operand, other: Operand, alpha: Number) -> None:
    """A float alpha with integer operands: PyTorch's RuntimeError (not a silent truncation)."""
    if isinstance(alpha, float) and not any(isinstance(t, Tensor) and t.dtype.is_floating_point
                                            for t in (input, other)):
        if not any(isinstance(t, (float, complex)) for t in (input, other)):
            raise DTypeError(f"{op}: alpha {alpha} is a float, but the operands are integers")


def add(input: Operand, other: Operand, *, alpha: Number = 1) -> Tensor:
    """input + alpha * other."""
    _check_alpha("add", input, other, alpha)
    return Add.apply(input, other if alpha == 1 else other * alpha)


def sub(input: Operand, other: Operand, *, alpha: Number = 1) -> Tensor:
    """input - alpha * other."""
    _check_alpha("sub", input, other, alpha)
    return Sub.apply(input, other if alpha == 1 else other * alpha)


def mul(input: Operand, other: Operand) -> Tensor:
    return Mul.apply(input, other)


def true_divide(input: Operand, other: Operand) -> Tensor:
    """input / other, in floating point (integers divide to the default float dtype)."""
    return Div.apply(input, other)


def pow(input: Operand, exponent: Operand) -> Tensor:
    if autocast_hook.state.active:
        input, exponent = autocast_hook.cast("pow", input, exponent)
    return Pow.apply(input, exponent)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return Maximum.apply(input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return Minimum.apply(input, other)


def neg(input: Tensor) -> Tensor:
    return Neg.apply(input)


def abs(input: Tensor) -> Tensor:
    return Abs.apply(input)


def sign(input: Tensor) -> Tensor:
    return Sign.apply(input)


def positive(input: Tensor) -> Tensor:
    """The tensor itself (PyTorch's +x), refused for bool as in PyTorch."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:
        raise DTypeError(f"positive: the + operator is not defined for a bool tensor ({describe(input)}), "
                         "as in PyTorch")
    return input


def square(input: Tensor) -> Tensor:
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:
        input = input.to(dtypes.int64)   # PyTorch squares a bool tensor as int64
    return Mul.apply(input, input)


def exp(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("exp", input)
    return Exp.apply(input)


def log(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("log", input)
    return Log.apply(input)


def sqrt(input: Tensor) -> Tensor:
    return Sqrt.apply(input)


def rsqrt(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("rsqrt", input)
    return Rsqrt.apply(input)


def sin(input: Tensor) -> Tensor:
    return Sin.apply(input)


def cos(input: Tensor) -> Tensor:
    return Cos.apply(input)


def tanh(input: Tensor) -> Tensor:
    return Tanh.apply(input)


def sigmoid(input: Tensor) -> Tensor:
    return Sigmoid.apply(input)


def relu(input: Tensor) -> Tensor:
    return Relu.apply(input)


def silu(input: Tensor) -> Tensor:
    return Silu.apply(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return Gelu.apply(input, approximate)


def where(condition: Tensor, input: Operand, other: Operand) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (all three broadcast)."""
    return Where.apply(condition, input, other)


def keep_where(input: Tensor, condition: Tensor, other: Operand) -> Tensor:
    """``x.where(condition, other)``: ``where(condition, x, other)``."""
    return Where.apply(condition, input, other)


# PyTorch's other names for the same functions
subtract, multiply, negative, absolute, sgn = sub, mul, neg, abs, sign
