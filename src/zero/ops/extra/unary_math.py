"""More elementwise functions of one tensor, PyTorch's: logarithms and exponentials, the
trigonometric and hyperbolic functions and their inverses, the error function, rounding,
the floating-point predicates (isnan ...) and nan_to_num.

Each is a ``UnaryOp`` (ops/elementwise.py): a kernel name and the derivative, written from
what the op saves (the input x or the output y):

    log1p   1 / (1 + x)          expm1   y + 1              reciprocal   -y^2
    log2    1 / (x ln 2)         log10   1 / (x ln 10)      exp2         y ln 2
    tan     1 + y^2              sinh    cosh x             cosh         sinh x
    asin    1 / sqrt(1 - x^2)    acos    -1 / sqrt(1 - x^2) atan         1 / (1 + x^2)
    asinh   1 / sqrt(x^2 + 1)    acosh   1 / sqrt(x^2 - 1)  atanh        1 / (1 - x^2)
    erf     2/sqrt(pi) e^(-x^2)  erfc    -2/sqrt(pi) e^(-x^2)
    erfinv  sqrt(pi)/2 e^(y^2)   frac    1                  nan_to_num   1 where x is finite, else 0

The rounding functions (floor, ceil, round, trunc) are steps: their derivative is 0
wherever it exists, and PyTorch's gradient is 0 everywhere; on integer tensors they return
the integers unchanged. Integer and bool inputs of the other (float-only) functions
compute in the default float dtype, as in PyTorch. The functional forms (``zero.log1p``,
and ``x.log1p``, ``x.log1p_`` through ``ops/tensor_methods.py``) are at the end of the file.
"""
from __future__ import annotations

import math

from ... import dtypes
from ...autograd.op import Grads
from ...errors import DTypeError, describe
from ...tensors.creation import zeros_like
from ...tensors.tensor import Tensor
from ..conversion import Copy
from ..elementwise import UnaryOp, _refuse_bool
from ...autograd import autocast_hook

SQRT_PI = math.sqrt(math.pi)


# -- logarithms and exponentials ----------------------------------------------------------------


class Log1p(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.log1p)

    def derivative(self, x: Tensor) -> Tensor:
        return 1.0 / (1.0 + x)


class Expm1(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.expm1)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return out + 1.0


class Log2(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.log2)

    def derivative(self, x: Tensor) -> Tensor:
        return 1.0 / (x * math.log(2.0))


class Log10(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.log10)

    def derivative(self, x: Tensor) -> Tensor:
        return 1.0 / (x * math.log(10.0))


class Exp2(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.exp2)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return out * math.log(2.0)


class Reciprocal(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.reciprocal)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return -(out * out)


# -- trigonometric and hyperbolic ---------------------------------------------------------------


class Tan(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.tan)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return 1.0 + out * out


class Asin(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.arcsin)

    def derivative(self, x: Tensor) -> Tensor:
        return (1.0 - x * x).rsqrt()


class Acos(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.arccos)

    def derivative(self, x: Tensor) -> Tensor:
        return -(1.0 - x * x).rsqrt()


class Atan(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.arctan)

    def derivative(self, x: Tensor) -> Tensor:
        return 1.0 / (1.0 + x * x)


class Sinh(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.sinh)

    def derivative(self, x: Tensor) -> Tensor:
        return Cosh.apply(x)


class Cosh(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.cosh)

    def derivative(self, x: Tensor) -> Tensor:
        return Sinh.apply(x)


class Asinh(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.arcsinh)

    def derivative(self, x: Tensor) -> Tensor:
        return (x * x + 1.0).rsqrt()


class Acosh(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.arccosh)

    def derivative(self, x: Tensor) -> Tensor:
        return (x * x - 1.0).rsqrt()


class Atanh(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.arctanh)

    def derivative(self, x: Tensor) -> Tensor:
        return 1.0 / (1.0 - x * x)


# -- the error function ---------------------------------------------------------------------------


class Erf(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.erf)

    def derivative(self, x: Tensor) -> Tensor:
        return (-(x * x)).exp() * (2.0 / SQRT_PI)


class Erfc(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.erfc)

    def derivative(self, x: Tensor) -> Tensor:
        return (-(x * x)).exp() * (-2.0 / SQRT_PI)


class Erfinv(UnaryOp):
    kernel = staticmethod(lambda kernels: kernels.erfinv)
    saves = "output"

    def derivative(self, out: Tensor) -> Tensor:
        return (out * out).exp() * (SQRT_PI / 2.0)


# -- rounding -------------------------------------------------------------------------------------


class Rounding(UnaryOp):
    """A step function (floor, ceil, trunc, round): integers pass unchanged (a copy), bools
    are refused (as in PyTorch), and the gradient is 0 everywhere."""

    float_only, saves = False, None

    def forward(self, x: Tensor) -> Tensor:
        _refuse_bool(self, x, "convert it with .float() or .long() first")
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            return Copy.apply(x)
        return super().forward(x)

    def backward(self, grad: Tensor) -> Grads:
        return (zeros_like(grad),)


class Floor(Rounding):
    kernel = staticmethod(lambda kernels: kernels.floor)


class Ceil(Rounding):
    kernel = staticmethod(lambda kernels: kernels.ceil)


class Trunc(Rounding):
    kernel = staticmethod(lambda kernels: kernels.trunc)


class Round(Rounding):
    """Round half to even (2.5 -> 2, 3.5 -> 4), at ``decimals`` digits after the point
    (negative: before it), computed as PyTorch does: rint(x * 10^d) / 10^d."""

    kernel = staticmethod(lambda kernels: kernels.rint)

    def forward(self, x: Tensor, decimals: int = 0) -> Tensor:
        if not isinstance(decimals, int) or isinstance(decimals, bool):
            raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}")
        if decimals == 0:
            return super().forward(x)
        _refuse_bool(self, x, "convert it with .float() first")
        if not x.dtype.is_floating_point:
            raise DTypeError(f"round: decimals={decimals} needs a floating-point tensor, got {describe(x)} "
                             "(as in PyTorch); round integers without decimals, or convert with .float()")
        out = self.allocate(x)
        x.device.kernels.round_decimals(x._array, decimals, out._array)
        return out


class Frac(UnaryOp):
    """x - trunc(x), with x's sign; floating point only (as in PyTorch); slope 1."""

    kernel = staticmethod(lambda kernels: kernels.frac)
    saves = None

    def allocate(self, x: Tensor) -> Tensor:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise DTypeError(f"frac: needs a floating-point tensor, got {describe(x)} (as in PyTorch; "
                             "an integer has no fractional part)")
        return super().allocate(x)

    def backward(self, grad: Tensor) -> Grads:
        return (grad,)


# -- floating-point predicates (bool results, no gradient) and nan_to_num -------------------------


class Predicate(UnaryOp):
    """A test of each element (isnan, isinf, ...): a bool tensor, never differentiable.
    Integers and bools are never NaN nor infinite, as in PyTorch."""

    float_only, saves = False, None

    def forward(self, x: Tensor) -> Tensor:
        super().allocate(x)  # (the checks)
        out = Tensor._empty(x._meta.shape, dtypes.bool_, x._meta.device)
        self.kernel(x._meta.device.kernels)(x._array, out._array)  # x as it is: not converted to bool
        return out


class Isnan(Predicate):
    kernel = staticmethod(lambda kernels: kernels.isnan)


class Isinf(Predicate):
    kernel = staticmethod(lambda kernels: kernels.isinf)


class Isfinite(Predicate):
    kernel = staticmethod(lambda kernels: kernels.isfinite)


class Isposinf(Predicate):
    kernel = staticmethod(lambda kernels: lambda x, out: kernels.equals_value(x, math.inf, out))


class Isneginf(Predicate):
    kernel = staticmethod(lambda kernels: lambda x, out: kernels.equals_value(x, -math.inf, out))


class Signbit(Predicate):
    """Whether the sign bit is set: True for -0.0 (and -inf), x < 0 for integers."""

    kernel = staticmethod(lambda kernels: kernels.signbit)


class NanToNum(UnaryOp):
    """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (by default 0, and the largest
    and the lowest finite value of the dtype); integers and bools pass unchanged. The
    gradient passes where x is finite and is 0 where it was replaced."""

    float_only = False

    def forward(self, x: Tensor, nan: float | None = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"nan_to_num: expected a tensor, got {describe(x)}")
        if not x.dtype.is_floating_point:
            return Copy.apply(x)
        limits = dtypes.finfo(x.dtype)
        nan = 0.0 if nan is None else nan
        posinf = limits.max if posinf is None else posinf
        neginf = limits.min if neginf is None else neginf
        out = self.allocate(x)
        x.device.kernels.nan_to_num(x._array, nan, posinf, neginf, out._array)
        self.save_for_backward(x)
        return out

    def derivative(self, x: Tensor) -> Tensor:
        return x.isfinite()


# -- the functional forms (zero.log1p, and x.log1p through ops/tensor_methods.py) ----------------


def isnan(input: Tensor) -> Tensor:
    return Isnan.apply(input)


def isinf(input: Tensor) -> Tensor:
    return Isinf.apply(input)


def isfinite(input: Tensor) -> Tensor:
    return Isfinite.apply(input)


def isposinf(input: Tensor) -> Tensor:
    return Isposinf.apply(input)


def isneginf(input: Tensor) -> Tensor:
    return Isneginf.apply(input)


def signbit(input: Tensor) -> Tensor:
    return Signbit.apply(input)


def floor(input: Tensor) -> Tensor:
    return Floor.apply(input)


def ceil(input: Tensor) -> Tensor:
    return Ceil.apply(input)


def trunc(input: Tensor) -> Tensor:
    return Trunc.apply(input)


def frac(input: Tensor) -> Tensor:
    return Frac.apply(input)


def log1p(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("log1p", input)
    return Log1p.apply(input)


def expm1(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("expm1", input)
    return Expm1.apply(input)


def log2(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("log2", input)
    return Log2.apply(input)


def log10(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("log10", input)
    return Log10.apply(input)


def exp2(input: Tensor) -> Tensor:
    return Exp2.apply(input)


def reciprocal(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("reciprocal", input)
    return Reciprocal.apply(input)


def erf(input: Tensor) -> Tensor:
    return Erf.apply(input)


def erfc(input: Tensor) -> Tensor:
    return Erfc.apply(input)


def erfinv(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("erfinv", input)
    return Erfinv.apply(input)


def tan(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("tan", input)
    return Tan.apply(input)


def asin(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("asin", input)
    return Asin.apply(input)


def acos(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("acos", input)
    return Acos.apply(input)


def atan(input: Tensor) -> Tensor:
    return Atan.apply(input)


def sinh(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("sinh", input)
    return Sinh.apply(input)


def cosh(input: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("cosh", input)
    return Cosh.apply(input)


def asinh(input: Tensor) -> Tensor:
    return Asinh.apply(input)


def acosh(input: Tensor) -> Tensor:
    return Acosh.apply(input)


def atanh(input: Tensor) -> Tensor:
    return Atanh.apply(input)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Half to even, at ``decimals`` digits after the point."""
    return Round.apply(input, decimals=decimals)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


# NumPy's names, which PyTorch has too
fix = trunc
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
