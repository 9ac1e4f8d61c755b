"""Closeness: ``isclose`` and ``allclose`` (PyTorch's, which are NumPy's):

    |a - b| <= atol + rtol * |b|      elementwise; infinities close only to themselves,
                                      NaN to NaN only with equal_nan
"""
from __future__ import annotations

from ...errors import DTypeError, describe
from ...tensors.tensor import Tensor


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"isclose: expected two tensors, got {describe(input)} and {describe(other)}")
    if input.dtype is not other.dtype:
        raise DTypeError(f"isclose: both tensors must have one dtype, got {describe(input)} and {describe(other)}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    input, other = input.detach(), other.detach()
    equal = input == other
    if not input.dtype.is_floating_point:
        if rtol == 0 and atol == 0:
            return equal
        return equal.logical_or((input - other).abs() <= atol + rtol * other.abs())
    finite = (input - input == 0).logical_and(other - other == 0)            # neither is inf nor nan
    close = equal.logical_or(finite.logical_and((input - other).abs() <= atol + rtol * other.abs()))
    if equal_nan:
        close = close.logical_or((input != input).logical_and(other != other))
    return close


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``a`` is close to ``b``'s (one read of the answer)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())
