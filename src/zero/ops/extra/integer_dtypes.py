"""The conversions to PyTorch's other integer dtypes: ``x.byte()`` (uint8), ``x.char()``
(int8), ``x.short()`` (int16) -- new memory unless ``x`` already has the dtype, as
``x.long()``. (The dtypes themselves, their promotion and their limits: ``zero.dtypes``.)"""
from __future__ import annotations

from ... import dtypes
from ...tensors.tensor import Tensor
from ..conversion import to_dtype


def to_uint8(input: Tensor) -> Tensor:
    """``x.byte()``."""
    return to_dtype(input, dtypes.uint8)


def to_int8(input: Tensor) -> Tensor:
    """``x.char()``."""
    return to_dtype(input, dtypes.int8)


def to_int16(input: Tensor) -> Tensor:
    """``x.short()``."""
    return to_dtype(input, dtypes.int16)
