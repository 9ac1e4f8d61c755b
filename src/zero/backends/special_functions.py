"""erf, erfc and erfinv in float64, vectorised on any NumPy-like array module ``xp``.

NumPy has none of the three (SciPy has them, but it is no dependency of Zero), and the
kernels must run unchanged on CuPy; so they are written here with nothing but ufuncs,
``where`` and a few fixed-length loops over whole arrays. Accuracy: a few units in the
last place of float64 (relative error ~1e-15), checked against ``math.erf``/``math.erfc``
and a high-precision reference in tests/backends/test_special_functions.py.

    erf(a), a < 1     the Taylor series  2/sqrt(pi) * sum_n (-1)^n a^(2n+1) / (n! (2n+1))
                      (22 terms: the last is below 1e-22 at a = 1)
    erfc(a), a >= 1   Laplace's continued fraction
                          erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
                      evaluated from the back, with as many levels as the band of a needs
                      for 1e-17 (250 at a = 1, 50 from a = 3: ``FRACTION_BANDS``), and exp(-a^2)
                      taken as exp(-h^2) exp(-(a - h)(a + h)) with h = a rounded to 1/16,
                      so that h^2 is exact and the rounding of a^2 (which would cost ~a^2
                      ulps at large a) does not enter
    the other half    erf = 1 - erfc for a >= 1, erfc = 1 - erf for a < 1 (no cancellation:
                      erf(1) = 0.84, erfc(1) = 0.157); odd and even symmetry for a < 0
    erfinv(y)         a first guess (a cubic near 0, Winitzki's closed form further out),
                      then three steps of Halley's method on erf(x) = y, or on
                      erfc(x) = 1 - |y| when |y| > 1/2 (1 - |y| is exact there, and erfc
                      keeps the digits that erf loses next to 1)
"""
from __future__ import annotations

import math
from types import ModuleType

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SERIES_TERMS = 22
# (from a =, levels of the continued fraction): each band's slowest point converges to 1e-17
FRACTION_BANDS = ((1.0, 250), (1.5, 150), (2.0, 90), (3.0, 50))
LARGEST = 30.0            # erfc(30) = 0 in float64 (exp(-900) underflows): larger a (and inf) act as 30
HALLEY_STEPS = 3


def _erf_series(xp: ModuleType, a):
    """erf(a) for |a| <= 1 by its Taylor series (Horner's scheme on a^2)."""
    a2 = a * a
    # sum_n c_n a^(2n), c_n = (-1)^n / (n! (2n+1)), from the last term to the first
    total = xp.zeros_like(a)
    for n in range(SERIES_TERMS - 1, -1, -1):
        total = total * a2 + (-1) ** n / (math.factorial(n) * (2 * n + 1))
    return TWO_OVER_SQRT_PI * a * total


def _exp_minus_square(xp: ModuleType, a):
    """exp(-a^2) without the rounding error of a^2 (see the module docstring)."""
    head = xp.floor(a * 16.0) / 16.0
    return xp.exp(-head * head) * xp.exp(-(a - head) * (a + head))


def _erfc_fraction(xp: ModuleType, a, levels: int):
    """erfc(a) for a >= 1 (and inf, nan) by ``levels`` levels of the continued fraction."""
    a = xp.minimum(a, LARGEST)   # (nan stays nan)
    denominator = a.copy()
    for k in range(levels, 0, -1):
        denominator = a + (0.5 * k) / denominator
    return _exp_minus_square(xp, a) / (math.sqrt(math.pi) * denominator)


def _erf_and_erfc_of_magnitude(xp: ModuleType, a):
    """(erf(a), erfc(a)) for a = |x| >= 0, each from the side where it has its digits. Each
    method runs on the elements of its band only (boolean-mask subsets)."""
    erf, erfc = xp.empty_like(a), xp.empty_like(a)
    small = a < 1.0
    series = _erf_series(xp, a[small])
    erf[small], erfc[small] = series, 1.0 - series
    starts = [start for start, _ in FRACTION_BANDS]
    for (start, levels), end in zip(FRACTION_BANDS, starts[1:] + [None]):
        # the last band also takes inf and nan (which compare False with everything)
        band = (a >= start) & (a < end) if end is not None else ~(a < start)
        fraction = _erfc_fraction(xp, a[band], levels)
        erf[band], erfc[band] = 1.0 - fraction, fraction
    return erf, erfc


def erf(xp: ModuleType, x):
    """erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt, elementwise (float64)."""
    value, _ = _erf_and_erfc_of_magnitude(xp, xp.abs(x))
    return xp.copysign(value, x)  # odd; keeps the sign of -0.0


def erfc(xp: ModuleType, x):
    """erfc(x) = 1 - erf(x), accurate where it is tiny (x large), elementwise (float64)."""
    _, value = _erf_and_erfc_of_magnitude(xp, xp.abs(x))
    return xp.where(x < 0, 2.0 - value, value)


def erfinv(xp: ModuleType, y):
    """The x with erf(x) = y, for -1 <= y <= 1 (+-inf at +-1, nan outside), elementwise (float64)."""
    a = xp.abs(y)
    tail = a > 0.5
    inside = a < 1.0
    a_safe = xp.where(inside, a, 0.0)
    complement = 1.0 - a_safe                       # exact for a > 1/2 (Sterbenz)
    # First guess. Near 0: sqrt(pi)/2 (a + pi a^3 / 12). Further out, Winitzki's
    # erfinv(a) ~ sqrt(sqrt(t^2 - L / 0.147) - t), L = log(1 - a^2), t = 2/(0.147 pi) + L/2.
    near = 0.5 * math.sqrt(math.pi) * (a_safe + math.pi / 12.0 * a_safe ** 3)
    log_term = xp.log(complement) + xp.log1p(a_safe)   # log((1 - a)(1 + a))
    t = 2.0 / (0.147 * math.pi) + 0.5 * log_term
    far = xp.sqrt(xp.sqrt(t * t - log_term / 0.147) - t)
    x = xp.where(tail, far, near)
    # Halley on f(x) = erf(x) - a (or erfc(x) - (1 - a), whose slope is the opposite):
    # f' = 2/sqrt(pi) exp(-x^2), f'' = -2x f', step u / (1 + x u) with the Newton step u = f / f'.
    for _ in range(HALLEY_STEPS):
        erf_x, erfc_x = _erf_and_erfc_of_magnitude(xp, x)
        slope = TWO_OVER_SQRT_PI * _exp_minus_square(xp, x)
        newton = xp.where(tail, (complement - erfc_x), (erf_x - a_safe)) / slope
        x = x - newton / (1.0 + x * newton)
    x = xp.where(inside, x, xp.where(a == 1.0, xp.inf, xp.nan))
    return xp.copysign(x, y)  # odd; nan stays nan
