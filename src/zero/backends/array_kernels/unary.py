"""Unary math over ``xp`` (``numpy`` or ``cupy``): signs, exponentials and logarithms, roots,
trigonometry, the error function, rounding, classification, relu. Each is the array
library's ufunc with ``out=`` and ``casting="unsafe"``, under ``quiet`` where NumPy would
warn about a value PyTorch gives silently (the package docstring)."""
from __future__ import annotations

import builtins
from collections.abc import Callable
from types import ModuleType

from .. import special_functions
from ..kernel_contract import Array, Scalar
from ._quiet import quiet

# -- unary math (an op passes x already in out's dtype where it computes in it; the rounding
# ufuncs also have integer loops, which leave integers as they are) --------------------------------


def neg(xp: ModuleType, x: Array, out: Array) -> None:
    xp.negative(x, out=out, casting="unsafe")


def abs(xp: ModuleType, x: Array, out: Array) -> None:
    xp.absolute(x, out=out, casting="unsafe")


def bitwise_not(xp: ModuleType, x: Array, out: Array) -> None:
    xp.invert(x, out=out, casting="unsafe")


def logical_not(xp: ModuleType, x: Array, out: Array) -> None:
    xp.logical_not(x, out=out, casting="unsafe")


def sign(xp: ModuleType, x: Array, out: Array) -> None:
    """-1, 0 or 1; the sign of NaN is 0, as PyTorch gives it (NumPy's is NaN)."""
    xp.sign(x, out=out, casting="unsafe")
    if out.dtype.kind == "f":
        xp.copyto(out, 0, where=xp.isnan(out))


def exp(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.exp(x, out=out, casting="unsafe")


def exp2(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.exp2(x, out=out, casting="unsafe")


def expm1(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.expm1(x, out=out, casting="unsafe")


def log(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.log(x, out=out, casting="unsafe")


def log2(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.log2(x, out=out, casting="unsafe")


def log10(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.log10(x, out=out, casting="unsafe")


def log1p(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.log1p(x, out=out, casting="unsafe")


def sqrt(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.sqrt(x, out=out, casting="unsafe")


def rsqrt(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.sqrt(x, out=out, casting="unsafe")
        xp.reciprocal(out, out=out)


def reciprocal(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.reciprocal(x, out=out, casting="unsafe")


def sin(xp: ModuleType, x: Array, out: Array) -> None:
    xp.sin(x, out=out, casting="unsafe")


def cos(xp: ModuleType, x: Array, out: Array) -> None:
    xp.cos(x, out=out, casting="unsafe")


def tan(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.tan(x, out=out, casting="unsafe")


def arcsin(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.arcsin(x, out=out, casting="unsafe")


def arccos(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.arccos(x, out=out, casting="unsafe")


def arctan(xp: ModuleType, x: Array, out: Array) -> None:
    xp.arctan(x, out=out, casting="unsafe")


def sinh(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.sinh(x, out=out, casting="unsafe")


def cosh(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.cosh(x, out=out, casting="unsafe")


def tanh(xp: ModuleType, x: Array, out: Array) -> None:
    xp.tanh(x, out=out, casting="unsafe")


def arcsinh(xp: ModuleType, x: Array, out: Array) -> None:
    xp.arcsinh(x, out=out, casting="unsafe")


def arccosh(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.arccosh(x, out=out, casting="unsafe")


def arctanh(xp: ModuleType, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.arctanh(x, out=out, casting="unsafe")


def _in_float64(xp: ModuleType, function: Callable[[ModuleType, Array], Array], x: Array, out: Array) -> None:
    """out = ``function`` of special_functions, computed in float64 and cast to out."""
    with quiet(xp):
        xp.copyto(out, function(xp, xp.asarray(x, dtype=xp.float64)), casting="unsafe")


def erf(xp: ModuleType, x: Array, out: Array) -> None:
    _in_float64(xp, special_functions.erf, x, out)


def erfc(xp: ModuleType, x: Array, out: Array) -> None:
    _in_float64(xp, special_functions.erfc, x, out)


def erfinv(xp: ModuleType, x: Array, out: Array) -> None:
    _in_float64(xp, special_functions.erfinv, x, out)


def floor(xp: ModuleType, x: Array, out: Array) -> None:
    xp.floor(x, out=out, casting="unsafe")


def ceil(xp: ModuleType, x: Array, out: Array) -> None:
    xp.ceil(x, out=out, casting="unsafe")


def trunc(xp: ModuleType, x: Array, out: Array) -> None:
    xp.trunc(x, out=out, casting="unsafe")


def rint(xp: ModuleType, x: Array, out: Array) -> None:
    xp.rint(x, out=out, casting="unsafe")            # round half to even, PyTorch's round()


def round_decimals(xp: ModuleType, x: Array, decimals: int, out: Array) -> None:
    """Round half to even at ``decimals`` digits (negative: left of the point), as
    PyTorch does: x * 10^d rounded and divided back, in out's dtype."""
    scale = 10.0 ** builtins.abs(decimals)
    with quiet(xp):
        if decimals > 0:
            xp.multiply(x, scale, out=out)
            xp.rint(out, out=out)
            xp.divide(out, scale, out=out)
        else:
            xp.divide(x, scale, out=out)
            xp.rint(out, out=out)
            xp.multiply(out, scale, out=out)


def frac(xp: ModuleType, x: Array, out: Array) -> None:
    """x - trunc(x): the fractional part, with x's sign."""
    xp.trunc(x, out=out)
    with quiet(xp):
        xp.subtract(x, out, out=out)


def signbit(xp: ModuleType, x: Array, out: Array) -> None:
    """Whether the sign bit is set (true for -0.0 and for NaNs with it); x < 0 for integers."""
    if x.dtype.kind == "f":
        xp.signbit(x, out=out)
    else:
        xp.less(x, 0, out=out)


def isnan(xp: ModuleType, x: Array, out: Array) -> None:
    xp.isnan(x, out=out, casting="unsafe")


def isinf(xp: ModuleType, x: Array, out: Array) -> None:
    xp.isinf(x, out=out, casting="unsafe")


def isfinite(xp: ModuleType, x: Array, out: Array) -> None:
    xp.isfinite(x, out=out, casting="unsafe")


def equals_value(xp: ModuleType, x: Array, value: Scalar, out: Array) -> None:
    """out = (x == value) for one number (isposinf, isneginf), integers compared exactly."""
    xp.equal(x, value, out=out)


def nan_to_num(xp: ModuleType, x: Array, nan: Scalar, posinf: Scalar, neginf: Scalar, out: Array) -> None:
    """x with NaN, +inf and -inf replaced by the three numbers."""
    xp.copyto(out, x)
    xp.copyto(out, nan, where=xp.isnan(x), casting="unsafe")
    xp.copyto(out, posinf, where=x == xp.inf, casting="unsafe")
    xp.copyto(out, neginf, where=x == -xp.inf, casting="unsafe")


# -- relu (the CPU has Numba loops of its own for contiguous floats) ---------------------------------


def relu(xp: ModuleType, x: Array, out: Array) -> None:
    xp.maximum(x, 0, out=out, casting="unsafe")


def relu_backward(xp: ModuleType, grad: Array, out: Array, grad_in: Array) -> None:
    """grad_in = 0 where relu's output out <= 0, else grad (a NaN output passes it on,
    and an infinite gradient is not multiplied by 0: PyTorch's threshold backward)."""
    xp.copyto(grad_in, xp.where(out <= 0, xp.zeros((), grad_in.dtype), grad), casting="unsafe")

