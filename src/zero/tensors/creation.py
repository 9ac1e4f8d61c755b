"""Making tensors: from Python data and NumPy arrays, filled, ranged, random.

(Moving them between devices and dtypes, the book's ``DeviceTransfer``, is an op:
``zero.ops.conversion``.)"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes
from ..backends.device import Device, cpu, to_device
from ..dtypes import DType, DTypeLike, Number
from ..errors import DTypeError, DTypeNotImplementedError, ShapeError, ShapeValueError, ValueRangeError
from ..errors import DataTypeError, SizeTypeError
from ..random import Generator, default_generator
from .meta import Shape, Sizes, TensorMeta
from .storage import Storage
from .tensor import Tensor


def _shape_args(size: tuple[Any, ...]) -> Shape:
    """zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) all mean shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, numbers.Integral):
            raise SizeTypeError(f"sizes must be integers, got {tuple(size)}")
        if s < 0:
            raise ShapeError(f"sizes must be non-negative integers, got {tuple(size)}")
    return tuple(int(s) for s in size)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty(*size: int | Sizes, dtype: DTypeLike | None = None, device: Device | str | None = None,
          requires_grad: bool = False) -> Tensor:
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    return _finish(Tensor._empty(_shape_args(size), dtype, to_device(device or cpu)), requires_grad)


def full(size: int | Sizes, fill_value: Number, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
         requires_grad: bool = False) -> Tensor:
    if not isinstance(fill_value, (numbers.Number, np.generic, Tensor)):
        raise TypeError(f"full(): fill_value must be a number, got {type(fill_value).__name__}")
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value) if isinstance(fill_value, (bool, int, float)) else None
    t = empty(_shape_args((size,)), dtype=dtype, device=device)
    t._meta.device.kernels.fill(t._array, fill_value)
    return _finish(t, requires_grad)


def zeros(*size: int | Sizes, dtype: DTypeLike | None = None, device: Device | str | None = None,
          requires_grad: bool = False) -> Tensor:
    t = empty(*size, dtype=dtype, device=device)
    t._meta.device.kernels.fill(t._array, 0)
    return _finish(t, requires_grad)


def ones(*size: int | Sizes, dtype: DTypeLike | None = None, device: Device | str | None = None,
         requires_grad: bool = False) -> Tensor:
    t = empty(*size, dtype=dtype, device=device)
    t._meta.device.kernels.fill(t._array, 1)
    return _finish(t, requires_grad)


def _like(fn: Callable[..., Tensor], other: Tensor, dtype: DTypeLike | None, device: Device | str | None,
          requires_grad: bool, *args: Any) -> Tensor:
    return fn(other.shape, *args, dtype=dtype or other.dtype, device=device or other.device,
              requires_grad=requires_grad)


def empty_like(t: Tensor, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    return _like(empty, t, dtype, device, requires_grad)


def zeros_like(t: Tensor, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad)


def ones_like(t: Tensor, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
              requires_grad: bool = False) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad)


def full_like(t: Tensor, fill_value: Number, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
              requires_grad: bool = False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


# -- Tensor's new_* methods: new tensors with another's dtype and device unless told ------------


def new_empty(self: Tensor, *size: int | Sizes, dtype: DTypeLike | None = None, device: Device | str | None = None,
              requires_grad: bool = False) -> Tensor:
    return empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_zeros(self: Tensor, *size: int | Sizes, dtype: DTypeLike | None = None, device: Device | str | None = None,
              requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_ones(self: Tensor, *size: int | Sizes, dtype: DTypeLike | None = None, device: Device | str | None = None,
             requires_grad: bool = False) -> Tensor:
    return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_full(self: Tensor, size: int | Sizes, fill_value: Number, *, dtype: DTypeLike | None = None,
             device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def rand_like(t: Tensor, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
              requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad, generator=generator)


def randn_like(t: Tensor, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
               requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                 requires_grad=requires_grad, generator=generator)


# -- from Python data and NumPy ------------------------------------------------------------


def _nested_shape(data: object, where: str = "data") -> Shape:
    """The shape of a nested list, checked to be regular (every row the same length)."""
    if isinstance(data, (list, tuple)):
        if not data:
            return (0,)
        shapes = [_nested_shape(item, f"{where}[{i}]") for i, item in enumerate(data)]
        for i, s in enumerate(shapes[1:], start=1):
            if s != shapes[0]:
                raise ShapeValueError(f"tensor(): nested sequences must be regular, but {where}[0] has shape "
                                      f"{list(shapes[0])} and {where}[{i}] has shape {list(s)}")
        return (len(data),) + shapes[0]
    if isinstance(data, Tensor):
        return data.shape
    if isinstance(data, (np.generic, np.ndarray)):
        return data.shape
    if isinstance(data, numbers.Number):
        return ()
    raise DataTypeError(f"tensor(): cannot make a tensor from {type(data).__name__} at {where}")


def _infer_dtype(array: np.ndarray) -> DType:
    kind = array.dtype.kind
    if kind == "f":
        return dtypes.from_numpy_dtype(array.dtype)
    if kind in "iu":
        return dtypes.from_numpy_dtype(array.dtype)
    if kind == "b":
        return dtypes.bool_
    raise DTypeError(f"tensor(): cannot make a tensor from data of NumPy kind {array.dtype}")


def tensor(data: Any, dtype: DTypeLike | None = None, device: Device | str | None = None,
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, a NumPy array, a number or a
    tensor). Python floats become the default dtype (float32), ints int64, bools bool;
    NumPy arrays keep their dtype."""
    if isinstance(data, Tensor):
        result = data.detach().to(device=device or data.device, dtype=dtype, copy=True)
        return _finish(result, requires_grad)
    if isinstance(data, np.ndarray):
        array = data
    else:
        _nested_shape(data)  # clear errors for ragged input before NumPy sees it
        array = np.array(_unwrap_tensors(data))
        if array.dtype.kind == "f" and dtype is None and not _has_numpy_floats(data):
            array = array.astype(dtypes.get_default_dtype().numpy)
        elif array.dtype.kind in "iu" and array.dtype != np.int64 and not _has_numpy_floats(data):
            array = array.astype(np.int64)
    target = dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(array)
    if target is dtypes.uint64 and array.dtype.kind == "f" and not isinstance(data, np.ndarray):
        array = _as_uint64(data, array)   # ints above int64's range: NumPy made them float64
    return _finish(Tensor._from_host(array, target, to_device(device or cpu)), requires_grad)


def _as_uint64(data: Any, array: np.ndarray) -> np.ndarray:
    """``data`` read straight as uint64 (exact up to 2**64 - 1), or ``array`` when NumPy
    refuses (a negative number, a float)."""
    try:
        return np.array(_unwrap_tensors(data), dtype=np.uint64)
    except (OverflowError, TypeError, ValueError):
        return array


def _has_numpy_floats(data: object) -> bool:
    return isinstance(data, np.generic)


def _unwrap_tensors(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._host_array()
    if isinstance(data, (list, tuple)):
        return [_unwrap_tensors(d) for d in data]
    return data


def as_tensor(data: Any, dtype: DTypeLike | None = None, device: Device | str | None = None) -> Tensor:
    """Share memory where possible (a tensor, or a CPU NumPy array of a matching dtype)."""
    if isinstance(data, Tensor):
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (device is None or to_device(device) is cpu) and (
            dtype is None or dtypes.to_dtype(dtype).numpy == data.dtype):
        try:
            return from_numpy(data)
        except (ValueError, DTypeError):
            pass
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing ``array``'s memory: writes through either are seen by both."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a NumPy array, got {type(array).__name__}")
    dtype = dtypes.from_numpy_dtype(array.dtype)
    itemsize = array.dtype.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError("from_numpy: arrays with negative strides cannot be shared; pass array.copy()")
    if any(s % itemsize for s in array.strides):
        raise ValueError("from_numpy: strides that are not a multiple of the item size cannot be shared")
    if array.size == 0:
        return Tensor._from_host(array, dtype, cpu)
    extent = 1 + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // itemsize
    first = array[tuple(slice(0, 1) for _ in array.shape)].reshape(1)
    handle = np.lib.stride_tricks.as_strided(first.view(np.uint8), shape=(extent * itemsize,), strides=(1,))
    storage = Storage.wrap(handle, extent * itemsize, cpu)
    meta = TensorMeta(tuple(array.shape), tuple(s // itemsize for s in array.strides), 0, dtype, cpu)
    return Tensor._from_storage(storage, meta)


# -- ranges ----------------------------------------------------------------------------------


def arange(start: Number, end: Number | None = None, step: Number = 1, *, dtype: DTypeLike | None = None,
           device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueRangeError("arange: step must be non-zero")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    dtype = dtypes.to_dtype(dtype)
    if (end - start) * step < 0:
        raise ValueRangeError(f"arange: the bounds {start} and {end} are inconsistent with the step's sign ({step})")
    count = max(0, math.ceil((end - start) / step))
    positions: np.ndarray = np.arange(count, dtype=np.float64 if dtype.is_floating_point else np.int64)
    values = start + positions * step
    return _finish(Tensor._from_host(values, dtype, to_device(device or cpu)), requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: DTypeLike | None = None,
             device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if dtype is dtypes.bool_:
        raise DTypeNotImplementedError("linspace: not implemented for dtype bool (as in PyTorch); "
                                       "use an integer or floating-point dtype")
    if not isinstance(steps, numbers.Integral):
        raise TypeError(f"linspace: steps must be an int, got {type(steps).__name__}")
    if steps < 0:
        raise ValueRangeError(f"linspace: steps must be non-negative, got {steps}")
    values = np.linspace(start, end, steps)
    return _finish(Tensor._from_host(values, dtype, to_device(device or cpu)), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: DTypeLike | None = None, device: Device | str | None = None,
        requires_grad: bool = False) -> Tensor:
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    for size in (n, m):
        if size is not None and not isinstance(size, numbers.Integral):
            raise SizeTypeError(f"eye: sizes must be integers, got {n}, {m}")
        if size is not None and size < 0:
            raise ValueRangeError(f"eye: sizes must be non-negative, got {n}, {m}")
    return _finish(Tensor._from_host(np.eye(n, m), dtype, to_device(device or cpu)), requires_grad)


# -- random ----------------------------------------------------------------------------------


def _generator(generator: Generator | None) -> Generator:
    return generator or default_generator()


def rand(*size: int | Sizes, generator: Generator | None = None, dtype: DTypeLike | None = None,
         device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    t = empty(*size, dtype=dtype, device=device)
    _generator(generator).fill_uniform(t)
    return _finish(t, requires_grad)


def randn(*size: int | Sizes, generator: Generator | None = None, dtype: DTypeLike | None = None,
          device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """Standard normal."""
    t = empty(*size, dtype=dtype, device=device)
    _generator(generator).fill_normal(t)
    return _finish(t, requires_grad)


def randint(low: int, high: int | Sizes | None = None, size: Sizes = (), *, generator: Generator | None = None,
            dtype: DTypeLike | None = None, device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    """Integers in [low, high): ``randint(low, high, size)``, or ``randint(high, size)``
    from 0 (PyTorch's two forms)."""
    if isinstance(high, (tuple, list)):
        size, high, low = high, low, 0   # (size first: mypy reads the right side after each target)
    elif high is None:
        low, high = 0, low
    if high <= low:
        raise ValueRangeError(f"randint: high ({high}) must be greater than low ({low})")
    t = empty(*_shape_args((size,)), dtype=dtype or dtypes.int64, device=device)
    _generator(generator).fill_integers(t, low, high)
    return t


def randperm(n: int, *, generator: Generator | None = None, dtype: DTypeLike | None = None,
             device: Device | str | None = None) -> Tensor:
    if n < 0:
        raise ValueRangeError(f"randperm: n must be non-negative, got {n}")
    values = _generator(generator).permutation(n)
    return Tensor._from_host(values, dtypes.to_dtype(dtype) if dtype else dtypes.int64, to_device(device or cpu))
