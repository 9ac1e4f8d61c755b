"""What ops share when they take their arguments apart: checks whose messages name the
op and the operands, and the layouts kernels want."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes
from ..dtypes import DType
from ..dtypes import Number as Number  # (ops take it from here)
from ..errors import DTypeError, ShapeError, describe
from ..tensors.meta import Shape, numel
from ..tensors.meta import Sizes as Sizes  # (ops take sizes from here)
from ..tensors.tensor import Tensor

Operand = Tensor | Number       # what an elementwise op takes on either side


def sizes_of(arguments: tuple[Any, ...]) -> Shape:
    """Sizes given either way PyTorch's methods take them: ``x.view(2, 3)`` or ``x.view((2, 3))``."""
    if len(arguments) == 1 and isinstance(arguments[0], (tuple, list)):
        return tuple(arguments[0])
    return tuple(arguments)


def check_floats(op: str, **operands: Tensor | None) -> None:
    """Each operand (None allowed, for optional ones) is a floating-point tensor, all of one
    dtype, the first one's."""
    first: tuple[str, Tensor] | None = None
    for name, t in operands.items():
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a tensor, got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise DTypeError(f"{op}: {name} must be floating point, got {describe(t)}")
        if first is None:
            first = (name, t)
        elif t.dtype is not first[1].dtype:
            raise DTypeError(f"{op}: {name} {describe(t)} must have the dtype of {first[0]} "
                             f"({describe(first[1])}); convert one with .to(dtype)")


def check_shape(op: str, name: str, t: Tensor | None, shape: Shape, meaning: str) -> None:
    if t is not None and t.shape != shape:
        raise ShapeError(f"{op}: {name} must have shape {list(shape)} ({meaning}), got {describe(t)}")


def fill_value(op: str, value: object, dtype: DType) -> Number:
    """A fill value (a number or a 0-d tensor; a TypeError for anything else) as a Python
    number that ``dtype`` holds: an integer dtype refuses inf, nan and numbers out of its
    range (as PyTorch does) instead of wrapping them to garbage."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"{op}: value must be a number or a 0-d tensor, got {describe(value)}")
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")
    if dtype.category == dtypes.INTEGER and not isinstance(value, bool):
        limits = np.iinfo(dtype.numpy)
        if not math.isfinite(value) or not limits.min <= value <= limits.max:
            raise DTypeError(f"{op}: value {value!r} cannot be converted to {dtype.name} without overflow")
    return value


def laid_out(x: Tensor, shape: Shape) -> Tensor:
    """x's elements, in order, as a contiguous tensor of ``shape`` (as many elements) without
    graph: for a contiguous x a second tensor on its storage, made without running an op
    (ops call this on every input, and a detach + reshape pair of ops costs more than a
    small kernel); otherwise a contiguous copy."""
    meta = x._meta
    if meta.contiguous:
        if meta.shape == shape:   # already laid out so (a weight, rows of rows): its metadata serves
            return x._alias()
        return x._reshaped(shape)
    return x.detach().contiguous().reshape(shape)


def rows_of(x: Tensor, width: int) -> Tensor:
    """x, whose trailing dimensions hold ``width`` elements, as a contiguous (N, width)
    tensor without graph (a view when possible): the layout of every kernel that works row
    by row. (An empty x with width 0 keeps its leading dimensions as the rows.)"""
    rows = numel(x._meta.shape) // width if width else math.prod(x.shape[:-1])
    return laid_out(x, (rows, width))


def flat_of(x: Tensor) -> Tensor:
    """x's elements as a contiguous 1-D tensor without graph (a view when possible)."""
    return laid_out(x, (numel(x._meta.shape),))


def array_or_none(t: Tensor | None) -> Any:
    """What a kernel receives for an optional tensor: its array, or None."""
    return None if t is None else t._array
