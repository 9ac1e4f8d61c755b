"""PyTorch's other factories: ``scalar_tensor``, ``range`` (deprecated, its end included),
``empty_strided`` / ``Tensor.new_empty_strided`` (a tensor of given strides over a storage
just large enough), ``empty_permuted`` (dimensions laid out in memory in a given order),
``asarray`` (shares memory where it can) and ``frombuffer`` (a tensor over a buffer's memory).
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..backends.device import Device, cpu, to_device
from ..dtypes import DTypeLike, Number
from ..errors import ShapeError, ValueRangeError
from .creation import _finish, from_numpy, tensor
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


def asarray(obj: Any, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
            copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing its memory when it can (as PyTorch's): a tensor of the
    dtype and device asked for is returned itself, a CPU NumPy array of the dtype is shared.
    ``copy=True`` always copies; ``copy=False`` refuses (ValueError) where sharing is impossible."""
    if isinstance(obj, Tensor):
        target_dtype = dtypes.to_dtype(dtype) if dtype is not None else obj.dtype
        target_device = to_device(device) if device is not None else obj.device
        converts = target_dtype is not obj.dtype or target_device is not obj.device
        if copy is False and converts:
            raise ValueError(f"asarray: can't alias tensor with dtype {obj.dtype.name} on {obj.device} into dtype "
                             f"{target_dtype.name} on {target_device} (copy=False)")
        if copy:
            return obj.to(device=target_device, dtype=target_dtype).clone()
        return obj.to(device=target_device, dtype=target_dtype) if converts else obj
    if isinstance(obj, (np.ndarray, np.generic)):
        array = np.asarray(obj)
        shareable = (not copy and (device is None or to_device(device) is cpu)
                     and (dtype is None or dtypes.to_dtype(dtype).numpy == array.dtype))
        if shareable and isinstance(obj, np.ndarray):
            try:
                return _finish(from_numpy(array), requires_grad)
            except (ValueError, TypeError):
                pass
        if copy is False:
            raise ValueError(f"asarray: cannot share the memory of a NumPy {array.dtype} array as the tensor asked "
                             "for (copy=False)")
        return _finish(tensor(array.copy(), dtype=dtype, device=device), requires_grad)
    if copy is False:
        raise ValueError(f"asarray: a {type(obj).__name__} has no memory a tensor can share (copy=False)")
    return _finish(tensor(obj, dtype=dtype, device=device), requires_grad)


def frombuffer(buffer: Any, *, dtype: DTypeLike, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor over an object's buffer (``bytearray``, ``array.array``, ``mmap`` ...):
    ``count`` elements of ``dtype`` from byte ``offset`` on (all that fit when -1). It shares
    the memory: writes through either are seen by both."""
    dtype = dtypes.to_dtype(dtype)
    length = memoryview(buffer).nbytes
    itemsize = dtype.itemsize
    if not 0 <= offset < length:
        raise ValueError(f"frombuffer: offset ({offset} bytes) must be non-negative and no greater than buffer "
                         f"length ({length} bytes) minus 1")
    if count == -1:
        if (length - offset) % itemsize:
            raise ValueError(f"frombuffer: buffer length ({length - offset} bytes) after offset ({offset} bytes) "
                             f"must be a multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif count <= 0 or count * itemsize > length - offset:
        raise ValueError(f"frombuffer: requested buffer length ({count} * {itemsize} bytes) after offset ({offset} "
                         f"bytes) must not be greater than actual buffer length ({length} bytes)")
    array = np.frombuffer(buffer, dtype=dtype.numpy, count=count, offset=offset)
    return _finish(from_numpy(array), requires_grad)


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: DTypeLike | None = None,
              device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor of ``size`` elements of ``dtype`` from a file's bytes. ``shared``: the
    file memory-mapped -- writes to the tensor go to the file (created, or grown, as needed);
    otherwise a copy of the file's first bytes (it must hold them all)."""
    if device is not None and to_device(device) is not cpu:
        raise RuntimeError("from_file: only CPU tensors can be mapped from a file")
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    nbytes = size * dtype.itemsize
    if shared:
        with open(filename, "ab") as file:       # (created if missing; grown to the size asked for)
            if file.tell() < nbytes:
                file.truncate(nbytes)
        if size == 0:
            return _finish(empty_strided((0,), (1,), dtype=dtype), requires_grad)
        mapped = np.memmap(filename, dtype=dtype.numpy, mode="r+", shape=(size,))
        return _finish(from_numpy(mapped), requires_grad)
    with open(filename, "rb") as file:
        data = file.read(nbytes)
    if len(data) < nbytes:
        raise RuntimeError(f"from_file: unexpected end of file: {filename} holds {len(data)} bytes, {size} elements "
                           f"of {dtype.name} need {nbytes}")
    return _finish(tensor(np.frombuffer(data, dtype=dtype.numpy).copy(), dtype=dtype), requires_grad)
