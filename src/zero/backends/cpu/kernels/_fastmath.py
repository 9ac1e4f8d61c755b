"""Vectorisable exp, tanh and normal CDF for the CPU kernels' Numba loops.

Exp. Numba has no vectorised ``exp`` without Intel's SVML, and a scalar libm call per
element costs more than the matrix products around it. ``fast_exp`` is plain arithmetic
that LLVM vectorises: with n = round(x / ln 2) and r = x - n ln 2 (|r| <= ln 2 / 2, ln 2
split in two parts so n ln 2 is exact), exp(x) = 2^n * exp(r), exp(r) by its Taylor series
to r^13 (truncation error below 2e-16), and 2^n built from its exponent bits. Relative
error below 2e-15 for |x| < 30 and 3e-14 out to |x| = 708 (fastmath may fold the two parts
of ln 2 back together). Below -708 it gives 0, above 709.4 inf.
(Divisions in these helpers are ``np.divide``: Python's ``/`` makes Numba check for a zero
divisor, and that branch stops LLVM from vectorising the loop around it.)

Normal CDF (for the exact GELU, x·Φ(x)). With z = |x|/√2 and t = 1 / (1 + z/2),
erfc(z) = t·exp(-z² + f(t)) (the form of Numerical Recipes' ``erfcc``), where f is smooth
on t in (0, 1]. Here f is a Chebyshev series of degree 24 in y = 2(t - T)/(1 - T) - 1,
T = 1/14, fitted by least squares at 192 Chebyshev points to ``math.erfc`` for z <= 26
(beyond, erfc(z) < 1e-295 underflows anyway); Φ(-|x|) = erfc(z)/2. Against ``math.erf``:
absolute error < 3e-15 everywhere, erfc relative error < 5e-15 for z < 5; vectorised, a
few times faster than libm's scalar erf.

Float32. A float32 loop gets float32 versions of ``fast_exp`` and ``normal_cdf_pdf`` under
the same names (each is an ``isinstance`` test that Numba resolves while compiling): twice
the vector lanes, shorter series: exp(r) to r^7 (truncation below 6e-9, under float32's
half-ulp 6e-8), 2^n from float32 exponent bits, so 0 below -87 (where exp < 1.7e-38:
float32's smallest normal number is 1.2e-38) and inf from about 88.38 (true overflow at
88.72); relative error below 1.1e-7 for |x| < 20 (two roundings) and 3e-7 out to 88
(fastmath folds the two parts of ln 2). The float32 CDF takes one exp where the float64
one takes two: erfcx(z) = exp(z²)·erfc(z) = t·exp(f) is itself a polynomial of degree 9 in
the same kind of y (fitted to it directly over the z float32 can use, relative error of
the fit below 3.3e-8), so Φ(-|x|) = erfcx(z)·exp(-z²)/2 and φ(x) = exp(-z²)/√(2π) share
exp(-z²). Against float64: absolute error of Φ below 1.5e-7 and of x·Φ(x) below 1.7e-7
(about one float32 rounding of numbers near 1), relative error of the tail Φ(-|x|) below
1.6e-6 for |x| < 5 and 1.2e-5 out to 13 (z² is rounded to float32 before its exp), no
worse than the float64 scheme's series run in float32, which it replaced (and faster:
the exact GELU's pass is a fifth quicker). Float32 has no room for the tail beyond
|x| ≈ 13 (Φ < 1e-38 underflows to 0); the float64 version goes on to 37. The errors are
checked in tests/ops/test_fused_ops.py; the speeds are in benchmarks/journal/.
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import jit, njit_in_order

LOG2_E = 1.4426950408889634
LN2_HIGH = 6.93147180369123816490e-01   # ln 2 with its low bits zero: n * LN2_HIGH is exact
LN2_LOW = 1.90821492927058770002e-10    # ln 2 - LN2_HIGH
EXP_UNDERFLOW = -708.0
EXP_OVERFLOW = 709.5                    # beyond, 2^n overflows: inf (exact from 709.79)


@jit(inline="always")
def _exp_float64(x):
    """exp(x) in float64, vectorisable (see the module docstring); NaN stays NaN."""
    clamped = EXP_UNDERFLOW if x < EXP_UNDERFLOW else (EXP_OVERFLOW if x > EXP_OVERFLOW else x)
    n = math.floor(clamped * LOG2_E + 0.5)
    r = clamped - n * LN2_HIGH - n * LN2_LOW
    p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (
        1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (
            1.0 / 3628800 + r * (1.0 / 39916800 + r * (1.0 / 479001600 + r * (1.0 / 6227020800)))))))))))))
    power = np.int64((n + 1023) << 52)          # the bits of the float64 2^n
    value = p * power.view(np.float64)
    return 0.0 if x < EXP_UNDERFLOW else value


F32 = np.float32
ZERO_32, HALF_32, ONE_32 = F32(0.0), F32(0.5), F32(1.0)
LOG2_E_32 = F32(LOG2_E)
LN2_HIGH_32 = F32(0.693359375)                 # 9 significant bits: n * LN2_HIGH_32 is exact
LN2_LOW_32 = F32(math.log(2.0) - 0.693359375)
EXP_UNDERFLOW_32, EXP_OVERFLOW_32 = F32(-87.0), F32(88.5)
EXP_TAYLOR_32 = tuple(F32(1.0 / math.factorial(k)) for k in range(8))
E0, E1, E2, E3, E4, E5, E6, E7 = EXP_TAYLOR_32


@jit(inline="always")
def _exp_float32(x):
    """exp(x) in float32, vectorisable (see the module docstring); NaN stays NaN."""
    clamped = EXP_UNDERFLOW_32 if x < EXP_UNDERFLOW_32 else (EXP_OVERFLOW_32 if x > EXP_OVERFLOW_32 else x)
    n = np.floor(clamped * LOG2_E_32 + HALF_32)
    r = clamped - n * LN2_HIGH_32 - n * LN2_LOW_32
    p = E0 + r * (E1 + r * (E2 + r * (E3 + r * (E4 + r * (E5 + r * (E6 + r * E7))))))
    power = np.int32((np.int32(n) + np.int32(127)) << np.int32(23))   # the bits of 2^n
    value = p * power.view(np.float32)
    return ZERO_32 if x < EXP_UNDERFLOW_32 else value


@jit(inline="always")
def fast_exp(x):
    """exp(x) at the precision of x (the branch is resolved when Numba compiles)."""
    if isinstance(x, np.float32):
        return _exp_float32(x)
    return _exp_float64(x)


SIGN_REST_32, SIGN_REST_64 = np.int32(0x7FFFFFFF), np.int64(0x7FFFFFFFFFFFFFFF)
INT32_LOWEST, INT64_LOWEST = np.int32(-2147483648), np.int64(-9223372036854775808)


@jit()  # not inlined by Numba: a precision switch (see ``like``)
def row_peak(row):
    """The largest element of a 1-D float row with at least one element, in the row's dtype.

    Compared as integers: a float's bits b, as a signed integer, with the lower bits
    flipped when negative (b ^ ((b >> 31) & 0x7FFFFFFF) in float32), are in the order of
    the floats, and LLVM vectorises an integer maximum (a float max, whose NaN rules keep it
    one scalar chain, is four times slower). A row
    holding a NaN may come out with a NaN peak or with its largest other element; either
    way the row's exp(x - peak) sum turns NaN (a caller that special-cases a peak of -inf
    must look for the NaN itself).

    Each element's bits are a scalar view, in one function: an integer view of the row
    (an array made per row) and a second call would cost a quarter of a softmax row of 64
    float32."""
    if isinstance(row[0], np.float32):
        best = INT32_LOWEST
        for c in range(row.size):
            b = np.float32(row[c]).view(np.int32)
            key = np.int32(b ^ ((b >> 31) & SIGN_REST_32))
            best = key if key > best else best
        return np.int32(best ^ ((best >> 31) & SIGN_REST_32)).view(np.float32)   # the map is its own inverse
    best_64 = INT64_LOWEST
    for c in range(row.size):
        b_64 = np.float64(row[c]).view(np.int64)
        key_64 = b_64 ^ ((b_64 >> 63) & SIGN_REST_64)
        best_64 = key_64 if key_64 > best_64 else best_64
    return np.int64(best_64 ^ ((best_64 >> 63) & SIGN_REST_64)).view(np.float64)


@njit_in_order  # not inline="always": Numba would inline it with the caller's reassociation
def minus_in_order(x, first, second):
    """(x - first) - second, in this order, inside loops compiled with reassociation: there
    x - (first + second) would lose every digit that first + second rounds away. Log-softmax
    takes (x - peak) - log(sum(exp(row - peak))) (x and peak large and equal: 1e20), layer
    norm (x - shift) - (mean - shift) (a row far from zero: 1e4 + N(0, 1))."""
    return (x - first) - second


@jit()  # not inlined by Numba (LLVM inlines it): see below
def like(x, c):
    """The float constant ``c`` in the float type of ``x`` (Numba turns ``x32 * 0.5`` into
    float64 arithmetic: a Python float is a float64). Resolved while compiling. Inlined at
    Numba's level, its result would stay float64: Numba cannot resolve a precision switch
    (``fast_exp``'s) whose argument comes from another one inlined the same way."""
    if isinstance(x, np.float32):
        return np.float32(c)
    return c


@jit(inline="always")
def tanh_halves(x):
    """(½(1 + tanh x), ½(1 - tanh x)) at the precision of x, each without cancellation:
    with e = exp(-2|x|) in (0, 1] and d = 1 / (1 + e), they are (d, e·d) for x >= 0 and
    (e·d, d) below (1 + tanh x computed as a sum would be 0 in float32 from x ≈ -9, where
    it is 3e-8). Relative error of each about two roundings; no overflow anywhere."""
    e = fast_exp(-abs(x + x))
    d = np.divide(like(x, 1.0), like(x, 1.0) + e)
    return (d, e * d) if x >= like(x, 0.0) else (e * d, d)


@jit(inline="always")
def fast_tanh(x):
    """tanh(x) at the precision of x, through ``fast_exp``: absolute error ~1e-16 in
    float64, ~1e-7 in float32."""
    upper, lower = tanh_halves(x)
    return upper - lower


INV_SQRT_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
ERFC_T_LOW = 1.0 / 14.0
ERFC_Y_SCALE = 2.0 / (1.0 - ERFC_T_LOW)
ERFC_SERIES = (  # Chebyshev coefficients c0 .. c24 of f (see the module docstring)
    -0.609267959864411, 0.6040158823276717, 0.013711483828846063, -0.008217478410719795,
    -0.0005296465789388566, 0.0002857297081548734, 1.4928076140099852e-05, -1.358333485303687e-05,
    3.004956101424332e-08, 6.984316881854326e-07, -5.8473432542961006e-08, -3.306831406608078e-08,
    6.6623014905558354e-09, 1.1390091976742969e-09, -5.181295868604948e-10, 7.209382311345228e-13,
    2.9627781797366726e-11, -4.259109371161376e-12, -1.0367762171429488e-12, 3.9735000468940535e-13,
    -6.609096239381041e-15, -2.0634069063496306e-14, 3.896932203555184e-15, 1.3309640907037263e-15,
    -1.8954529692713922e-15)


# The same polynomial in powers of y (well conditioned on [-1, 1]: |coefficients| < 0.7),
# for Horner's rule over a constant array, which LLVM vectorises (a loop over a tuple it
# does not).
ERFC_POWERS = np.polynomial.chebyshev.cheb2poly(np.array(ERFC_SERIES))


@jit(inline="always")
def _normal_cdf_pdf_float64(x):
    """(Φ(x), φ(x)) of the standard normal distribution, vectorisable (module docstring)."""
    z = abs(x) * INV_SQRT_2
    t = np.divide(1.0, 1.0 + 0.5 * z)
    y = max(t - ERFC_T_LOW, 0.0) * ERFC_Y_SCALE - 1.0
    series = 0.0
    for k in range(ERFC_POWERS.size - 1, -1, -1):
        series = series * y + ERFC_POWERS[k]
    gauss = fast_exp(-z * z)                          # exp(-x²/2)
    tail = 0.5 * t * gauss * fast_exp(series)         # Φ(-|x|) = erfc(z) / 2
    cdf = tail if x < 0.0 else 1.0 - tail
    return cdf, gauss * INV_SQRT_2PI


INV_SQRT_2_32, INV_SQRT_2PI_32 = F32(INV_SQRT_2), F32(INV_SQRT_2PI)
# Float32: erfcx(z) = exp(z²)·erfc(z) itself as a polynomial of degree 9 in y, for z in
# [0, 9.4] (beyond, exp(-z²) is below float32's range): Chebyshev coefficients fitted by
# weighted least squares (relative error) at 400 Chebyshev points to math.erfc(z)·exp(z²),
# T = 1 / (1 + 9.4/2). Relative error of the fit below 3.3e-8.
ERFCX_T_LOW_32 = 1.0 / (1.0 + 9.4 / 2)
ERFCX_SERIES_32 = (
    0.43416375460847245, 0.4599741712999254, 0.09581645126572262, 0.010330354886116905,
    -0.00013839329456840586, -0.0001505045439215631, 1.4205231805379716e-06, 2.965095933159081e-06,
    -1.7851483780719617e-07, -7.358299660022789e-08)
ERFCX_POWERS_32 = np.polynomial.chebyshev.cheb2poly(np.array(ERFCX_SERIES_32)).astype(np.float32)
ERFCX_T_LOW_F32, ERFCX_Y_SCALE_32 = F32(ERFCX_T_LOW_32), F32(2.0 / (1.0 - ERFCX_T_LOW_32))


@jit(inline="always")
def _tail_and_gauss_float32(x):
    """(Φ(-|x|), exp(-x²/2)) in float32, from one exp: Φ(-|x|) = erfc(z)/2 = erfcx(z)·exp(-z²)/2
    with z = |x|/√2 and erfcx(z) the polynomial in y = 2(t - T)/(1 - T) - 1, t = 1/(1 + z/2)."""
    z = abs(x) * INV_SQRT_2_32
    t = np.divide(ONE_32, ONE_32 + HALF_32 * z)
    y = max(t - ERFCX_T_LOW_F32, ZERO_32) * ERFCX_Y_SCALE_32 - ONE_32
    scaled = ZERO_32
    for k in range(ERFCX_POWERS_32.size - 1, -1, -1):
        scaled = scaled * y + ERFCX_POWERS_32[k]
    gauss = fast_exp(-z * z)                          # exp(-x²/2)
    return HALF_32 * scaled * gauss, gauss


@jit(inline="always")
def _normal_cdf_pdf_float32(x):
    """(Φ(x), φ(x)) in float32, both from the one exp of ``_tail_and_gauss_float32``."""
    tail, gauss = _tail_and_gauss_float32(x)
    cdf = tail if x < ZERO_32 else ONE_32 - tail
    return cdf, gauss * INV_SQRT_2PI_32


@jit(inline="always")
def normal_cdf_pdf(x):
    """(Φ(x), φ(x)) at the precision of x."""
    if isinstance(x, np.float32):
        return _normal_cdf_pdf_float32(x)
    return _normal_cdf_pdf_float64(x)


@jit(inline="always")
def normal_cdf(x):
    """Φ(x) at the precision of x (``normal_cdf_pdf``'s first half)."""
    return normal_cdf_pdf(x)[0]


# -- GELU (both forms), for the loops of F.gelu and of the fused FFN ---------------------------

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_TANH_C = 0.044715


@jit(inline="always")
def gelu(v, tanh):
    """GELU of v at v's precision: v·Φ(v), or with ``tanh`` ½v(1 + tanh(u)),
    u = √(2/π)(v + 0.044715v³). ``tanh`` must be a constant of the calling loop (a closure
    variable), so that the loop holds one form and no branch."""
    if tanh:
        u = like(v, SQRT_2_OVER_PI) * v * (like(v, 1.0) + like(v, GELU_TANH_C) * v * v)
        return v * tanh_halves(u)[0]
    return v * normal_cdf(v)


@jit(inline="always")
def gelu_with_slope(v, tanh):
    """(gelu(v), d gelu / dv) at v's precision; ``tanh`` as in ``gelu``. The slope is
    Φ(v) + v·φ(v), or ½(1 + t) + ½v(1 - t²)·√(2/π)(1 + 3·0.044715v²) with t = tanh(u),
    where ½(1 - t²) = 2·½(1 + t)·½(1 - t)."""
    if tanh:
        square = v * v
        u = like(v, SQRT_2_OVER_PI) * v * (like(v, 1.0) + like(v, GELU_TANH_C) * square)
        upper, lower = tanh_halves(u)
        inner_slope = like(v, SQRT_2_OVER_PI) * (like(v, 1.0) + like(v, 3.0 * GELU_TANH_C) * square)
        return v * upper, upper + like(v, 2.0) * v * upper * lower * inner_slope
    cdf, pdf = normal_cdf_pdf(v)
    return v * cdf, cdf + v * pdf
