"""Tensor's older and smaller methods: ``apply_`` / ``map_`` / ``map2_`` (a Python function
run element by element, on the CPU, in place), ``new`` (the legacy constructor of a tensor's
dtype and device), ``const_data_ptr``, ``is_set_to``, ``dim_order``, ``is_distributed``,
``nonzero_static`` (nonzero padded to a fixed number of rows), ``conj_physical_``,
``cudnn_is_acceptable``, ``fill_diagonal_``, ``set_``, ``as_subclass``, and the questions
about devices and layouts Zero does not have (``is_mps``, ``is_quantized`` ...: False).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InPlaceError, describe
from ..tensors import creation
from ..tensors.meta import TensorMeta, contiguous_strides
from ..tensors.storage import Storage
from ..tensors.tensor import Tensor
from . import views
from .arguments import sizes_of
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


# -- devices and layouts Zero does not have: each answer False, truthfully ---------------------------


def _false(what: str) -> Any:
    def answer(self: Tensor) -> bool:
        return False
    answer.__name__ = answer.__qualname__ = f"is_{what}"
    answer.__doc__ = f"False: Zero has no {what.replace('_', ' ')} tensors."
    return answer


is_ipu, is_maia, is_mtia, is_xla, is_xpu, is_mps, is_vulkan = (
    _false(what) for what in ("ipu", "maia", "mtia", "xla", "xpu", "mps", "vulkan"))
is_mkldnn, is_nested, is_quantized = (_false(what) for what in ("mkldnn", "nested", "quantized"))


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """False: Zero never allocates page-locked host memory."""
    return False


def fill_diagonal_(self: Tensor, fill_value: float, wrap: bool = False) -> Tensor:
    """The main diagonal set to ``fill_value`` in place (all dimensions of equal length, or a
    matrix; ``wrap``: a tall matrix's diagonal starts again below each square block)."""
    shape = tuple(self.shape)
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]     # (row-major, of the logical shape)
    step = sum(strides)
    limit = self.numel() if wrap else min(shape) * strides[0]
    positions = creation.arange(0, limit, step, device=self.device)
    values = creation.full((positions.numel(),), fill_value, dtype=self.dtype, device=self.device)
    return self.put_(positions, values)


def set_(self: Tensor, source: Any = None, storage_offset: int = 0, size: Any = None, stride: Any = None) -> Tensor:
    """This tensor made to read another's memory: ``x.set_(y)`` (y's storage and geometry),
    ``x.set_(storage, offset, size, stride)``, or ``x.set_()`` (an empty tensor of new memory)."""
    if self.requires_grad and self.grad_fn is None:
        raise InPlaceError(f"set_: a leaf that requires grad ({describe(self)}) cannot be set to other memory")
    if source is None:
        fresh = creation.empty(0, dtype=self.dtype, device=self.device)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"set_: expected a {self.dtype.name} source, got {describe(source)}")
        fresh = source
    elif isinstance(source, Storage):
        shape = tuple(size) if size is not None else (source.nbytes // self.dtype.itemsize - storage_offset,)
        strides = tuple(stride) if stride is not None else contiguous_strides(shape)
        fresh = Tensor._from_storage(source, TensorMeta(shape, strides, storage_offset, self.dtype, source.device))
    else:
        raise TypeError(f"set_: expected a tensor or a storage, got {type(source).__name__}")
    self._storage, self._meta, self._array = fresh._storage, fresh._meta, fresh._array
    self._view_of = None
    self._bump_version()
    return self


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """This tensor's data (shared) as an instance of ``cls``, a subclass of Tensor, in the graph
    as an alias of this one."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass: expected a subclass of Tensor, got {cls!r}")
    alias = views.view_as(self, self)
    out = cls._made(alias._array, alias._storage, alias._meta, False)
    out.grad_fn, out._requires_grad, out._view_of = alias.grad_fn, alias._requires_grad, alias._view_of
    return out


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated (PyTorch warns): the elements in another shape of as many elements, as
    ``reshape`` (in the graph). ``resize_`` is the one that changes the tensor itself."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = tuple(int(n) for n in sizes_of(sizes))
    count = int(np.prod(shape)) if shape else 1
    if count != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({count} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements.")
    return views.reshape(self, shape)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: ``resize`` to ``tensor``'s shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resize(self, tuple(tensor.shape))
