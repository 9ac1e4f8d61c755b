"""PyTorch's other factories: ``scalar_tensor``, ``range`` (deprecated, its end included),
``empty_strided`` / ``Tensor.new_empty_strided`` (a tensor of given strides over a storage
just large enough) and ``empty_permuted`` (dimensions laid out in memory in a given order).
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Sequence
import numpy as np

from .. import dtypes
from ..backends.device import Device, cpu, to_device
from ..dtypes import DTypeLike, Number
from ..errors import ShapeError, ValueRangeError
from .creation import _finish
from .meta import TensorMeta, contiguous_strides
from .storage import Storage
from .tensor import Tensor


def scalar_tensor(s: Number, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` says otherwise
    (also for an int or a bool, as PyTorch's)."""
    if not isinstance(s, (bool, int, float)):
        raise TypeError(f"scalar_tensor(): argument 's' must be a number, not {type(s).__name__}")
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    return _finish(Tensor._from_host(np.asarray(s), dtype, to_device(device or cpu)), requires_grad)


def range(start: Number, end: Number, step: Number = 1, *, dtype: DTypeLike | None = None,  # noqa: A001
          device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """start, start + step, ... up to and including ``end``; of the default float dtype unless
    ``dtype`` says otherwise. Deprecated in PyTorch (a UserWarning): ``arange`` excludes the end."""
    warnings.warn("zero.range is deprecated and will be removed in a future release because its behavior "
                  "is inconsistent with Python's range builtin. Instead, use zero.arange, which produces "
                  "values in [start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise ValueRangeError("range: step must be nonzero")
    if (end - start) / step < 0:
        raise ValueRangeError(f"range: upper bound and larger bound inconsistent with step sign "
                              f"(start {start}, end {end}, step {step})")
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    count = math.floor((end - start) / step) + 1
    values = start + np.arange(count, dtype=np.float64) * step
    return _finish(Tensor._from_host(values, dtype, to_device(device or cpu)), requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: DTypeLike | None = None,
                  device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` read through ``stride``, over a new storage just
    large enough for the elements those strides reach."""
    shape, strides = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise ShapeError(f"empty_strided: mismatch in length of strides and shape ({len(strides)} strides for "
                         f"{len(shape)} sizes)")
    if any(n < 0 for n in shape) or any(s < 0 for s in strides):
        raise ValueRangeError(f"empty_strided: sizes and strides must be non-negative, got {list(shape)} and "
                              f"{list(strides)}")
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    device = to_device(device or cpu)
    elements = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    storage = Storage(elements * dtype.itemsize, device)
    t = Tensor._from_storage(storage, TensorMeta(shape, strides, 0, dtype, device, None))
    return _finish(t, requires_grad)


def new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype: DTypeLike | None = None,
                      device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """``empty_strided`` with this tensor's dtype and device unless given."""
    return empty_strided(size, stride, dtype=dtype if dtype is not None else self.dtype,
                         device=device if device is not None else self.device, requires_grad=requires_grad)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: DTypeLike | None = None,
                   device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose dimensions lie in memory in the order
    ``physical_layout`` (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is
    channels-last."""
    shape, order = tuple(int(n) for n in size), tuple(int(d) for d in physical_layout)
    if sorted(order) != list(builtins.range(len(shape))):
        raise ShapeError(f"empty_permuted: physical_layout {list(order)} must be a permutation of the "
                         f"{len(shape)} dimensions")
    physical_strides = contiguous_strides(tuple(shape[d] for d in order))
    strides = tuple(physical_strides[order.index(d)] for d in builtins.range(len(shape)))
    return empty_strided(shape, strides, dtype=dtype, device=device, requires_grad=requires_grad)
