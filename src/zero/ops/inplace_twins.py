"""Tensor's in-place twins that ``inplace.in_place`` alone does not make:

- of the ops without a gradient: a comparison (``x.eq_(y)``) writes its result, converted to
  the tensor's dtype, into it; in the graph its gradient is zero, as PyTorch's
  (``without_gradient``). The logical ops (``x.logical_not_()``) write their values outside
  the graph, as PyTorch's do: the tensor keeps its history, a leaf that requires grad is
  not refused (``outside_the_graph``);
- the in-place view changes: ``x.t_()``, ``x.transpose_(0, 1)``, ``x.squeeze_()`` ... change
  the tensor's own shape and strides (the same storage), as PyTorch's do. In the graph the
  tensor takes the history of the view it became; a leaf that requires grad is refused.
- ``resize_`` / ``resize_as_``: a new contiguous shape, the storage grown when it must.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec

from .. import dtypes
from ..errors import InPlaceError, ShapeError, describe
from ..grad_mode import _state, no_grad
from ..tensors.meta import TensorMeta, contiguous_strides, numel
from ..tensors.storage import Storage
from ..tensors.tensor import Tensor
from .arguments import sizes_of
from . import views
from .extra import shaping
from .extra.strided_scatters import as_strided
from .inplace import Overwrite, _check_not_a_leaf, _check_writable, apply_

P = ParamSpec("P")


def without_gradient(function: Callable[Concatenate[Tensor, P], Tensor],
                     name: str) -> Callable[Concatenate[Tensor, P], Tensor]:
    """The in-place twin of an op with no gradient (a comparison): ``x.eq_(y)`` writes
    ``eq(x, y)`` into x as x's dtype; x's gradient through it is zero."""
    def method(self: Tensor, *args: P.args, **kwargs: P.kwargs) -> Tensor:
        operands = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Tensor))

        def compute(old: Tensor) -> Tensor:
            return Overwrite.apply(old, function(old, *args, **kwargs).to(old.dtype))
        return apply_(self, name, compute, operands)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{function.__name__}``, in place (as the tensor's dtype)."
    return method


def outside_the_graph(function: Callable[Concatenate[Tensor, P], Tensor],
                      name: str) -> Callable[Concatenate[Tensor, P], Tensor]:
    """The in-place twin PyTorch does not record in the graph (``logical_and_`` ...): the
    values of ``function(x, ...)`` as x's dtype are written into x; x's history stays."""
    def method(self: Tensor, *args: P.args, **kwargs: P.kwargs) -> Tensor:
        _check_writable(self, name)
        with no_grad():
            result = function(self, *args, **kwargs)
        if result._meta.shape != self._meta.shape:
            raise ShapeError(f"{name}: the result {describe(result)} does not have the shape of the target "
                             f"{describe(self)}")
        self._meta.device.kernels.copy(result._array, self._array)
        self._bump_version()
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{function.__name__}``, in place (as the tensor's dtype), outside the graph."
    return method


# -- in-place view changes: the tensor's own shape and strides change ---------------------------


def _reshape_in_place(target: Tensor, op: str, view: Callable[[Tensor], Tensor]) -> Tensor:
    """``target`` takes the metadata (and, in the graph, the history) of ``view(target)``."""
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(target).__name__}")
    if _state.enabled:
        _check_not_a_leaf(target, op)
    was_a_view = target._view_of is not None
    result = view(target)
    target._array, target._meta = result._array, result._meta
    if result.grad_fn is not None or target.grad_fn is not None:
        target.grad_fn, target._requires_grad = result.grad_fn, result._requires_grad
    target._view_of = result._view_of if was_a_view else None
    return target


def t_(input: Tensor) -> Tensor:
    """``input.t()`` in place: the tensor itself, its two dimensions swapped."""
    return _reshape_in_place(input, "t_", views.t)


def transpose_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return _reshape_in_place(input, "transpose_", lambda t: views.transpose(t, dim0, dim1))


def swapaxes_(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return _reshape_in_place(input, "swapaxes_", lambda t: shaping.swapaxes(t, axis0, axis1))


def swapdims_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return _reshape_in_place(input, "swapdims_", lambda t: shaping.swapaxes(t, dim0, dim1))


def squeeze_(input: Tensor, dim: Any = None) -> Tensor:
    return _reshape_in_place(input, "squeeze_", lambda t: views.squeeze(t) if dim is None else views.squeeze(t, dim))


def unsqueeze_(input: Tensor, dim: int) -> Tensor:
    return _reshape_in_place(input, "unsqueeze_", lambda t: views.unsqueeze(t, dim))



def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """``as_strided`` in place: the tensor itself, now read with the given geometry."""
    return _reshape_in_place(input, "as_strided_", lambda t: as_strided(t, size, stride, storage_offset))


def resize_(input: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """The tensor itself, now contiguous of the given sizes (unchanged when they are its own).
    Its elements keep their values as far as they reach (row-major from its storage offset);
    when it needs more memory than its storage has, the storage grows -- into new memory, so
    tensors that viewed the old storage no longer share this one's (PyTorch's grows in place).
    A tensor that requires grad is refused, as in PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"resize_: expected a tensor, got {type(input).__name__}")
    if input._requires_grad:
        raise InPlaceError("cannot resize variables that require grad")
    shape = tuple(int(n) for n in sizes_of(sizes))
    if any(n < 0 for n in shape):
        raise ShapeError(f"resize_: sizes must be non-negative, got {list(shape)}")
    meta = input._meta
    if shape == meta.shape:
        return input
    device, dtype = meta.device, meta.dtype
    needed = (meta.offset + numel(shape)) * dtype.itemsize
    if needed > input._storage.nbytes:
        grown = Storage(needed, device)
        old = input._storage
        if old.nbytes:
            device.kernels.copy(_bytes_of(old), _bytes_of(grown)[:old.nbytes])
        input._storage = grown
        input._view_of = None
    input._meta = TensorMeta(shape, contiguous_strides(shape), meta.offset, dtype, device, True)
    input._array = device.backend.array_view(input._storage.handle, input._meta)
    input._bump_version()
    return input


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s sizes."""
    return resize_(input, tuple(the_template.shape))


def _bytes_of(storage: Storage) -> Any:
    """The whole storage as a flat array of bytes."""
    return storage.device.backend.array_view(
        storage.handle, TensorMeta((storage.nbytes,), (1,), 0, dtypes.uint8, storage.device, True))
