"""The Tensor methods of PyTorch's common functions that ``tensor_methods`` does not hold:
the math functions (``x.log1p()``, ``x.atan2(y)``, ``x // y``, ``x % y`` ...), each with its
in-place twin where PyTorch has one (``x.log1p_()``).

``TensorMethods`` inherits this mixin, so ``attach_to`` puts these methods on ``Tensor`` too
and type checkers see them. An in-place method computes the op out of place and writes the
result into the tensor (``inplace.apply_``), recorded in the graph when something requires
grad, as every in-place op is.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import DTypeError, describe
from . import binary_math, elementwise, inplace, unary_math


def _in_place(target, name: str, op, *operands, **params):
    """``target = op(target, *operands, **params)``, in place."""
    return inplace.apply_(target, name, lambda old: op.apply(old, *operands, **params), operands)


class MathMethods:
    """Mixed into ``Tensor`` through ``TensorMethods``; never instantiated on its own."""

    __slots__ = ()

    # -- floating-point predicates (bool results) and nan_to_num ------------------------------
    def isnan(self):
        return unary_math.Isnan.apply(self)

    def isinf(self):
        return unary_math.Isinf.apply(self)

    def isfinite(self):
        return unary_math.Isfinite.apply(self)

    def isposinf(self):
        return unary_math.Isposinf.apply(self)

    def isneginf(self):
        return unary_math.Isneginf.apply(self)

    def signbit(self):
        return unary_math.Signbit.apply(self)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return unary_math.NanToNum.apply(self, nan=nan, posinf=posinf, neginf=neginf)

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return _in_place(self, "nan_to_num_", unary_math.NanToNum, nan=nan, posinf=posinf, neginf=neginf)

    # -- rounding -------------------------------------------------------------------------------
    def floor(self):
        return unary_math.Floor.apply(self)

    def ceil(self):
        return unary_math.Ceil.apply(self)

    def round(self, decimals=0):
        return unary_math.Round.apply(self, decimals=decimals)

    def trunc(self):
        return unary_math.Trunc.apply(self)

    fix = trunc

    def frac(self):
        return unary_math.Frac.apply(self)

    def floor_(self):
        return _in_place(self, "floor_", unary_math.Floor)

    def ceil_(self):
        return _in_place(self, "ceil_", unary_math.Ceil)

    def round_(self, decimals=0):
        return _in_place(self, "round_", unary_math.Round, decimals=decimals)

    def trunc_(self):
        return _in_place(self, "trunc_", unary_math.Trunc)

    fix_ = trunc_

    def frac_(self):
        return _in_place(self, "frac_", unary_math.Frac)

    # -- logarithms, exponentials, the error function -------------------------------------------
    def log1p(self):
        return unary_math.Log1p.apply(self)

    def expm1(self):
        return unary_math.Expm1.apply(self)

    def log2(self):
        return unary_math.Log2.apply(self)

    def log10(self):
        return unary_math.Log10.apply(self)

    def exp2(self):
        return unary_math.Exp2.apply(self)

    def reciprocal(self):
        return unary_math.Reciprocal.apply(self)

    def erf(self):
        return unary_math.Erf.apply(self)

    def erfc(self):
        return unary_math.Erfc.apply(self)

    def erfinv(self):
        return unary_math.Erfinv.apply(self)

    def log1p_(self):
        return _in_place(self, "log1p_", unary_math.Log1p)

    def expm1_(self):
        return _in_place(self, "expm1_", unary_math.Expm1)

    def log2_(self):
        return _in_place(self, "log2_", unary_math.Log2)

    def log10_(self):
        return _in_place(self, "log10_", unary_math.Log10)

    def exp2_(self):
        return _in_place(self, "exp2_", unary_math.Exp2)

    def reciprocal_(self):
        return _in_place(self, "reciprocal_", unary_math.Reciprocal)

    def erf_(self):
        return _in_place(self, "erf_", unary_math.Erf)

    def erfc_(self):
        return _in_place(self, "erfc_", unary_math.Erfc)

    def erfinv_(self):
        return _in_place(self, "erfinv_", unary_math.Erfinv)

    # -- trigonometric and hyperbolic (NumPy's arc- names are PyTorch's aliases) ----------------
    def tan(self):
        return unary_math.Tan.apply(self)

    def asin(self):
        return unary_math.Asin.apply(self)

    def acos(self):
        return unary_math.Acos.apply(self)

    def atan(self):
        return unary_math.Atan.apply(self)

    def sinh(self):
        return unary_math.Sinh.apply(self)

    def cosh(self):
        return unary_math.Cosh.apply(self)

    def asinh(self):
        return unary_math.Asinh.apply(self)

    def acosh(self):
        return unary_math.Acosh.apply(self)

    def atanh(self):
        return unary_math.Atanh.apply(self)

    def tan_(self):
        return _in_place(self, "tan_", unary_math.Tan)

    def asin_(self):
        return _in_place(self, "asin_", unary_math.Asin)

    def acos_(self):
        return _in_place(self, "acos_", unary_math.Acos)

    def atan_(self):
        return _in_place(self, "atan_", unary_math.Atan)

    def sinh_(self):
        return _in_place(self, "sinh_", unary_math.Sinh)

    def cosh_(self):
        return _in_place(self, "cosh_", unary_math.Cosh)

    def asinh_(self):
        return _in_place(self, "asinh_", unary_math.Asinh)

    def acosh_(self):
        return _in_place(self, "acosh_", unary_math.Acosh)

    def atanh_(self):
        return _in_place(self, "atanh_", unary_math.Atanh)

    arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
    arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_

    # -- two operands ---------------------------------------------------------------------------
    def atan2(self, other):
        return binary_math.Atan2.apply(self, other)

    def hypot(self, other):
        return binary_math.Hypot.apply(self, other)

    def logaddexp(self, other):
        return binary_math.Logaddexp.apply(self, other)

    def xlogy(self, other):
        return binary_math.Xlogy.apply(self, other)

    def fmax(self, other):
        return binary_math.Fmax.apply(self, other)

    def fmin(self, other):
        return binary_math.Fmin.apply(self, other)

    def clamp_min(self, min):  # noqa: A002  (PyTorch's name)
        return elementwise.clamp(self, min, None)

    def clamp_max(self, max):  # noqa: A002
        return elementwise.clamp(self, None, max)

    def atan2_(self, other):
        return _in_place(self, "atan2_", binary_math.Atan2, other)

    def hypot_(self, other):
        return _in_place(self, "hypot_", binary_math.Hypot, other)

    def xlogy_(self, other):
        return _in_place(self, "xlogy_", binary_math.Xlogy, other)

    def clamp_min_(self, min):  # noqa: A002
        return inplace.clamp_(self, min, None)

    def clamp_max_(self, max):  # noqa: A002
        return inplace.clamp_(self, None, max)

    arctan2, arctan2_ = atan2, atan2_

    # -- rounded division and remainders: //, % and their in-place forms ------------------------
    def div(self, other, *, rounding_mode=None):
        return binary_math.divide(self, other, rounding_mode)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return inplace.div_(self, other)
        return inplace.apply_(self, "div_", lambda old: binary_math.divide(old, other, rounding_mode), (other,))

    divide, divide_ = div, div_

    def true_divide(self, other):
        return elementwise.Div.apply(self, other)

    def true_divide_(self, other):
        return inplace.div_(self, other)

    def floor_divide(self, other):
        return binary_math.FloorDivide.apply(self, other)

    def remainder(self, other):
        return binary_math.Remainder.apply(self, other)

    def fmod(self, other):
        return binary_math.Fmod.apply(self, other)

    def floor_divide_(self, other):
        return _in_place(self, "floor_divide_", binary_math.FloorDivide, other)

    def remainder_(self, other):
        return _in_place(self, "remainder_", binary_math.Remainder, other)

    def fmod_(self, other):
        return _in_place(self, "fmod_", binary_math.Fmod, other)

    def __rfloordiv__(self, other):
        return binary_math.FloorDivide.apply(other, self)

    def __rmod__(self, other):
        return binary_math.Remainder.apply(other, self)

    __floordiv__, __ifloordiv__ = floor_divide, floor_divide_
    __mod__, __imod__ = remainder, remainder_

    # -- three operands -------------------------------------------------------------------------
    def lerp(self, end, weight):
        return binary_math.Lerp.apply(self, end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        return binary_math.Addcmul.apply(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return binary_math.Addcdiv.apply(self, tensor1, tensor2, value=value)

    def lerp_(self, end, weight):
        return _in_place(self, "lerp_", binary_math.Lerp, end, weight)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        return _in_place(self, "addcmul_", binary_math.Addcmul, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return _in_place(self, "addcdiv_", binary_math.Addcdiv, tensor1, tensor2, value=value)

    # -- PyTorch's aliases (NumPy's names) and the in-place forms of older methods --------------
    def multiply(self, other):
        return elementwise.Mul.apply(self, other)

    def subtract(self, other, *, alpha=1):
        return elementwise.Sub.apply(self, other * alpha if alpha != 1 else other)

    def absolute(self):
        return elementwise.Abs.apply(self)

    def negative(self):
        return elementwise.Neg.apply(self)

    def positive(self):
        """The tensor itself (PyTorch's +x), refused for bool as in PyTorch."""
        if self.dtype is dtypes.bool_:
            raise DTypeError(f"positive: the + operator is not defined for a bool tensor ({describe(self)}), "
                             "as in PyTorch")
        return self

    def sgn(self):
        return elementwise.Sign.apply(self)   # (sign for real tensors; PyTorch's sgn differs on complex)

    def multiply_(self, other):
        return inplace.mul_(self, other)

    def subtract_(self, other, *, alpha=1):
        return inplace.add_(self, other, -alpha)

    def abs_(self):
        return _in_place(self, "abs_", elementwise.Abs)

    def neg_(self):
        return _in_place(self, "neg_", elementwise.Neg)

    def sign_(self):
        return _in_place(self, "sign_", elementwise.Sign)

    absolute_, negative_, sgn_ = abs_, neg_, sign_

    def exp_(self):
        return _in_place(self, "exp_", elementwise.Exp)

    def log_(self):
        return _in_place(self, "log_", elementwise.Log)

    def sqrt_(self):
        return _in_place(self, "sqrt_", elementwise.Sqrt)

    def rsqrt_(self):
        return _in_place(self, "rsqrt_", elementwise.Rsqrt)

    def sin_(self):
        return _in_place(self, "sin_", elementwise.Sin)

    def cos_(self):
        return _in_place(self, "cos_", elementwise.Cos)

    def tanh_(self):
        return _in_place(self, "tanh_", elementwise.Tanh)

    def sigmoid_(self):
        return _in_place(self, "sigmoid_", elementwise.Sigmoid)

    def square_(self):
        return inplace.apply_(self, "square_", lambda old: old * old)
