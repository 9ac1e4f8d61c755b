"""The math functions of two and three tensors (ops/binary_math.py): through the op harness,
against PyTorch at the special values and for mixed dtypes (values, result dtypes, errors,
gradients -- at 0 and at ties, where the conventions live), and in place."""
from __future__ import annotations

import math

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError

SHAPE = (3, 4)


def _xlogy(x, y):
    return np.where(x == 0, 0.0, x * np.log(y))


def _lerp(s, e, w):
    return s + w * (e - s)


# name: (zero function, NumPy reference, keyword arguments for check_op)
BINARY = {
    "atan2": (lambda a, b: a.atan2(b), np.arctan2, {}),
    "arctan2": (lambda a, b: zero.arctan2(a, b), np.arctan2, {}),
    "hypot": (lambda a, b: zero.hypot(a, b), np.hypot, {}),
    "logaddexp": (lambda a, b: a.logaddexp(b), np.logaddexp, {}),
    "xlogy": (lambda a, b: zero.xlogy(a, b), _xlogy, dict(low=0.2, high=3.0)),
    "fmax": (lambda a, b: a.fmax(b), np.fmax, {}),
    "fmin": (lambda a, b: zero.fmin(a, b), np.fmin, {}),
    "remainder": (lambda a, b: a.remainder(b), np.remainder, dict(low=0.3, high=3.0)),
    "mod_operator": (lambda a, b: (a - 1.7) % b, lambda a, b: np.remainder(a - 1.7, b), dict(low=0.3, high=3.0)),
    "fmod": (lambda a, b: zero.fmod(a - 1.7, b), lambda a, b: np.fmod(a - 1.7, b), dict(low=0.3, high=3.0)),
    "floor_divide": (lambda a, b: (a // b) * b + a, lambda a, b: np.floor_divide(a, b) * b + a,
                     dict(low=0.3, high=3.0)),
    "div_trunc": (lambda a, b: zero.div(a - 1.7, b, rounding_mode="trunc") + a,
                  lambda a, b: np.trunc((a - 1.7) / b) + a, dict(low=0.3, high=3.0)),
    "div_floor": (lambda a, b: a.div(b - 1.7, rounding_mode="floor") * a,
                  lambda a, b: np.floor_divide(a, b - 1.7) * a, dict(low=0.3, high=3.0)),
    "clamp_min_tensor": (lambda a, b: a.clamp_min(b), np.maximum, {}),
    "clamp_max_tensor": (lambda a, b: zero.clamp_max(a, b), np.minimum, {}),
    "multiply": (lambda a, b: zero.multiply(a, b), np.multiply, {}),
    "subtract_alpha": (lambda a, b: a.subtract(b, alpha=2), lambda a, b: a - 2 * b, {}),
    "divide": (lambda a, b: zero.divide(a, b), np.divide, dict(low=0.5, high=2.0)),
    "true_divide": (lambda a, b: a.true_divide(b), np.divide, dict(low=0.5, high=2.0)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_through_the_harness(name):
    fn, ref, kwargs = BINARY[name]
    check_op(fn, ref, [SHAPE, SHAPE], **kwargs)


SCALAR = {
    "atan2_number": (lambda a: zero.atan2(a, 0.5), lambda a: np.arctan2(a, 0.5), {}),
    "xlogy_number_first": (lambda a: zero.xlogy(2.0, a), lambda a: 2.0 * np.log(a), dict(low=0.2, high=3.0)),
    "rmod": (lambda a: 5.0 % a, lambda a: np.remainder(5.0, a), dict(low=0.3, high=3.0)),
    "rfloordiv": (lambda a: 5.0 // a + a, lambda a: np.floor_divide(5.0, a) + a, dict(low=0.3, high=3.0)),
    "clamp_min_number": (lambda a: zero.clamp_min(a, 0.1), lambda a: np.maximum(a, 0.1), {}),
    "clamp_max_number": (lambda a: a.clamp_max(-0.1), lambda a: np.minimum(a, -0.1), {}),
    "lerp_number": (lambda s, e: zero.lerp(s, e, 0.3), lambda s, e: _lerp(s, e, 0.3), {}),
    "lerp_number_high": (lambda s, e: s.lerp(e, 0.8), lambda s, e: _lerp(s, e, 0.8), {}),
}


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_python_number_operands(name):
    fn, ref, kwargs = SCALAR[name]
    shapes = [SHAPE] * (fn.__code__.co_argcount)
    check_op(fn, ref, shapes, **kwargs)


def test_three_operand_ops_through_the_harness():
    check_op(lambda s, e, w: zero.lerp(s, e, w), _lerp, [SHAPE, SHAPE, SHAPE])
    check_op(lambda x, a, b: zero.addcmul(x, a, b, value=0.5), lambda x, a, b: x + 0.5 * a * b, [SHAPE] * 3)
    check_op(lambda x, a, b: x.addcdiv(a, b, value=-2), lambda x, a, b: x - 2 * a / b, [SHAPE] * 3,
             low=0.5, high=2.0)


# -- against PyTorch: special values, ties, zeros, mixed dtypes ------------------------------------

VALUES = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 0.5, math.inf, -math.inf, math.nan])
A = np.repeat(VALUES, len(VALUES))            # every pair of special values
B = np.tile(VALUES, len(VALUES))
NAMES = ["atan2", "arctan2", "hypot", "logaddexp", "xlogy", "fmax", "fmin", "floor_divide", "remainder", "fmod",
         "clamp_min", "clamp_max", "multiply", "subtract", "divide", "true_divide"]


@pytest.mark.parametrize("name", NAMES)
def test_every_pair_of_special_values_matches_torch(name):
    for dtype in (np.float32, np.float64):
        a, b = A.astype(dtype), B.astype(dtype)
        check_against_torch(lambda lib, x, y: getattr(lib, name)(x, y), [a, b], context=f"{name} {dtype}")
        check_against_torch(lambda lib, x, y: getattr(x, name)(y), [a, b], context=f"x.{name} {dtype}")


INTEGER_A = np.array([7, -7, 6, -6, 0, 1, 100], dtype=np.int64)
INTEGER_B = np.array([2, 2, -4, -4, 3, -1, 7], dtype=np.int64)
MIXED = {
    "int64": (INTEGER_A, INTEGER_B),
    "int32": (INTEGER_A.astype(np.int32), INTEGER_B.astype(np.int32)),
    "uint8": (np.array([7, 6, 0, 200], dtype=np.uint8), np.array([2, 4, 3, 7], dtype=np.uint8)),
    "int_float": (INTEGER_A, INTEGER_B.astype(np.float32) + 0.5),
    "float32_float64": (INTEGER_A.astype(np.float32), INTEGER_B.astype(np.float64)),
    "bool_bool": (np.array([True, False, True]), np.array([True, True, False])),
    "int_bool": (INTEGER_A[:3], np.array([True, True, True])),
}


@pytest.mark.parametrize("kinds", sorted(MIXED))
@pytest.mark.parametrize("name", NAMES)
def test_dtype_promotion_matches_torch(name, kinds):
    a, b = MIXED[kinds]
    # (Zero computes hypot and logaddexp of integers in the default float, as atan2; PyTorch refuses)
    check_against_torch(lambda lib, x, y: getattr(lib, name)(x, y), [a, b], context=f"{name} {kinds}",
                        extends=name in ("hypot", "logaddexp"))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "atan2", "xlogy", "clamp_min", "fmax"])
def test_python_numbers_on_either_side_match_torch(name):
    x = np.array([7.0, -7.0, 0.0, 2.5])
    i = np.array([7, -7, 0, 3])
    for operand in (2, -2.5, 0.5):  # (PyTorch's atan2 and fmax take no number: Zero does)
        for t in (x, i):
            check_against_torch(lambda lib, t: getattr(lib, name)(t, operand), [t], context=f"{name}({operand})",
                                extends=name in ("atan2", "fmax"))
    if name in ("remainder", "xlogy"):  # PyTorch takes a number first for these
        check_against_torch(lambda lib, t: getattr(lib, name)(3, t), [i + 10], context=f"{name}(3, i)")


def test_operators_floordiv_and_mod_match_torch():
    a, b = INTEGER_A, INTEGER_B
    check_against_torch(lambda lib, x, y: (x // y, x % y, x // 3, -7 // y, x % -3, 11 % y), [a, b])
    check_against_torch(lambda lib, x, y: (x // y, x % y, 2.5 % y, x // 0.75), [A, B], context="floats")


def test_rounding_modes_match_torch():
    for a, b in ((INTEGER_A, INTEGER_B), (A, B), (INTEGER_A, INTEGER_B.astype(np.float64) + 0.25)):
        for mode in (None, "trunc", "floor"):
            check_against_torch(lambda lib, x, y: lib.div(x, y, rounding_mode=mode), [a, b], context=str(mode))
            check_against_torch(lambda lib, x, y: x.div(y, rounding_mode=mode), [a, b], context=str(mode))


def test_integer_division_extremes_match_torch():
    big = np.array([2 ** 62, -2 ** 63, 2 ** 63 - 1, -5], dtype=np.int64)
    check_against_torch(lambda lib, x: (x // 3, x % 3, lib.fmod(x, 3), lib.div(x, -3, rounding_mode="trunc")), [big])


def test_three_operand_ops_match_torch():
    s, e = A.astype(np.float64), B.astype(np.float64)
    w = np.linspace(-1.5, 2.0, A.size)
    check_against_torch(lambda lib, x, y, t: lib.lerp(x, y, t), [s, e, w])
    check_against_torch(lambda lib, x, y: lib.lerp(x, y, 0.25), [s, e])
    check_against_torch(lambda lib, x, y: x.lerp(y, 1.0), [s, e])
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    t1, t2 = np.linspace(0.5, 2, 3), np.linspace(-2, 3, 6).reshape(2, 3)
    for value in (1, 0.5, -3):
        check_against_torch(lambda lib, a, b, c: lib.addcmul(a, b, c, value=value), [x, t1, t2])
        check_against_torch(lambda lib, a, b, c: a.addcdiv(b, c, value=value), [x, t1, t2])
    ints = np.array([1, 2, 3])
    check_against_torch(lambda lib, a, b, c: lib.addcmul(a, b, c, value=2), [ints, ints, ints])
    check_against_torch(lambda lib, a, b, c: lib.addcmul(a, b, c), [x[0], ints, ints.astype(np.float32)])
    check_against_torch(lambda lib, a, b, c: lib.addcdiv(a, b, c), [x[0], ints, ints])  # both refuse


def test_in_place_forms_match_torch():
    a, b = A.astype(np.float64), B.astype(np.float64)
    for name in ("atan2_", "arctan2_", "hypot_", "xlogy_", "floor_divide_", "remainder_", "fmod_", "clamp_min_",
                 "clamp_max_", "multiply_", "subtract_", "divide_", "true_divide_", "__ifloordiv__", "__imod__"):
        check_against_torch(lambda lib, x, y: getattr(x.clone(), name)(y), [a, b], grad=False, context=name)
        check_against_torch(lambda lib, x, y: getattr(x * 1, name)(y), [a, b], context=f"{name} (graph)")
    check_against_torch(lambda lib, x, y: (x * 1).lerp_(y, 0.75), [a, b])
    check_against_torch(lambda lib, x, y: (x * 1).addcmul_(y, y, value=0.5), [a, b])
    check_against_torch(lambda lib, x, y: (x * 1).div_(y, rounding_mode="floor"), [a, b])
    check_against_torch(lambda lib, x, y: x.clone().div_(y, rounding_mode="trunc"), [INTEGER_A, INTEGER_B])
    check_against_torch(lambda lib, x, y: x.clone().floor_divide_(y), [INTEGER_A, INTEGER_B + 0.5])  # both refuse
    x = zero.tensor([7, -7])
    x //= 2
    x %= 3
    assert x.tolist() == [0, 2] and x.dtype is zero.int64


def test_clamp_with_tensor_bounds_follows_torch_gradients():
    x = np.array([1.0, 2.0, 3.0, math.nan, 1.0])
    low, high = np.array([2.0, 2.0, 2.0, 1.0, math.nan]), np.full(5, 2.5)
    check_against_torch(lambda lib, a, m: lib.clamp(a, min=m), [x, low])
    check_against_torch(lambda lib, a, m: lib.clamp(a, max=m), [x, low])
    check_against_torch(lambda lib, a, m, n: lib.clamp(a, min=m, max=n), [x, low, high])
    check_against_torch(lambda lib, a, m: (a * 1).clamp_(min=m), [x, low])


def test_bad_inputs_name_the_problem():
    i = zero.tensor([1, 2])
    with pytest.raises(ZeroDivisionError, match=r"floor_divide: integer division by zero \(int64\[2\] on cpu by "
                                                r"int64\[2\] on cpu holding a 0\)"):
        i // zero.tensor([1, 0])
    with pytest.raises(ZeroDivisionError, match="remainder: integer division by zero"):
        i % 0
    with pytest.raises(ZeroDivisionError, match="truncate_divide|trunc_divide"):
        zero.div(i, 0, rounding_mode="trunc")
    with pytest.raises(ValueError, match="div: rounding_mode must be None, 'trunc' or 'floor', got 'round'"):
        zero.div(i, 2, rounding_mode="round")
    with pytest.raises(DTypeError, match=r"floor_divide: not defined for two bool operands \(bool\[1\] on cpu"):
        zero.tensor([True]) // zero.tensor([True])
    with pytest.raises(DTypeError, match=r"lerp: end must be floating point, got int64\[2\]"):
        zero.lerp(zero.ones(2), i, 0.5)
    with pytest.raises(DTypeError, match=r"lerp: end float64\[2\] on cpu must have the dtype of start"):
        zero.lerp(zero.ones(2), zero.ones(2, dtype=zero.float64), 0.5)
    with pytest.raises(ShapeError, match=r"lerp: shapes \[2\] and \[3\]"):
        zero.lerp(zero.ones(2), zero.ones(3), 0.5)
    with pytest.raises(DTypeError, match=r"addcdiv: integer division of tensor1 int64\[2\] on cpu by tensor2"):
        zero.addcdiv(zero.ones(2), i, i)
    with pytest.raises(DTypeError, match=r"addcmul: a float value \(0.5\) for int64 operands"):
        zero.addcmul(i, i, i, value=0.5)
    with pytest.raises(ShapeError, match=r"atan2_: the result float32\[2, 2\] on cpu does not have the shape of "
                                         r"the target float32\[2\]"):
        zero.ones(2).atan2_(zero.ones(2, 1))
    with pytest.raises(DTypeError, match=r"floor_divide_: a result of dtype float32 cannot be written into "
                                         r"int64\[2\]"):
        i.floor_divide_(zero.ones(2))
