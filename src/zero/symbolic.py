"""PyTorch's ``sym_*`` helpers, for the plain numbers Zero's shapes always are.

PyTorch's compiler traces sizes as symbolic integers, and these functions combine them
without Python's ``max``, ``int`` ... forcing a value. Zero has no symbolic sizes: on
plain numbers the helpers are the arithmetic they stand for, which is what PyTorch's
give for plain numbers too.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["sym_float", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum"]


def _number(op: str, value: Any) -> Any:
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"{op}: expected a number, got {type(value).__name__}")
    return value


def sym_max(a: Any, b: Any) -> Any:
    """The larger; a float when either is (as PyTorch's)."""
    _number("sym_max", a), _number("sym_max", b)
    larger = a if a >= b else b
    return float(larger) if isinstance(a, float) or isinstance(b, float) else int(larger)


def sym_min(a: Any, b: Any) -> Any:
    """The smaller; a float when either is (as PyTorch's)."""
    _number("sym_min", a), _number("sym_min", b)
    smaller = a if a <= b else b
    return float(smaller) if isinstance(a, float) or isinstance(b, float) else int(smaller)


def sym_float(a: Any) -> float:
    return float(_number("sym_float", a))


def sym_int(a: Any) -> int:
    """Rounded toward zero, as ``int``."""
    return int(_number("sym_int", a))


def sym_not(a: Any) -> bool:
    return not _number("sym_not", a)


def sym_sqrt(a: Any) -> float:
    return math.sqrt(_number("sym_sqrt", a))


def sym_sum(args: Iterable[Any]) -> Any:
    """The sum of the numbers given (one iterable)."""
    total: Any = 0
    for value in args:
        total = total + _number("sym_sum", value)
    return total


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``."""
    return t if b else f
