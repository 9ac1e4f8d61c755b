"""Closeness: ``isclose`` and ``allclose`` (PyTorch's, which are NumPy's):

    |a - b| <= atol + rtol * |b|      elementwise; infinities close only to themselves,
                                      NaN to NaN only with equal_nan
"""
from __future__ import annotations

from ..errors import DTypeError, describe
from ..tensors.tensor import Tensor


def isclose(a: Tensor, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"isclose: expected two tensors, got {describe(a)} and {describe(b)}")
    if a.dtype is not b.dtype:
        raise DTypeError(f"isclose: both tensors must have one dtype, got {describe(a)} and {describe(b)}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    a, b = a.detach(), b.detach()
    equal = a == b
    if not a.dtype.is_floating_point:
        return equal if (rtol == 0 and atol == 0) else equal.logical_or((a - b).abs() <= atol + rtol * b.abs())
    finite = (a - a == 0).logical_and(b - b == 0)            # neither is inf nor nan
    close = equal.logical_or(finite.logical_and((a - b).abs() <= atol + rtol * b.abs()))
    if equal_nan:
        close = close.logical_or((a != a).logical_and(b != b))
    return close


def allclose(a: Tensor, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``a`` is close to ``b``'s (one read of the answer)."""
    return bool(isclose(a, b, rtol, atol, equal_nan).all().item())
