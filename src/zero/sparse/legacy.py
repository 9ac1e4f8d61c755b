"""PyTorch's legacy sparse types, which older graph networks still build their adjacency with:
``zero.sparse.FloatTensor(indices, values, size)`` is ``sparse_coo_tensor(indices, values, size)``
(the values keep their dtype, as PyTorch's do), ``zero.sparse.FloatTensor(2, 3)`` an empty
sparse tensor of that size, and ``isinstance(s, zero.sparse.FloatTensor)`` says "a sparse CPU
tensor of float32"."""
from __future__ import annotations

from typing import Any

from .. import dtypes
from ..dtypes import DType, int64
from ..tensors.creation import zeros
from .functions import sparse_coo_tensor
from .tensor import SparseTensor


class _SparseLegacyType(type):
    dtype: DType

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, SparseTensor) and instance.dtype is cls.dtype and instance.device.type == "cpu"

    def __call__(cls, *args: Any, device: Any = None) -> SparseTensor:
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):   # sizes (none: 0-d)
            size = tuple(args)
            return sparse_coo_tensor(zeros((len(size), 0), dtype=int64, device=device),
                                     zeros((0,), dtype=cls.dtype, device=device), size)
        if len(args) in (2, 3):
            return sparse_coo_tensor(*args, device=device)
        raise TypeError(f"sparse.{cls.__name__}(): expected (indices, values), (indices, values, size) or "
                        f"sizes, got {len(args)} arguments")


def _legacy(name: str, dtype: DType) -> _SparseLegacyType:
    return _SparseLegacyType(name, (), {"dtype": dtype, "__module__": "zero.sparse",
                                        "__doc__": f"A sparse CPU tensor of {dtype} (PyTorch's legacy type)."})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dtypes.bfloat16)
LongTensor = _legacy("LongTensor", dtypes.int64)
IntTensor = _legacy("IntTensor", dtypes.int32)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
