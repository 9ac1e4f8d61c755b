"""The functional forms of the math functions in ``math_methods``, with PyTorch's
signatures: ``zero.log1p(x)`` is ``x.log1p()``, ``zero.atan2(a, b)`` is ``a.atan2(b)``.
(``functions`` holds the older ones; ``zero`` exports both.) Those of two operands take a
Python number for either, as PyTorch's do for ``remainder`` and ``xlogy``.
"""
from __future__ import annotations

from ..tensors.tensor import Tensor
from . import binary_math, elementwise, unary_math


# -- floating-point predicates and nan_to_num ---------------------------------------------------
def isnan(input: Tensor) -> Tensor:
    return unary_math.Isnan.apply(input)


def isinf(input: Tensor) -> Tensor:
    return unary_math.Isinf.apply(input)


def isfinite(input: Tensor) -> Tensor:
    return unary_math.Isfinite.apply(input)


def isposinf(input: Tensor) -> Tensor:
    return unary_math.Isposinf.apply(input)


def isneginf(input: Tensor) -> Tensor:
    return unary_math.Isneginf.apply(input)


def signbit(input: Tensor) -> Tensor:
    return unary_math.Signbit.apply(input)


def nan_to_num(input: Tensor, nan=0.0, posinf=None, neginf=None) -> Tensor:
    return unary_math.NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


# -- rounding -----------------------------------------------------------------------------------
def floor(input: Tensor) -> Tensor:
    return unary_math.Floor.apply(input)


def ceil(input: Tensor) -> Tensor:
    return unary_math.Ceil.apply(input)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return unary_math.Round.apply(input, decimals=decimals)


def trunc(input: Tensor) -> Tensor:
    return unary_math.Trunc.apply(input)


fix = trunc


def frac(input: Tensor) -> Tensor:
    return unary_math.Frac.apply(input)


# -- logarithms, exponentials, the error function -----------------------------------------------
def log1p(input: Tensor) -> Tensor:
    return unary_math.Log1p.apply(input)


def expm1(input: Tensor) -> Tensor:
    return unary_math.Expm1.apply(input)


def log2(input: Tensor) -> Tensor:
    return unary_math.Log2.apply(input)


def log10(input: Tensor) -> Tensor:
    return unary_math.Log10.apply(input)


def exp2(input: Tensor) -> Tensor:
    return unary_math.Exp2.apply(input)


def reciprocal(input: Tensor) -> Tensor:
    return unary_math.Reciprocal.apply(input)


def erf(input: Tensor) -> Tensor:
    return unary_math.Erf.apply(input)


def erfc(input: Tensor) -> Tensor:
    return unary_math.Erfc.apply(input)


def erfinv(input: Tensor) -> Tensor:
    return unary_math.Erfinv.apply(input)


# -- trigonometric and hyperbolic ---------------------------------------------------------------
def tan(input: Tensor) -> Tensor:
    return unary_math.Tan.apply(input)


def asin(input: Tensor) -> Tensor:
    return unary_math.Asin.apply(input)


def acos(input: Tensor) -> Tensor:
    return unary_math.Acos.apply(input)


def atan(input: Tensor) -> Tensor:
    return unary_math.Atan.apply(input)


def sinh(input: Tensor) -> Tensor:
    return unary_math.Sinh.apply(input)


def cosh(input: Tensor) -> Tensor:
    return unary_math.Cosh.apply(input)


def asinh(input: Tensor) -> Tensor:
    return unary_math.Asinh.apply(input)


def acosh(input: Tensor) -> Tensor:
    return unary_math.Acosh.apply(input)


def atanh(input: Tensor) -> Tensor:
    return unary_math.Atanh.apply(input)


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


# -- two operands -------------------------------------------------------------------------------
def atan2(input, other) -> Tensor:
    return binary_math.Atan2.apply(input, other)


arctan2 = atan2


def hypot(input, other) -> Tensor:
    return binary_math.Hypot.apply(input, other)


def logaddexp(input, other) -> Tensor:
    return binary_math.Logaddexp.apply(input, other)


def xlogy(input, other) -> Tensor:
    return binary_math.Xlogy.apply(input, other)


def fmax(input, other) -> Tensor:
    return binary_math.Fmax.apply(input, other)


def fmin(input, other) -> Tensor:
    return binary_math.Fmin.apply(input, other)


def clamp_min(input: Tensor, min) -> Tensor:
    return elementwise.clamp(input, min, None)


def clamp_max(input: Tensor, max) -> Tensor:
    return elementwise.clamp(input, None, max)


def floor_divide(input, other) -> Tensor:
    return binary_math.FloorDivide.apply(input, other)


def remainder(input, other) -> Tensor:
    return binary_math.Remainder.apply(input, other)


def fmod(input, other) -> Tensor:
    return binary_math.Fmod.apply(input, other)


def divide(input, other, *, rounding_mode=None) -> Tensor:
    return binary_math.divide(input, other, rounding_mode)


def true_divide(input, other) -> Tensor:
    return elementwise.Div.apply(input, other)


# -- three operands -----------------------------------------------------------------------------
def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    return binary_math.Lerp.apply(input, end, weight)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return binary_math.Addcmul.apply(input, tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return binary_math.Addcdiv.apply(input, tensor1, tensor2, value=value)


# -- PyTorch's aliases --------------------------------------------------------------------------
def multiply(input, other) -> Tensor:
    return elementwise.Mul.apply(input, other)


def subtract(input, other, *, alpha=1) -> Tensor:
    return elementwise.Sub.apply(input, other * alpha if alpha != 1 else other)


def absolute(input: Tensor) -> Tensor:
    return input.absolute()


def negative(input: Tensor) -> Tensor:
    return input.negative()


def positive(input: Tensor) -> Tensor:
    return input.positive()


def sgn(input: Tensor) -> Tensor:
    return input.sgn()
