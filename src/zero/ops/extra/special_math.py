"""PyTorch's elementwise math functions that Zero lacked, each a composition of existing
differentiable ops (so they run on every device and their gradients are those of the
composition):

    deg2rad, rad2deg      x * (pi / 180), x * (180 / pi); integers become the default float
    sinc(x)               sin(pi x) / (pi x), 1 at 0 (where the gradient is 0)
    logit(x, eps)         log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given
    heaviside(x, values)  0 below zero, values at zero, 1 above; not differentiable
    logaddexp2(a, b)      logaddexp(a ln 2, b ln 2) / ln 2
    rsub(input, other)    other - alpha * input
    float_power(a, b)     a ** b in float64
    ldexp(x, e)           x * 2 ** e
    gcd, lcm              Euclid's algorithm as elementwise remainders (integers only)
    frexp(x)              (mantissa in [0.5, 1), exponent as int32): x = mantissa * 2 ** exponent
    isin(elements, test_elements, assume_unique, invert)
    isreal(x)             True everywhere (Zero has no complex dtypes)
    mvlgamma(x, p)        sum of lgamma(x - i / 2), i < p, + p (p - 1) / 4 log(pi)
    polygamma(n, x)       digamma for n = 0; (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, the Hurwitz
                          zeta by shifting x up past 10 (recurrence) and Euler-Maclaurin's
                          tail with six Bernoulli terms (relative error below 1e-14)
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ... import dtypes
from ...tensors.creation import tensor as make_tensor
from ...autograd.op import Grads, Op
from ...tensors.tensor import Tensor
from ..comparison import eq, logical_not
from ..elementwise import abs as absolute
from ..elementwise import log, mul, sin, sub, where
from ..elementwise import pow as power
from ..views import view_dtype
from ..selection import clamp
from .binary_math import logaddexp, remainder
from .more_math import broadcast_tensors, digamma, lgamma
from .unary_math import floor, log2

Operand = Tensor | int | float | bool


def _as_tensor(x: Operand, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return make_tensor(x, device=like.device if like is not None else None)


def _floating(x: Tensor) -> Tensor:
    """x, or x in the default float dtype where it holds integers or booleans (PyTorch's
    promotion of the unary float functions)."""
    return x if x.dtype.is_floating_point else x.to(dtypes.get_default_dtype())


def _widened(x: Tensor) -> Tensor:
    """float16 and bfloat16 in float32, as PyTorch computes them (its "opmath" type)."""
    return x.to(dtypes.float32) if x.dtype.is_floating_point and x.dtype.itemsize < 4 else x


def _check_tensor(op: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def deg2rad(input: Tensor) -> Tensor:
    return mul(_floating(_check_tensor("deg2rad", input)), math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    return mul(_floating(_check_tensor("rad2deg", input)), 180.0 / math.pi)


def sinc(input: Tensor) -> Tensor:
    given = _floating(_check_tensor("sinc", input))
    x = _widened(given)
    at_zero = eq(x, 0)
    safe = where(at_zero, 1.0, x) * math.pi
    return where(at_zero, 1.0, sin(safe) / safe).to(given.dtype)


class Logit(Op):
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given, with PyTorch's
    gradient: 1 / (x (1 - x)); NaN outside [0, 1] without eps, 0 outside [eps, 1 - eps] with it."""

    def forward(self, x: Tensor, eps: float | None) -> Tensor:
        self.eps = eps
        xs = _widened(x.detach())
        if eps is not None:
            xs = clamp(xs, eps, 1.0 - eps)
        self.save_for_backward(x)
        return log(xs / (1.0 - xs)).to(x.dtype)

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        slope = grad / (x * (1.0 - x))
        if self.eps is None:
            return (where((x < 0) | (x > 1), math.nan, slope), None)
        return (where((x < self.eps) | (x > 1.0 - self.eps), 0.0, slope), None)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    return Logit.apply(_floating(_check_tensor("logit", input)), eps)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    _check_tensor("heaviside", input)
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' must be Tensor, not {type(values).__name__}")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    one = make_tensor(1, dtype=input.dtype, device=input.device)
    zero_ = make_tensor(0, dtype=input.dtype, device=input.device)
    return where(eq(input, 0), values.detach(), where(input > 0, one, zero_))


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    ln2 = math.log(2.0)
    a, b = _floating(_as_tensor(input)), _floating(_as_tensor(other))
    dtype = dtypes.promote_types(a.dtype, b.dtype)
    return (logaddexp(_widened(a) * ln2, _widened(b) * ln2) / ln2).to(dtype)


def rsub(input: Tensor, other: Operand, alpha: int | float = 1) -> Tensor:
    _check_tensor("rsub", input)
    return sub(other, input, alpha=alpha)


def float_power(input: Operand, exponent: Operand) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): at least one of 'input' and 'exponent' must be a Tensor")
    a = input.to(dtypes.float64) if isinstance(input, Tensor) else float(input)
    b = exponent.to(dtypes.float64) if isinstance(exponent, Tensor) else float(exponent)
    if isinstance(a, Tensor):
        return power(a, b)
    assert isinstance(b, Tensor)
    return power(a, b)


def float_power_(self: Tensor, exponent: Operand) -> Tensor:
    """``x.float_power_(e)``: only a float64 x can hold float_power's result."""
    if self.dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_torch_name(self.dtype)} but the "
                           "operation's result requires dtype Double")
    return self.copy_(float_power(self, exponent))


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    x = _check_tensor("ldexp", input)
    e = _as_tensor(other, x)
    if not e.dtype.is_floating_point:   # integer exponents: 2 ** e in x's float dtype
        e = e.to(x.dtype if x.dtype.is_floating_point else dtypes.get_default_dtype())
    return mul(x, power(2.0, e))


def _integers(op: str, a: Tensor, b: Operand) -> tuple[Tensor, Tensor]:
    _check_tensor(op, a)
    bt = _as_tensor(b, a)
    for t in (a, bt):
        if t.dtype.is_floating_point or t.dtype == dtypes.bool_:
            raise RuntimeError(f'"{op}_cpu" not implemented for \'{_torch_name(t.dtype)}\'')
    return a, bt


def _torch_name(dtype: dtypes.DType) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "bool": "Bool"}.get(dtype.name, dtype.name)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    a, b = _integers("gcd", input, other)
    a, b = absolute(a + 0 * b), absolute(b + 0 * a)   # broadcast and promote both
    while bool((b != 0).any()):
        nonzero = b != 0
        a, b = where(nonzero, b, a), where(nonzero, remainder(a, where(nonzero, b, 1)), 0)
    return a


def lcm(input: Tensor, other: Tensor) -> Tensor:
    a, b = _integers("lcm", input, other)
    g = gcd(a, b)
    return absolute(where(eq(g, 0), 0, (a // where(eq(g, 0), 1, g)) * b))


class FrexpResult(NamedTuple):
    mantissa: Tensor
    exponent: Tensor


def frexp(input: Tensor) -> FrexpResult:
    x = _check_tensor("frexp", input)
    if not x.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    magnitude = absolute(x.detach()).to(dtypes.float64)
    special = eq(magnitude, 0) | ~(magnitude < math.inf)   # 0, inf, nan: (x, 0)
    safe = where(special, 1.0, magnitude)
    exponent = floor(log2(safe)) + 1
    # log2 may round across a power of two: put the mantissa back into [0.5, 1)
    scaled = safe / power(2.0, exponent)
    exponent = where(special, 0.0, exponent + (scaled >= 1.0).to(exponent.dtype) - (scaled < 0.5).to(exponent.dtype))
    # mantissa = x 2^-exponent (differentiable in x, as PyTorch's); in two factors, as 2^-exponent
    # alone overflows for the smallest subnormals
    half = floor(exponent / 2)
    mantissa = x.to(dtypes.float64) * power(2.0, -half) * power(2.0, half - exponent)
    return FrexpResult(mantissa.to(x.dtype), exponent.to(dtypes.int32))


def isin(elements: Operand, test_elements: Operand, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of 'elements' and 'test_elements' must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    assert isinstance(like, Tensor)
    e, t = _as_tensor(elements, like).detach(), _as_tensor(test_elements, like).detach()
    if t.numel():
        found = eq(e.reshape(*e.shape, 1), t.reshape(-1)).any(-1)
    else:
        found = (e != e) & (e == e)   # all False, e's shape
    return logical_not(found) if invert else found


def angle(input: Tensor) -> Tensor:
    """The argument of a real number: pi below zero, 0 at and above it (-0.0 included), NaN
    for NaN; integers give the default float dtype. Its gradient is 0, as PyTorch's."""
    x = _floating(_check_tensor("angle", input))
    constant = x.detach()
    value = where(constant < 0, math.pi, where(eq(constant, constant), 0.0, constant))
    return where(isreal(constant), value, x)   # (x never chosen: in the graph, with a zero gradient)


def isreal(input: Tensor) -> Tensor:
    x = _check_tensor("isreal", input)
    return eq(x, x) | logical_not(eq(x, x))   # True everywhere, NaN included


def mvlgamma(input: Tensor, p: int) -> Tensor:
    x = _check_tensor("mvlgamma", input)
    if not x.dtype.is_floating_point:
        raise RuntimeError("mvlgamma is not implemented for integral types; use a floating-point input")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if x.numel() and not bool((x > (p - 1) / 2).all()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = lgamma(x)
    for i in range(1, p):
        total = total + lgamma(x - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


# Bernoulli numbers B_2k, k = 1..6, for Euler-Maclaurin's tail of the Hurwitz zeta
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


def _hurwitz_zeta(s: int, x: Tensor) -> Tensor:
    """zeta(s, x) = sum over k >= 0 of (x + k) ** -s, for an integer s >= 2."""
    shift = 10
    if x.numel():
        lowest = float(x.detach().min().item())
        if lowest < 0 and math.isfinite(lowest):
            shift += math.ceil(-lowest)
    total = power(x, -s)
    for k in range(1, shift):
        total = total + power(x + k, -s)
    a = x + shift
    tail = power(a, 1 - s) / (s - 1) + 0.5 * power(a, -s)
    rising = float(s)           # s (s + 1) ... (s + 2j - 2)
    for j, b in enumerate(_BERNOULLI, start=1):
        tail = tail + (b * rising / math.factorial(2 * j)) * power(a, -s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total + tail


def polygamma(n: int, input: Tensor) -> Tensor:
    x = _floating(_check_tensor("polygamma", input))
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(x)
    sign = 1.0 if n % 2 == 1 else -1.0
    return (_hurwitz_zeta(n + 1, _widened(x)) * (sign * math.factorial(n))).to(x.dtype)




def polygamma_method(self: Tensor, n: int) -> Tensor:
    """``x.polygamma(n)``: PyTorch's method takes n after the tensor."""
    return polygamma(n, self)


# -- i0, nextafter, the incomplete gamma functions -------------------------------------------------


def _i0_series(x: Tensor) -> Tensor:
    """sum over k of (x^2 / 4)^k / (k!)^2, by Horner's rule (|x| < 20: 60 terms)."""
    y = x * x / 4
    total = y * 0 + 1.0 / math.factorial(59) ** 2
    for k in range(58, -1, -1):
        total = total * y + 1.0 / math.factorial(k) ** 2
    return total


def _i0_asymptotic(x: Tensor) -> Tensor:
    """e^x / sqrt(2 pi x) * sum over k of ((2k - 1)!!)^2 / (k! 8^k x^k) (x >= 20: 25 terms)."""
    coefficients, c = [1.0], 1.0
    for k in range(1, 25):
        c *= (2 * k - 1) ** 2 / (8 * k)
        coefficients.append(c)
    r = 1.0 / x
    total = r * 0 + coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * r + c
    # e^x split in two, as e^x alone overflows float64 before I0's value does
    half = (x / 2).exp()
    return half * (half / (2 * math.pi * x).sqrt()) * total


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (float64 inside); its gradient,
    that of the composition, is i1's value."""
    x = _floating(_check_tensor("i0", input))
    magnitude = absolute(x.to(dtypes.float64))
    small = magnitude < 20
    value = where(small, _i0_series(where(small, magnitude, 0.0)),
                  _i0_asymptotic(where(small, 20.0, magnitude)))
    if x.dtype is not dtypes.float64:   # past the dtype's largest value: inf (without NumPy's warning)
        value = where(value > float(np.finfo(x.dtype.numpy).max), math.inf, value)
    return value.to(x.dtype)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next float after input towards other: input's bits (as an integer of its width) one
    up or down; float32 and float64. Not differentiable."""
    x = _check_tensor("nextafter", input).detach()
    y = _as_tensor(other, x).detach()
    if x.dtype is not y.dtype:
        raise RuntimeError(f"nextafter: expected both arguments to have the same dtype, got {x.dtype.name} and "
                           f"{y.dtype.name}")
    bits = {"float32": dtypes.int32, "float64": dtypes.int64}.get(x.dtype.name)
    if bits is None:
        raise RuntimeError(f'"nextafter_cpu" not implemented for \'{_torch_name(x.dtype)}\'')
    x, y = broadcast_tensors(x, y)
    as_int = view_dtype(x.contiguous(), bits)
    away = (y > x) == (x > 0)     # moving away from zero: the magnitude's bits grow
    stepped = view_dtype(as_int + where(away, 1, -1).to(bits), x.dtype)
    one_bit = view_dtype(make_tensor(1, dtype=bits, device=x.device), x.dtype)   # the smallest subnormal
    from_zero = where(y > 0, one_bit, -one_bit)
    result = where(eq(x, 0), from_zero, stepped)
    result = where(eq(x, y), y, result)
    return where(logical_not(eq(x, x)) | logical_not(eq(y, y)), math.nan, result)


def _igamma_series(a: Tensor, x: Tensor) -> Tensor:
    """P(a, x) by its series x^a e^-x / Gamma(a + 1) * sum x^k / ((a + 1) ... (a + k)), x < a + 1."""
    term = a * 0 + 1.0
    total = term
    for k in range(1, 200):
        term = term * x / (a + k)
        total = total + term
    return total * (a * log(x) - x - lgamma(a + 1)).exp()


def _igammac_fraction(a: Tensor, x: Tensor) -> Tensor:
    """Q(a, x) by Legendre's continued fraction (modified Lentz, 200 steps), x >= a + 1."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = b * 0 + 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 200):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = where(absolute(d) < tiny, tiny, d)
        c = b + an / c
        c = where(absolute(c) < tiny, tiny, c)
        d = 1.0 / d
        h = h * (d * c)
    return h * (a * log(x) - x - lgamma(a)).exp()


class _RegularizedGamma(Op):
    """P(a, x) (upper=False) or Q(a, x) = 1 - P: series or continued fraction, in float64;
    differentiable in x alone, as PyTorch's: dP/dx = x^(a-1) e^-x / Gamma(a)."""

    def forward(self, a: Tensor, x: Tensor, upper: bool) -> Tensor:
        self.upper = upper
        dtype = dtypes.promote_types(a.dtype, x.dtype)
        if not dtype.is_floating_point:
            dtype = dtypes.get_default_dtype()
        a64, x64 = a.detach().to(dtypes.float64), x.detach().to(dtypes.float64)
        a64, x64 = broadcast_tensors(a64, x64)
        use_series = x64 < a64 + 1
        inside = (a64 > 0) & (x64 > 0) & (a64 < math.inf) & (x64 < math.inf)
        by_series, by_fraction = inside & use_series, inside & logical_not(use_series)
        # each branch on its own elements; elsewhere a = 1 and an x where it converges
        series = _igamma_series(where(by_series, a64, 1.0), where(by_series, x64, 0.5))
        fraction = _igammac_fraction(where(by_fraction, a64, 1.0), where(by_fraction, x64, 2.0))
        lower = where(use_series, series, 1.0 - fraction)
        # edges: x = 0 gives P = 0; a = 0 (x > 0) gives P = 1; x = inf gives 1; negatives NaN
        lower = where(eq(x64, 0) & (a64 > 0), 0.0, lower)
        lower = where(eq(a64, 0) & (x64 > 0), 1.0, lower)
        lower = where((a64 < 0) | (x64 < 0) | (eq(a64, 0) & eq(x64, 0)), math.nan, lower)
        lower = where(eq(x64, math.inf) & (a64 >= 0), 1.0, lower)
        lower = where(logical_not(eq(a64, a64)) | logical_not(eq(x64, x64)), math.nan, lower)
        self.dtype = dtype
        self.save_for_backward(a64, x64)
        value = (1.0 - lower) if upper else lower
        return value.to(dtype)

    def backward(self, grad: Tensor) -> Grads:
        a, x = self.saved_tensors
        density = ((a - 1) * log(x) - x - lgamma(a)).exp()
        slope = -density if self.upper else density
        return (None, (grad.to(dtypes.float64) * slope).to(grad.dtype), None)


def _gamma_operands(op: str, input: Operand, other: Operand) -> tuple[Tensor, Tensor]:
    like = input if isinstance(input, Tensor) else other
    if not isinstance(like, Tensor):
        raise TypeError(f"{op}(): expected a Tensor")
    return _as_tensor(input, like), _as_tensor(other, like)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other)."""
    a, x = _gamma_operands("igamma", input, other)
    return _RegularizedGamma.apply(a, x, False)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P."""
    a, x = _gamma_operands("igammac", input, other)
    return _RegularizedGamma.apply(a, x, True)
