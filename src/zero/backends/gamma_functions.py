"""lgamma, digamma and trigamma in float64, vectorised on any NumPy-like array module ``xp``
(NumPy has none of them, SciPy is no dependency, and the kernels must run unchanged on CuPy).

    x < 1/2     the reflection formulas
                    lgamma(x)  = log(pi / |sin(pi x)|) - lgamma(1 - x)
                    digamma(x) = digamma(1 - x) - pi / tan(pi x)
                    trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x)
    1/2 <= x    the recurrences up to x + k >= 10
                    lgamma(x) = lgamma(x + k) - log(x (x + 1) ... (x + k - 1))
                    digamma(x) = digamma(x + k) - sum 1 / (x + i)
                    trigamma(x) = trigamma(x + k) + sum 1 / (x + i)^2
    x >= 10     the asymptotic (Stirling) series, 7 terms: below 1e-16 relative there

Poles: lgamma is +inf at 0 and the negative integers; digamma is -inf at 0 (as PyTorch
gives it) and NaN at the negative integers; trigamma is +inf at all of them.
"""
from __future__ import annotations

import math
from types import ModuleType

LARGE = 10.0
HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
# Stirling's series for lgamma: B_2k / (2k (2k - 1) x^(2k - 1))
LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
# digamma: - B_2k / (2k x^2k);  trigamma: B_2k / x^(2k + 1)
DIGAMMA_SERIES = (-1 / 12, 1 / 120, -1 / 252, 1 / 240, -1 / 132, 691 / 32760, -1 / 12)
TRIGAMMA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _shifted(xp: ModuleType, x, term):
    """(x moved up to >= LARGE, the sum of ``term(y)`` over the steps taken)."""
    total = xp.zeros_like(x)
    y = x
    for _ in range(int(LARGE)):
        small = y < LARGE
        total = total + xp.where(small, term(y), 0.0)
        y = xp.where(small, y + 1.0, y)
    return y, total


def _series(xp: ModuleType, inverse_square, coefficients):
    """sum c_k z^k for z = 1/x^2 (Horner's scheme), with the first coefficient at z^1."""
    result = xp.zeros_like(inverse_square)
    for c in reversed(coefficients):
        result = (result + c) * inverse_square
    return result


def _sin_pi(xp: ModuleType, x):
    """sin(pi x), exactly 0 at the integers (x reduced to [-1, 1] first, exactly)."""
    r = x - 2.0 * xp.round(x * 0.5)
    return xp.where(r == xp.floor(r), 0.0, xp.sin(math.pi * r))


def _reflected(xp: ModuleType, x):
    """(where x < 1/2, the argument the formulas use: 1 - x there, x elsewhere)."""
    left = x < 0.5
    return left, xp.where(left, 1.0 - x, x)


def lgamma(xp: ModuleType, x):
    left, a = _reflected(xp, x)
    y, logs = _shifted(xp, a, xp.log)
    stirling = (y - 0.5) * xp.log(y) - y + HALF_LOG_TWO_PI + _series(xp, 1.0 / (y * y), LGAMMA_SERIES) * y
    right = stirling - logs
    reflection = xp.log(math.pi / xp.abs(_sin_pi(xp, x))) - right
    out = xp.where(left, reflection, right)
    return xp.where(xp.isinf(x), xp.inf, out)


def digamma(xp: ModuleType, x):
    left, a = _reflected(xp, x)
    y, reciprocals = _shifted(xp, a, lambda t: 1.0 / t)
    right = xp.log(y) - 0.5 / y + _series(xp, 1.0 / (y * y), DIGAMMA_SERIES) - reciprocals
    sin = _sin_pi(xp, x)
    cos = xp.cos(math.pi * (x - 2.0 * xp.round(x * 0.5)))
    reflection = right - math.pi * cos / sin
    out = xp.where(left, reflection, right)
    out = xp.where(left & (sin == 0), xp.nan, out)        # the negative integers
    out = xp.where(x == 0, -xp.inf, out)
    out = xp.where(x == xp.inf, xp.inf, out)
    return xp.where(x == -xp.inf, xp.nan, out)


def trigamma(xp: ModuleType, x):
    left, a = _reflected(xp, x)
    y, squares = _shifted(xp, a, lambda t: 1.0 / (t * t))
    inverse = 1.0 / y
    right = inverse + 0.5 * inverse * inverse + _series(xp, inverse * inverse, TRIGAMMA_SERIES) * inverse + squares
    sin = _sin_pi(xp, x)
    reflection = math.pi ** 2 / (sin * sin) - right
    out = xp.where(left, reflection, right)
    return xp.where(x == xp.inf, 0.0, out)
