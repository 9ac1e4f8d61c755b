"""erf, erfc and erfinv of backends/special_functions.py: float64 accuracy against the
standard library's erf/erfc and, where installed, a 40-digit reference (mpmath) and PyTorch."""
from __future__ import annotations

import math

import numpy as np
import pytest

from zero.backends import special_functions

RNG = np.random.default_rng(0)
X = np.concatenate([RNG.uniform(-1, 1, 2000), RNG.uniform(-7, 7, 2000), RNG.uniform(0.95, 1.05, 500),
                    RNG.uniform(5, 27, 500), 10.0 ** RNG.uniform(-300, 0, 300),
                    [0.0, 1.0, -1.0, 1.5, 2.0, 3.0, 26.5, 27.2, 28.0, 1e-320]])
Y = np.concatenate([RNG.uniform(-1, 1, 2000), 1 - 10.0 ** RNG.uniform(-16, -1, 500), 10.0 ** RNG.uniform(-300, -1, 300),
                    [0.5, -0.5, 0.5000000001, 0.4999999999, 1 - 2 ** -53, -(1 - 2 ** -53)]])


def _relative_error(got, want):
    return np.abs(got - want) / np.maximum(np.abs(want), 1e-300)


def test_erf_and_erfc_agree_with_the_standard_library():
    assert _relative_error(special_functions.erf(np, X), np.array([math.erf(x) for x in X])).max() < 1e-15
    assert _relative_error(special_functions.erfc(np, X), np.array([math.erfc(x) for x in X])).max() < 2e-15


def test_erfinv_inverts_erf_and_erfc():
    x = special_functions.erfinv(np, Y)
    assert _relative_error(np.array([math.erf(v) for v in x]), Y).max() < 2e-16 * 4
    tail = np.abs(Y) > 0.5   # near +-1: compare 1 - |y| with erfc, which keeps its digits
    complement = np.array([math.erfc(v) for v in np.abs(x[tail])])
    assert _relative_error(complement, 1 - np.abs(Y[tail])).max() < 1e-14


def test_against_a_40_digit_reference():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    assert _relative_error(special_functions.erf(np, X), np.array([float(mpmath.erf(x)) for x in X])).max() < 5e-16
    assert _relative_error(special_functions.erfc(np, X),
                           np.array([float(mpmath.erfc(x)) for x in X])).max() < 1.5e-15
    want = np.array([float(mpmath.erfinv(y)) for y in Y])
    assert _relative_error(special_functions.erfinv(np, Y), want).max() < 1e-15


def test_against_torch():
    torch = pytest.importorskip("torch")
    for name, values in (("erf", X), ("erfc", X), ("erfinv", Y)):
        want = getattr(torch, name)(torch.tensor(values)).numpy()
        assert _relative_error(getattr(special_functions, name)(np, values), want).max() < 2e-15, name


def test_special_values():
    erf, erfc, erfinv = special_functions.erf, special_functions.erfc, special_functions.erfinv
    special = np.array([0.0, -0.0, math.inf, -math.inf, math.nan])
    np.testing.assert_array_equal(erf(np, special), [0.0, -0.0, 1.0, -1.0, math.nan])
    assert np.signbit(erf(np, special))[1]
    np.testing.assert_array_equal(erfc(np, special), [1.0, 1.0, 0.0, 2.0, math.nan])
    np.testing.assert_array_equal(erfinv(np, np.array([0.0, 1.0, -1.0, 1.5, -2.0, math.nan])),
                                  [0.0, math.inf, -math.inf, math.nan, math.nan, math.nan])
    assert np.signbit(erfinv(np, np.array([-0.0])))[0]
    tiny = np.array([1e-310, -5e-324])
    np.testing.assert_allclose(erf(np, tiny), 2 / math.sqrt(math.pi) * tiny, rtol=1e-15)
    np.testing.assert_allclose(erfinv(np, np.array([1e-300])), [math.sqrt(math.pi) / 2 * 1e-300], rtol=1e-15)
