"""Indexing: ``t[key]`` and ``t[key] = value``, PyTorch's rules (NumPy's, but for one point).

    basic      ints, slices (step > 0), None, ``...``       a view (no copy)
    advanced   integer or boolean tensors (and lists)        a copy

The point where PyTorch differs from NumPy: an int (or a 0-d integer tensor) next to index
tensors is a basic index, applied first, so it never separates index tensors. In
``x[1, :, d]`` NumPy counts ``1`` and ``d`` as two advanced indices separated by a slice and
puts d's dimensions first; PyTorch selects ``x[1]`` and then indexes ``[:, d]``, keeping
them in place. ``_split_key`` does the same: the basic part (a view), then the rest.

Backward scatters the gradient into zeros of the input's shape: a basic index
copies it into the viewed region, an advanced index *adds* it at the indexed
places, so an index that repeats accumulates.
"""
from __future__ import annotations

from collections.abc import Iterator
from types import EllipsisType
from typing import Any

import numpy as np

from .. import dtypes
from ..autograd.op import Grads, Op
from ..errors import DeviceError, IndexDTypeError, ShapeError, ZeroIndexError, describe
from ..errors import IndexTypeError
from ..tensors.creation import tensor, zeros
from ..tensors.meta import Shape, broadcast_shapes, contiguous_strides, numel
from ..tensors.tensor import Tensor
from . import inplace
from .arguments import Number, fill_value
from .broadcast import sum_to_shape
from .conversion import Copy
from .views import mark_view

BasicItem = int | slice | EllipsisType | None   # what a view can index with
# One entry of a key: a basic item, or an index (an integer or bool tensor, a list, a NumPy array).
IndexItem = BasicItem | Tensor | list[Any] | tuple[Any, ...] | np.ndarray | np.integer
Index = IndexItem | tuple[IndexItem, ...]       # what t[...] takes


def _is_basic(item: IndexItem) -> bool:
    return item is None or item is Ellipsis or isinstance(item, (int, slice)) and not isinstance(item, bool)


def _normalize_key(key: Index) -> tuple[IndexItem, ...]:
    if not isinstance(key, tuple):
        key = (key,)
    return key


def basic_index_geometry(shape: Shape, strides: Shape, offset: int,
                         key: tuple[BasicItem, ...]) -> tuple[Shape, Shape, int]:
    """Shape, strides and offset of ``t[key]`` for ints, slices (step > 0), None and ``...``."""
    consuming = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise ZeroIndexError("an index can only have a single ellipsis ('...')")
    if consuming > len(shape):
        raise ZeroIndexError(f"too many indices for a tensor of dimension {len(shape)} "
                             f"({consuming} given)")
    new_shape: list[int] = []
    new_strides: list[int] = []
    dim = 0
    for item in key:
        if item is None:
            new_shape.append(1)
            new_strides.append(0)
        elif item is Ellipsis:
            skip = len(shape) - consuming
            new_shape.extend(shape[dim:dim + skip])
            new_strides.extend(strides[dim:dim + skip])
            dim += skip
        elif isinstance(item, int):
            size = shape[dim]
            if not -size <= item < size:
                raise ZeroIndexError(f"index {item} is out of bounds for dimension {dim} with size {size}")
            offset += (item % size) * strides[dim]
            dim += 1
        else:  # slice
            start, stop, step = item.indices(shape[dim])
            if step <= 0:
                raise ValueError(f"slice step must be positive, got {item.step} (Zero, like PyTorch, "
                                 "has no negative-stride views; use flip())")
            length = len(range(start, stop, step))
            if length:
                offset += start * strides[dim]
            new_shape.append(length)
            new_strides.append(strides[dim] * step)
            dim += 1
    new_shape.extend(shape[dim:])
    new_strides.extend(strides[dim:])
    return tuple(new_shape), tuple(new_strides), offset


class BasicIndex(Op):
    """``t[1:3, ::2]``, ``t[..., 0]``, ``t[None]``: a view."""

    def forward(self, x: Tensor, key: tuple[BasicItem, ...]) -> Tensor:
        meta = x._meta
        shape, strides, offset = basic_index_geometry(meta.shape, meta.strides, meta.offset, key)
        self.in_shape, self.in_dtype, self.key = meta.shape, meta.dtype, key
        return mark_view(x._view_as(shape, strides, offset), x, (BasicIndex, (key,)))

    def backward(self, grad: Tensor) -> Grads:
        grad_in = zeros(self.in_shape, dtype=self.in_dtype, device=grad.device)
        shape, strides, offset = basic_index_geometry(self.in_shape, contiguous_strides(self.in_shape),
                                                      0, self.key)
        grad.device.kernels.copy(grad._array, grad_in._view_as(shape, strides, offset)._array)
        return (grad_in, None)


class AdvancedIndex(Op):
    """Indexing with integer or boolean tensors (NumPy's rules): a copy. Backward adds the
    gradient back at the indexed places, so repeated indices accumulate."""

    def forward(self, x: Tensor, key: tuple[Any, ...]) -> Tensor:
        kernels = x._meta.device.kernels
        try:
            result = kernels.index_get(x._array, key)
        except IndexError as e:
            raise ZeroIndexError(f"index out of range for {describe(x)}: {e}") from None
        out = Tensor._empty(tuple(result.shape), x._meta.dtype, x._meta.device)
        kernels.copy(result, out._array)
        self.in_shape, self.in_dtype, self.key = x._meta.shape, x._meta.dtype, key
        return out

    def backward(self, grad: Tensor) -> Grads:
        grad_in = zeros(self.in_shape, dtype=self.in_dtype, device=grad.device)
        grad.device.kernels.index_add(grad_in._array, self.key, grad._array)
        return (grad_in, None)


def _advanced_key(x: Tensor, key: tuple[IndexItem, ...]) -> tuple[Any, ...]:
    """Turn tensors and lists in an index into device arrays, checking their dtypes. As in
    PyTorch, an index tensor on the CPU may index a tensor on any device (it is copied
    there); one on another device may not."""
    converted: list[Any] = []   # the kernels' index: arrays, ints, slices, None, ...
    for item in key:
        if isinstance(item, (list, tuple)) or type(item).__module__ == "numpy":
            item = tensor(item, device=x.device)
        if isinstance(item, Tensor):
            if item.device is not x.device and item.device.type == "cpu":
                item = item.to(x.device)
            elif item.device is not x.device:
                raise DeviceError(f"index: index tensor {describe(item)} for a tensor {describe(x)}")
            if item.dtype.is_floating_point:
                raise IndexDTypeError(f"tensors used as indices must be integer or bool, got {describe(item)}")
            converted.append(item._array)
        elif isinstance(item, (str, bytes)):
            raise IndexTypeError(f"index: a {type(item).__name__} cannot index a tensor {describe(x)}")
        else:
            converted.append(item)
    return tuple(converted)


def _is_int_index(item: IndexItem) -> bool:
    """An int, or what PyTorch treats as one: a NumPy integer, a 0-d integer tensor (not bool)."""
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return True
    return isinstance(item, Tensor) and item.ndim == 0 and item.dtype.category == dtypes.INTEGER


def _split_key(key: tuple[IndexItem, ...]) -> tuple[tuple[BasicItem, ...], tuple[IndexItem, ...]] | None:
    """A key mixing ints and index tensors, as PyTorch applies it: the basic part (ints,
    slices, None, ``...``; each index tensor kept as full slices over the dims it consumes)
    and the advanced rest over the view that leaves. None when no int needs moving."""
    if not any(_is_int_index(k) for k in key):
        return None
    items = [tensor(k) if isinstance(k, (list, tuple, np.ndarray)) else k for k in key]
    basic: list[BasicItem] = []
    rest: list[IndexItem] = []
    for item in items:
        if _is_int_index(item):
            basic.append(int(item.item() if isinstance(item, Tensor) else item))   # type: ignore[arg-type]
        elif item is None:
            basic.append(None)
            rest.append(slice(None))
        elif item is Ellipsis:
            basic.append(Ellipsis)
            rest.append(Ellipsis)
        elif isinstance(item, slice):
            basic.append(item)
            rest.append(slice(None))
        else:   # an index tensor: a bool mask consumes as many dims as it has
            consumed = item.ndim if isinstance(item, Tensor) and item.dtype is dtypes.bool_ else 1
            basic.extend([slice(None)] * consumed)
            rest.append(item)
    return tuple(basic), tuple(rest)


def getitem(x: Tensor, key: Index) -> Tensor:
    key = _normalize_key(key)
    if all(_is_basic(k) for k in key):
        return BasicIndex.apply(x, key)
    split = _split_key(key)
    if split is not None:
        basic, rest = split
        return getitem(BasicIndex.apply(x, basic), rest)
    return AdvancedIndex.apply(x, _advanced_key(x, key))


def setitem(x: Tensor, key: Index, value: Tensor | Number) -> None:
    """``x[key] = value``: an in-place write, recorded in the graph when something requires
    grad (ops/inplace.py). A basic key writes a view of ``x``; an index tensor, the indexed
    places (``IndexPut``); a bool mask of ``x``'s shape, where it holds."""
    key = _normalize_key(key)
    if isinstance(value, Tensor) and value.device is not x.device:
        raise DeviceError(f"setitem: value {describe(value)} for a tensor {describe(x)}")
    if not isinstance(value, Tensor):
        fill_value("setitem", value, x.dtype)
    if all(_is_basic(k) for k in key):
        target = BasicIndex.apply(x, key)
        if isinstance(value, Tensor):
            if value.ndim > target.ndim and numel(value.shape[:value.ndim - target.ndim]) == 1:
                value = value.reshape(value.shape[value.ndim - target.ndim:])  # leading 1s: PyTorch drops them
            if broadcast_shapes(value.shape, target.shape, op="setitem") != target.shape:
                raise ShapeError(f"setitem: cannot assign a value of shape {list(value.shape)} to a slice of "
                                 f"shape {list(target.shape)}")
            inplace.copy_(target, value)
        else:
            inplace.fill_(target, value)
        return
    split = _split_key(key)
    if split is not None:   # PyTorch's order: the ints (a view) first, then the index tensors
        basic, rest = split
        setitem(BasicIndex.apply(x, basic), rest, value)
        return
    index = _advanced_key(x, key)
    kernels = x._meta.device.kernels
    value_array = value._array if isinstance(value, Tensor) else value

    def write() -> None:
        try:
            kernels.index_put(x._array, index, value_array)
        except IndexError as e:
            raise ZeroIndexError(f"setitem: index out of range for {describe(x)}: {e}") from None

    inplace.modify(x, "setitem", (value,), write, lambda old: IndexPut.apply(old, index, value))


class IndexPut(Op):
    """``x`` with ``x[key] = value`` done out of place (the recorded form of setitem with index
    tensors). Backward: the gradient of ``x`` is zero at the overwritten places; ``value``'s is
    the gradient gathered there (summed back to its shape)."""

    def forward(self, x: Tensor, key: tuple[Any, ...], value: Tensor | Number) -> Tensor:
        out = Copy.apply(x.detach())
        kernels = x._meta.device.kernels
        try:
            kernels.index_put(out._array, key, value._array if isinstance(value, Tensor) else value)
        except (IndexError, ValueError) as e:
            raise ZeroIndexError(f"setitem: cannot write {describe(value)} at that index of {describe(x)}: "
                                 f"{e}") from None
        self.key = key
        self.value_shape = value.shape if isinstance(value, Tensor) else ()
        self.value_dtype = value.dtype if isinstance(value, Tensor) else None
        return out

    def backward(self, grad: Tensor) -> Grads:
        kernels = grad.device.kernels
        grad_x: Tensor | None = None
        if self.needs_input_grad[0]:
            grad_x = Copy.apply(grad)
            kernels.index_put(grad_x._array, self.key, 0)
        grad_value: Tensor | None = None
        if self.needs_input_grad[2]:
            picked = kernels.index_get(grad._array, self.key)
            gathered = Tensor._empty(tuple(picked.shape), grad.dtype, grad.device)
            kernels.copy(picked, gathered._array)
            grad_value = sum_to_shape(gathered, self.value_shape, self.value_dtype)
        return grad_x, None, grad_value


def iterate(input: Tensor) -> Iterator[Tensor]:
    """``for row in x``: the slices along the first dimension, as PyTorch iterates."""
    if input.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (input[i] for i in range(input.shape[0]))
