"""ReduceOp: how a reducing collective combines the ranks' values (PyTorch's ``dist.ReduceOp``).

    SUM       x_0 + x_1 + ... + x_{N-1}
    AVG       the sum divided by N (floating-point tensors only)
    PRODUCT   x_0 · x_1 · ... · x_{N-1}
    MIN, MAX  elementwise over the ranks
"""
from __future__ import annotations

import enum

from ..errors import DTypeError, describe


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self) -> str:
        return f"ReduceOp.{self.name}"


def check_reduce_op(function: str, op, tensor) -> ReduceOp:
    """``op`` as a ReduceOp, or the error that says what was wrong with it for ``tensor``."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{function}: op must be a zero.distributed.ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), "
                        f"got {op!r}")
    if tensor._meta.dtype.name == "bool":
        raise DTypeError(f"{function}: cannot reduce a bool tensor ({describe(tensor)}); reduce it as uint8 "
                         "(.to(zero.uint8)) and compare the result")
    if op is ReduceOp.AVG and not tensor._meta.dtype.is_floating_point:
        raise DTypeError(f"{function}: ReduceOp.AVG needs a floating-point tensor, got {describe(tensor)}; "
                         "use SUM and divide")
    return op
