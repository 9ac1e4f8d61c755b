"""Tensor's older and smaller methods: ``apply_`` / ``map_`` / ``map2_`` (a Python function
run element by element, on the CPU, in place), ``new`` (the legacy constructor of a tensor's
dtype and device), ``const_data_ptr``, ``is_set_to``, ``dim_order``, ``is_distributed``,
``nonzero_static`` (nonzero padded to a fixed number of rows), ``conj_physical_`` and
``cudnn_is_acceptable``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InPlaceError, describe
from ..tensors import creation
from ..tensors.tensor import Tensor
from .joining import cat


def _elementwise_in_place(op: str, target: Tensor, others: tuple[Tensor, ...], function: Callable[..., Any]) -> Tensor:
    if target.requires_grad:
        raise InPlaceError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    if target.device.type != "cpu" or any(o.device.type != "cpu" for o in others):
        raise RuntimeError(f"{op}_ is only implemented on CPU tensors")
    array = target._array
    operands = [np.broadcast_to(o._array, array.shape) for o in others]
    for position in np.ndindex(*array.shape):
        array[position] = function(array[position].item(), *(o[position].item() for o in operands))
    target._bump_version()
    return target


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Each element replaced by ``callable(element)`` (a Python function; CPU only, slow)."""
    return _elementwise_in_place("apply_", self, (), callable)


def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Each element replaced by ``callable(element, tensor's element)`` (tensor broadcast)."""
    return _elementwise_in_place("map_", self, (tensor,), callable)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
    """Each element replaced by ``callable(element, x's element, y's element)``."""
    return _elementwise_in_place("map2_", self, (x, y), callable)


def new(self: Tensor, *args: Any) -> Tensor:
    """The legacy constructor with this tensor's dtype and device: ``x.new(2, 3)`` uninitialised
    sizes, ``x.new([1, 2])`` data, ``x.new()`` an empty tensor."""
    if not args:
        return creation.empty(0, dtype=self.dtype, device=self.device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return creation.empty(*args, dtype=self.dtype, device=self.device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype or other.device != self.device:
            raise TypeError(f"new(): expected a tensor of {self.dtype.name} on {self.device}, got {describe(other)}")
        return other.detach()
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        return creation.tensor(args[0], dtype=self.dtype, device=self.device)
    raise TypeError(f"new(): expected sizes, data (a list) or a tensor, got {args!r}")


def const_data_ptr(self: Tensor) -> int:
    """``data_ptr()``: the address of the first element (read-only use)."""
    return self.data_ptr()


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both read the same storage with the same offset, sizes and strides."""
    a, b = self._meta, tensor._meta
    return (self._storage is tensor._storage and a.offset == b.offset and a.shape == b.shape
            and a.strides == b.strides)


def dim_order(self: Tensor) -> tuple[int, ...]:
    """The dimensions from outermost to innermost in memory (by stride; ties keep their order)."""
    strides = self._meta.strides
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


def is_distributed(self: Tensor) -> bool:
    """False: a Zero tensor lives on one device (distributed work is in ``zero.distributed``)."""
    return False


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero`` with a fixed number of rows: the first ``size`` indices of non-zero
    elements, padded with rows of ``fill_value`` when there are fewer."""
    found = input.nonzero()
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    if found.shape[0] >= size:
        return found[:size].clone()
    padding = creation.full((size - found.shape[0], input.ndim), fill_value, dtype=found.dtype, device=found.device)
    return cat([found, padding], 0)


def conj_physical_(self: Tensor) -> Tensor:
    """The conjugate in place: of a real tensor (all of Zero's), the tensor itself unchanged."""
    return self


def cudnn_is_acceptable(tensor: Tensor) -> bool:
    """False: Zero never hands a tensor to cuDNN (its CUDA kernels are its own)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"cudnn_is_acceptable(): argument 'self' must be Tensor, not {type(tensor).__name__}")
    return False
