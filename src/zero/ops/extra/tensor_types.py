"""PyTorch's legacy tensor types: ``zero.FloatTensor(...)``, ``LongTensor`` ... (constructors
from data or from sizes, and ``isinstance(x, zero.FloatTensor)`` as PyTorch answers it: a CPU
tensor of that dtype), and ``Tensor.type()``.

``x.type()`` answers PyTorch's own strings ('torch.FloatTensor', 'torch.cuda.LongTensor'):
programs compare it with those literals (``if x.type() == 'torch.FloatTensor'``), so Zero
gives the same string rather than a 'zero.' one. ``x.type(t)`` takes a dtype, such a string
or one of the classes, and converts (returning x itself when nothing changes, as PyTorch does).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes
from ...dtypes import DType
from ...tensors.creation import empty
from ...tensors.creation import tensor as make_tensor
from ...tensors.tensor import Tensor
from ..conversion import to

_NAMES = {dtypes.float32: "FloatTensor", dtypes.float64: "DoubleTensor", dtypes.float16: "HalfTensor",
          dtypes.bfloat16: "BFloat16Tensor", dtypes.int64: "LongTensor", dtypes.int32: "IntTensor",
          dtypes.uint8: "ByteTensor", dtypes.bool_: "BoolTensor", dtypes.int16: "ShortTensor",
          dtypes.int8: "CharTensor"}
_BY_NAME = {name: dtype for dtype, name in _NAMES.items()}


class _LegacyType(type):
    """The metaclass: ``isinstance(x, FloatTensor)`` is "x is a CPU float32 tensor"."""

    dtype: DType

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype and instance.device.type == "cpu"

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        """``FloatTensor(2, 3)`` (sizes: uninitialised), ``FloatTensor([1, 2])`` (data),
        ``FloatTensor()`` (empty)."""
        if not args:
            return empty(0, dtype=cls.dtype, device=device)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return empty(*args, dtype=cls.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], tuple) and type(args[0]).__name__ == "Size":
            return empty(args[0], dtype=cls.dtype, device=device)
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}(): expected sizes (ints) or one sequence of data, got {args!r}")
        data = args[0]
        if isinstance(data, Tensor):
            return to(data, cls.dtype)
        return make_tensor(np.asarray(data).astype(cls.dtype.numpy) if not isinstance(data, np.ndarray)
                           else data.astype(cls.dtype.numpy), dtype=cls.dtype, device=device)


def _legacy(dtype: DType) -> _LegacyType:
    return _LegacyType(_NAMES[dtype], (), {"dtype": dtype, "__module__": "zero",
                                           "__doc__": f"A CPU tensor of {dtype} (PyTorch's legacy type)."})


FloatTensor = _legacy(dtypes.float32)
DoubleTensor = _legacy(dtypes.float64)
HalfTensor = _legacy(dtypes.float16)
BFloat16Tensor = _legacy(dtypes.bfloat16)
LongTensor = _legacy(dtypes.int64)
IntTensor = _legacy(dtypes.int32)
ByteTensor = _legacy(dtypes.uint8)
BoolTensor = _legacy(dtypes.bool_)
ShortTensor = _legacy(dtypes.int16)
CharTensor = _legacy(dtypes.int8)


def type_name(t: Tensor) -> str:
    """'torch.FloatTensor', 'torch.cuda.FloatTensor' ... (PyTorch's strings)."""
    prefix = "torch." if t.device.type == "cpu" else f"torch.{t.device.type}."
    return prefix + _NAMES[t.dtype]


def tensor_type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> str | Tensor:
    """``x.type()``: PyTorch's type string; ``x.type(dtype or 'torch.LongTensor' or
    zero.LongTensor)``: x converted (x itself when it already is of that type)."""
    if dtype is None:
        return type_name(self)
    if isinstance(dtype, _LegacyType):
        return to(self, dtype.dtype, device="cpu")
    if isinstance(dtype, str):
        parts = dtype.split(".")
        if len(parts) not in (2, 3) or parts[0] not in ("torch", "zero") or parts[-1] not in _BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        device = "cuda" if len(parts) == 3 and parts[1] == "cuda" else "cpu"
        return to(self, _BY_NAME[parts[-1]], device=device)
    return to(self, dtypes.to_dtype(dtype))
