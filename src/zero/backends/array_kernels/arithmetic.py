"""Arithmetic over ``xp`` (``numpy`` or ``cupy``): fills, the binary operations, comparisons,
logic, selections. Each is the array library's ufunc with ``out=`` and ``casting="unsafe"``
(the result cast into out's dtype, operands broadcast), under ``quiet`` where NumPy would
warn about a value PyTorch gives silently (the package docstring)."""
from __future__ import annotations

import builtins
from types import ModuleType
from typing import Any, cast

import numpy as np

from ..kernel_contract import Array, Operand, Scalar
from ._quiet import quiet

# -- fills, arithmetic, comparisons, logic ---------------------------------------------------------


def fill(xp: ModuleType, out: Array, value: Scalar) -> None:
    out.fill(value)


def add(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.add(a, b, out=out, casting="unsafe")


def sub(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.subtract(a, b, out=out, casting="unsafe")


def mul(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.multiply(a, b, out=out, casting="unsafe")


def div(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    with quiet(xp):                     # x / 0 is inf or nan, as in PyTorch
        xp.true_divide(a, b, out=out, casting="unsafe")


def pow(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    if out.dtype.kind in "iu" and _negative_integer(xp, b):
        # an integer to a negative integer power, as PyTorch gives it (NumPy refuses): the
        # truncated 1 / a ** -b, that is 1 for a == 1, +-1 for a == -1 (by the parity), else 0
        exponent, base = xp.asarray(b), xp.asarray(a)
        negative = exponent < 0
        xp.power(a, xp.where(negative, 0, exponent), out=out, casting="unsafe")
        special = xp.where(base == 1, 1, xp.where(base == -1, 1 - 2 * (exponent % 2), 0))
        xp.copyto(out, xp.where(negative, special, out), casting="unsafe")
        return
    with quiet(xp):
        xp.power(a, b, out=out, casting="unsafe")


def maximum(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.maximum(a, b, out=out, casting="unsafe")


def minimum(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.minimum(a, b, out=out, casting="unsafe")


def fmax(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.fmax(a, b, out=out, casting="unsafe")        # NaN-ignoring maximum


def fmin(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.fmin(a, b, out=out, casting="unsafe")


def eq(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.equal(a, b, out=out, casting="unsafe")


def ne(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.not_equal(a, b, out=out, casting="unsafe")


def lt(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.less(a, b, out=out, casting="unsafe")


def le(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.less_equal(a, b, out=out, casting="unsafe")


def gt(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.greater(a, b, out=out, casting="unsafe")


def ge(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.greater_equal(a, b, out=out, casting="unsafe")


def logical_and(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.logical_and(a, b, out=out, casting="unsafe")


def logical_or(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.logical_or(a, b, out=out, casting="unsafe")


def logical_xor(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.logical_xor(a, b, out=out, casting="unsafe")


def bitwise_and(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.bitwise_and(a, b, out=out, casting="unsafe")   # integers bit by bit; bools as logic


def bitwise_or(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.bitwise_or(a, b, out=out, casting="unsafe")


def bitwise_xor(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.bitwise_xor(a, b, out=out, casting="unsafe")


def arctan2(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.arctan2(a, b, out=out, casting="unsafe")


def hypot(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    xp.hypot(a, b, out=out, casting="unsafe")


def logaddexp(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    with quiet(xp):
        xp.logaddexp(a, b, out=out, casting="unsafe")


def floor_divide(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    with quiet(xp):                     # Python's rounding: -7 // 2 == -4
        xp.floor_divide(a, b, out=out, casting="unsafe")


def _negative_integer(xp: ModuleType, b: Operand) -> bool:
    """Whether an integer exponent has a negative entry. A Python number is looked at on the host
    (no copy to the device, which a CUDA graph's capture could not hold); an array of integers is
    read from its device."""
    if isinstance(b, xp.ndarray):
        return b.dtype.kind == "i" and bool((b < 0).any())
    return isinstance(b, (int, np.integer)) and not isinstance(b, bool) and bool(b < 0)


def remainder(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    with quiet(xp):                     # the sign of the divisor: -7 % 2 == 1
        xp.remainder(a, b, out=out, casting="unsafe")


def fmod(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    with quiet(xp):                     # the sign of the dividend: fmod(-7, 2) == -1
        xp.fmod(a, b, out=out, casting="unsafe")


def _as_array(xp: ModuleType, value: Operand, dtype: Any) -> Array:
    """A Python number as a 0-d array (CuPy's ufuncs want one array operand at least)."""
    return value if isinstance(value, xp.ndarray) else xp.asarray(value, dtype=dtype)


def truncate_divide(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    """a / b rounded toward zero. Floats: the quotient truncated; integers exactly, as
    (a - fmod(a, b)) // b (a multiple of b divided by b)."""
    with quiet(xp):
        if out.dtype.kind == "f":
            xp.true_divide(a, b, out=out)
            xp.trunc(out, out=out)
        else:
            xp.fmod(_as_array(xp, a, out.dtype), b, out=out)
            xp.subtract(a, out, out=out)
            xp.floor_divide(out, b, out=out)


def xlogy(xp: ModuleType, x: Operand, y: Operand, out: Array) -> None:
    """x * log(y), and 0 where x == 0 unless y is NaN (PyTorch's xlogy)."""
    y = _as_array(xp, y, out.dtype)
    with quiet(xp):
        xp.log(y, out=out)
        xp.multiply(x, out, out=out)
    xp.copyto(out, 0, where=(_as_array(xp, x, out.dtype) == 0) & ~xp.isnan(y))


def lerp(xp: ModuleType, start: Operand, end: Operand, weight: Operand, out: Array) -> None:
    """start + weight (end - start), written as end - (end - start)(1 - weight) where
    |weight| >= 1/2, so that weight 1 gives end exactly (PyTorch's two-sided formula)."""
    with quiet(xp):
        difference = xp.subtract(end, start, dtype=out.dtype)
        if not isinstance(weight, xp.ndarray):  # one number: one side of the formula
            number = cast(float, weight)
            if builtins.abs(number) < 0.5:
                xp.multiply(difference, number, out=out)
                xp.add(out, start, out=out)
            else:
                xp.multiply(difference, 1 - number, out=out)
                xp.subtract(end, out, out=out)
            return
        near_start = xp.abs(weight) < 0.5
        xp.copyto(out, start + weight * difference, where=near_start, casting="unsafe")
        xp.copyto(out, end - difference * (1 - weight), where=~near_start, casting="unsafe")


def addcmul(xp: ModuleType, x: Operand, tensor1: Operand, tensor2: Operand, value: Scalar, out: Array) -> None:
    """out = x + value * tensor1 * tensor2 (three passes, no temporary)."""
    xp.multiply(tensor1, tensor2, out=out)
    if value != 1:
        xp.multiply(out, value, out=out)
    xp.add(out, x, out=out)


def addcdiv(xp: ModuleType, x: Operand, tensor1: Operand, tensor2: Operand, value: Scalar, out: Array) -> None:
    """out = x + value * tensor1 / tensor2."""
    with quiet(xp):
        xp.true_divide(tensor1, tensor2, out=out)
    if value != 1:
        xp.multiply(out, value, out=out)
    xp.add(out, x, out=out)


def any_zero(xp: ModuleType, x: Array) -> bool:
    """Whether an (integer) array holds a 0: integer division checks its divisor."""
    return bool((x == 0).any())


# -- selections -------------------------------------------------------------------------------------


def where(xp: ModuleType, condition: Array, a: Operand, b: Operand, out: Array) -> None:
    # where has no out=; copyto with a mask writes straight into out.
    xp.copyto(out, b, casting="unsafe")
    xp.copyto(out, a, casting="unsafe", where=condition)


def clamp(xp: ModuleType, x: Array, low: Scalar | None, high: Scalar | None, out: Array) -> None:
    """out = min(max(x, low), high), either bound None: NumPy's clip, computed in the
    promoted type and cast to out's (an integer out rounds toward zero: clamp_(0.5, 2.5)
    of ints gives 0, 1, 2, 2). Two ufunc calls in that one type rather than clip,
    whose CuPy version has no casting argument; the values are clip's, as a cast to
    out's type is monotone."""
    dtype = xp.result_type(x, *(bound for bound in (low, high) if bound is not None))
    source = x
    if low is not None:
        xp.maximum(source, low, out=out, dtype=dtype, casting="unsafe")
        source = out
    if high is not None:
        xp.minimum(source, high, out=out, dtype=dtype, casting="unsafe")
