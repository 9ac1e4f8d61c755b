"""The math functions of one tensor (ops/unary_math.py): through the op harness (every
layout, float32 and float64, gradcheck), at the special values against PyTorch (values,
result dtypes, errors, gradients), on integer and bool inputs, and in place."""
from __future__ import annotations

import math

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError

SHAPE = (3, 4)
_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)


def _erfinv_by_bisection(y):
    """The reference erfinv: 80 halvings of [-6, 6] with math.erf (independent of Zero's)."""
    low, high = np.full(y.shape, -6.0), np.full(y.shape, 6.0)
    for _ in range(80):
        middle = (low + high) / 2
        above = _erf(middle) > y
        high, low = np.where(above, middle, high), np.where(above, low, middle)
    return (low + high) / 2


# name: (zero function, NumPy reference, keyword arguments for check_op)
UNARY = {
    "log1p": (lambda a: a.log1p(), np.log1p, dict(low=-0.5, high=3.0)),
    "expm1": (lambda a: zero.expm1(a), np.expm1, {}),
    "log2": (lambda a: a.log2(), np.log2, dict(low=0.2, high=3.0)),
    "log10": (lambda a: zero.log10(a), np.log10, dict(low=0.2, high=3.0)),
    "exp2": (lambda a: a.exp2(), np.exp2, {}),
    "reciprocal": (lambda a: a.reciprocal(), np.reciprocal, dict(low=0.5, high=2.0)),
    "tan": (lambda a: a.tan(), np.tan, dict(low=-1.2, high=1.2)),
    "asin": (lambda a: a.asin(), np.arcsin, dict(low=-0.9, high=0.9)),
    "arcsin": (lambda a: zero.arcsin(a), np.arcsin, dict(low=-0.9, high=0.9)),
    "acos": (lambda a: a.arccos(), np.arccos, dict(low=-0.9, high=0.9)),
    "atan": (lambda a: zero.atan(a), np.arctan, {}),
    "sinh": (lambda a: a.sinh(), np.sinh, {}),
    "cosh": (lambda a: zero.cosh(a), np.cosh, {}),
    "asinh": (lambda a: a.asinh(), np.arcsinh, {}),
    "acosh": (lambda a: zero.arccosh(a), np.arccosh, dict(low=1.2, high=3.0)),
    "atanh": (lambda a: a.atanh(), np.arctanh, dict(low=-0.9, high=0.9)),
    "erf": (lambda a: a.erf(), _erf, dict(low=-3.0, high=3.0)),
    "erfc": (lambda a: zero.erfc(a), _erfc, dict(low=-3.0, high=3.0)),
    "erfinv": (lambda a: a.erfinv(), _erfinv_by_bisection, dict(low=-0.95, high=0.95)),
    "frac": (lambda a: a.frac(), lambda a: a - np.trunc(a), dict(low=-3.0, high=3.0)),
    "nan_to_num": (lambda a: zero.nan_to_num(a), np.nan_to_num, {}),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_through_the_harness(name):
    fn, ref, kwargs = UNARY[name]
    check_op(fn, ref, [SHAPE], **kwargs)


# Steps: the forward against NumPy, the gradient 0 (gradcheck holds away from the jumps, which
# random values never hit).
STEPS = {
    "floor": (lambda a: a.floor(), np.floor),
    "ceil": (lambda a: zero.ceil(a), np.ceil),
    "trunc": (lambda a: a.trunc(), np.trunc),
    "fix": (lambda a: zero.fix(a), np.trunc),
    "round": (lambda a: a.round(), np.round),
    "round_decimals": (lambda a: zero.round(a, decimals=1), lambda a: np.round(a, 1)),
    "floor_scaled": (lambda a: (a * 3).floor() + a, lambda a: np.floor(a * 3) + a),
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_steps_through_the_harness(name):
    fn, ref = STEPS[name]
    check_op(fn, ref, [SHAPE], low=-3.0, high=3.0)


PREDICATES = {
    "isnan": (lambda a: ((a > 0).float().log() * 0).isnan(), lambda a: a <= 0),  # -inf * 0 is nan
    "isinf": (lambda a: zero.isinf(1 / (a > 0).float()), lambda a: a <= 0),
    "isfinite": (lambda a: zero.isfinite(1 / (a > 0).float()), lambda a: a > 0),
    "isposinf": (lambda a: (a.sign() / (a > 1).float()).isposinf(), lambda a: (a > 0) & (a <= 1)),
    "isneginf": (lambda a: zero.isneginf(a.sign() / (a > 1).float()), lambda a: (a < 0)),
    "signbit": (lambda a: a.signbit(), np.signbit),
}


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_predicates_through_the_harness(name):
    fn, ref = PREDICATES[name]
    check_op(fn, ref, [SHAPE], grad=False)


# -- against PyTorch at the special values, for every input dtype ----------------------------------

SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, 2.5, -2.5, 3.5, 0.99, -0.99, 1e-30, 7.25, -13.5,
                    1e30, -1e30, math.inf, -math.inf, math.nan])
INTEGERS = np.array([0, 1, -1, 2, -3, 7, 100, -128], dtype=np.int64)
NAMES = ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "nan_to_num", "floor", "ceil", "round",
         "trunc", "fix", "frac", "log1p", "expm1", "log2", "log10", "exp2", "reciprocal", "erf", "erfc", "erfinv",
         "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "acosh", "atanh",
         "arcsinh", "arccosh", "arctanh", "absolute", "negative", "positive", "sgn"]
with np.errstate(all="ignore"):  # (1e30 is inf in float16)
    SPECIAL16 = SPECIAL.astype(np.float16)
INPUTS = {
    "float32": SPECIAL.astype(np.float32),
    "float64": SPECIAL,
    "float16": SPECIAL16,
    "int64": INTEGERS,
    "int32": INTEGERS.astype(np.int32),
    "uint8": np.array([0, 1, 2, 200, 255], dtype=np.uint8),
    "bool": np.array([True, False, True]),
}


@pytest.mark.parametrize("dtype", sorted(INPUTS))
@pytest.mark.parametrize("name", NAMES)
def test_function_and_method_match_torch(name, dtype):
    x = INPUTS[dtype]
    check_against_torch(lambda lib, a: getattr(lib, name)(a), [x], context=f"{name}({dtype})")
    check_against_torch(lambda lib, a: getattr(a, name)(), [x], context=f"x.{name}() ({dtype})")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("isnan", "isinf", "isfinite", "isposinf",
                                                                "isneginf", "signbit", "positive")])
def test_in_place_forms_match_torch(name, dtype):
    x = INPUTS[dtype]
    check_against_torch(lambda lib, a: getattr(a.clone(), name + "_")(), [x], grad=False, context=f"{name}_")
    # In the graph: the in-place op on a non-leaf, differentiated through.
    if dtype.startswith("float"):
        check_against_torch(lambda lib, a: getattr(a * 1, name + "_")(), [x], context=f"{name}_ (graph)")


def test_round_decimals_and_nan_to_num_arguments_match_torch():
    values = np.array([1.25, 2.35, 125.0, 135.0, -0.05, 0.15, 2.5, -3.5, 1234.5678], dtype=np.float32)
    for decimals in (-2, -1, 0, 1, 2, 3):
        check_against_torch(lambda lib, a: lib.round(a, decimals=decimals), [values], context=f"decimals={decimals}")
        check_against_torch(lambda lib, a: a.round(decimals=decimals), [values.astype(np.float64)])
    check_against_torch(lambda lib, a: lib.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-9.0), [SPECIAL])
    check_against_torch(lambda lib, a: a.nan_to_num(posinf=2.0), [SPECIAL16])
    check_against_torch(lambda lib, a: a.clone().nan_to_num_(nan=-1.0), [SPECIAL], grad=False)


def test_float_only_functions_of_integers_give_the_default_float():
    assert zero.log1p(zero.tensor([0, 1])).dtype is zero.float32
    zero.set_default_dtype(zero.float64)
    try:
        assert zero.erf(zero.tensor([True])).dtype is zero.float64
    finally:
        zero.set_default_dtype(zero.float32)
    assert zero.floor(zero.tensor([3, -2])).dtype is zero.int64  # integers stay integers
    assert zero.isnan(zero.tensor([3])).dtype is zero.bool


def test_round_is_half_to_even():
    x = zero.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5])
    assert x.round().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0]


def test_bad_inputs_name_the_problem():
    with pytest.raises(DTypeError, match=r"floor: not defined for a bool tensor \(bool\[2\] on cpu\)"):
        zero.floor(zero.tensor([True, False]))
    with pytest.raises(DTypeError, match=r"round: decimals=2 needs a floating-point tensor, got int64\[2\]"):
        zero.tensor([1, 2]).round(decimals=2)
    with pytest.raises(DTypeError, match=r"frac: needs a floating-point tensor, got int64\[1\]"):
        zero.tensor([1]).frac()
    with pytest.raises(DTypeError, match=r"positive: .* bool tensor \(bool\[1\] on cpu\)"):
        zero.positive(zero.tensor([True]))
    with pytest.raises(TypeError, match="round: decimals must be an int, got float"):
        zero.round(zero.ones(2), decimals=1.5)
    with pytest.raises(DTypeError, match=r"log1p_: a result of dtype float32 cannot be written into int64\[2\]"):
        zero.tensor([1, 2]).log1p_()


def test_gradients_at_the_edges_match_torch():
    edges = np.array([-1.0, 1.0, 0.0, -0.0, 0.5, -0.5, 2.0])
    for name in ("asin", "acos", "atanh", "acosh", "erfinv", "log1p", "reciprocal", "nan_to_num", "frac", "floor"):
        check_against_torch(lambda lib, a: getattr(lib, name)(a), [edges], context=name)


def test_erf_is_accurate_in_float64():
    values = np.concatenate([np.linspace(-6, 6, 1201), [1e-300, -1e-300, 27.0, -27.0]])
    got = zero.erf(zero.tensor(values)).numpy()
    np.testing.assert_allclose(got, _erf(values), rtol=1e-15, atol=0)
    got = zero.erfc(zero.tensor(values)).numpy()
    np.testing.assert_allclose(got, _erfc(values), rtol=2e-15, atol=0)
    y = np.linspace(-0.999999, 0.999999, 2001)
    np.testing.assert_allclose(_erf(zero.erfinv(zero.tensor(y)).numpy()), y, rtol=1e-15, atol=1e-16)


@pytest.mark.parametrize("name", ["abs_", "neg_", "sign_", "exp_", "log_", "sqrt_", "rsqrt_", "sin_", "cos_", "tanh_",
                                  "sigmoid_", "square_", "absolute_", "negative_", "sgn_"])
def test_in_place_forms_of_the_older_functions_match_torch(name):
    x = np.array([0.5, -1.5, 2.0, 0.0, 3.25])
    check_against_torch(lambda lib, a: getattr(a.clone(), name)(), [x], grad=False, context=name)
    check_against_torch(lambda lib, a: getattr(a * 1, name)(), [x], context=f"{name} (graph)")
