"""The Tensor: storage + metadata + graph record + gradient slot.

The book's C++ ``Tensor`` has four members with four sharing rules. In Python
a name is a reference, so ``b = a`` already shares all four: one object is one
logical tensor. A *view* is a new object sharing the storage, with its own
metadata, its own graph record (the view op) and its own gradient slot.

    member              here                   b = a     a view
    node_ (storage)     _storage: Storage      shared    shared
    meta_               _meta: TensorMeta      shared    its own
    back_ (graph)       grad_fn: Op | None     shared    its own
    grad_holder_        grad: Tensor | None    shared    its own

Kernels never see a Tensor: they see ``_array``, a NumPy (or CuPy) view of the
storage built once from the metadata.

This class knows storage, metadata and autograd *state*. The operators and
methods that run ops (``a + b``, ``x.sum()``, ``x.view()``, ``loss.backward()``)
are defined beside the ops, in ``zero.ops.tensor_methods``, and attached to this
class when ``zero.ops`` loads (as DeZero's ``setup_variable`` does), so imports
run one way, from the ops down to the tensor. Type checkers see them through the
base class named under ``TYPE_CHECKING``.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .. import dtypes
from ..backends.device import Device
from ..dtypes import DType
from ..errors import AutogradError, DeviceError, DTypeError
from ..errors import ValueArgumentError
from . import printing
from .meta import Shape, TensorMeta, contiguous_meta, contiguous_strides, normalize_dim, numel
from .storage import Storage
from .size import Size

if TYPE_CHECKING:
    from ..autograd.op import AccumulateGrad, Op
    from ..ops.tensor_methods import TensorMethods
    from ..ops.views import ViewStep
else:
    TensorMethods = object  # the methods are attached by zero.ops


class Tensor(TensorMethods):
    __slots__ = ("_array", "_storage", "_meta", "grad_fn", "grad", "_requires_grad",
                 "_retains_grad", "_grad_accumulator", "_view_of", "_history_stamp", "__weakref__")

    _array: Any              # the NumPy (or CuPy) view kernels read and write
    _storage: Storage
    _meta: TensorMeta
    grad_fn: Op | None       # the op that made this tensor (None for a leaf)
    grad: Tensor | None
    _requires_grad: bool
    _retains_grad: bool
    _grad_accumulator: AccumulateGrad | None  # a leaf's node in the graph, made by autograd on first use
    # a view: (its root base, the view steps from it, the base's history stamp then)
    _view_of: tuple[Tensor, tuple[ViewStep, ...], int] | None
    _history_stamp: int      # counts the times an in-place op on a view gave this (base) a new history

    def __new__(cls, *args: Any) -> Tensor:
        """PyTorch's legacy constructor: ``Tensor([1, 2])`` copies data as the default float
        dtype, ``Tensor(2, 3)`` is an uninitialised 2 x 3 tensor, ``Tensor()`` an empty one.
        (``zero.tensor(data)``, ``zero.empty(shape)`` ... say what they mean; prefer them.)"""
        dtype, device = dtypes.get_default_dtype(), Device("cpu")
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.detach() if data.dtype is dtype else data.detach().to(dtype)
            array = np.asarray(data._host_array() if hasattr(data, "_meta") else data)
            return cls._from_host(array, dtype, device)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in args):
            raise TypeError(f"Tensor(): expected data (a list, a NumPy array) or sizes (non-negative ints), "
                            f"got {args!r}; zero.tensor(data) and zero.empty(*sizes) say which")
        return cls._empty(tuple(args) if args else (0,), dtype, device)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # __new__ builds the tensor

    # -- construction (internal) ----------------------------------------------------------------
    @classmethod
    def _from_storage(cls, storage: Storage, meta: TensorMeta, requires_grad: bool = False) -> Tensor:
        return cls._made(meta.device.backend.array_view(storage.handle, meta), storage, meta, requires_grad)

    @classmethod
    def _made(cls, array: Any, storage: Storage, meta: TensorMeta, requires_grad: bool) -> Tensor:
        """A tensor object over ``array`` (a view of ``storage`` read through ``meta``): a leaf,
        no gradient, no graph. Every Tensor comes from here."""
        t: Tensor = object.__new__(cls)
        t._array = array
        t._storage = storage
        t._meta = meta
        t.grad_fn = None
        t.grad = None
        t._requires_grad = requires_grad
        t._retains_grad = False
        t._grad_accumulator = None
        t._view_of = None
        t._history_stamp = 0
        return t

    @classmethod
    def _empty(cls, shape: Shape, dtype: DType, device: Device) -> Tensor:
        """A new contiguous tensor with uninitialised memory from ``device``'s allocator."""
        meta, nbytes = contiguous_meta(shape, dtype, device)
        storage = Storage(nbytes, device)
        return cls._made(device.backend.new_array(storage.handle, meta.shape, dtype.numpy), storage, meta, False)

    @classmethod
    def _from_host(cls, array: np.ndarray, dtype: DType, device: Device) -> Tensor:
        """A new tensor holding a copy of a host array, converted to ``dtype``."""
        out = cls._empty(tuple(array.shape), dtype, device)
        device.kernels.copy(device.backend.from_numpy(array), out._array)
        return out

    def _view_as(self, shape: Shape, strides: Shape, offset: int, contiguous: bool | None = None) -> Tensor:
        """Another tensor on the same storage (no graph; view ops add that); ``contiguous``
        as ``TensorMeta`` takes it."""
        meta = self._meta
        return Tensor._from_storage(self._storage, TensorMeta(shape, strides, offset, meta.dtype, meta.device,
                                                              contiguous))

    def _reshaped(self, shape: Shape) -> Tensor:
        """A contiguous tensor's elements as another contiguous ``shape`` (as many elements) on
        the same storage, no graph. Its array is the array's own reshape, a view (NumPy and CuPy
        reshape a C-contiguous array without copying): cheaper than one built from the storage,
        on CuPy most of all."""
        meta = self._meta
        strides = contiguous_strides(shape)
        array = self._array
        if not array.flags.c_contiguous:   # (a layout Zero calls contiguous that the library does not)
            return self._view_as(shape, strides, meta.offset, contiguous=True)
        return Tensor._made(array.reshape(shape), self._storage,
                            TensorMeta(shape, strides, meta.offset, meta.dtype, meta.device, True), False)

    def _alias(self, cls: type[Tensor] | None = None) -> Tensor:
        """Same storage and metadata, no graph, no grad: what ops save for backward (and,
        with ``cls=Parameter``, what a Parameter wraps)."""
        return (cls or Tensor)._made(self._array, self._storage, self._meta, False)

    # -- metadata -------------------------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        return tuple.__new__(Size, self._meta.shape)  # (no checks: the meta's ints)

    @overload
    def size(self, dim: None = None) -> Shape: ...
    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim: int | None = None) -> Shape | int:
        if dim is None:
            return tuple.__new__(Size, self._meta.shape)  # (no checks: the meta's ints)
        return self._meta.shape[normalize_dim(dim, len(self._meta.shape), "size")]

    @overload
    def stride(self, dim: None = None) -> Shape: ...
    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim: int | None = None) -> Shape | int:
        if dim is None:
            return self._meta.strides
        return self._meta.strides[normalize_dim(dim, len(self._meta.shape), "stride")]

    @property
    def dtype(self) -> DType:
        return self._meta.dtype

    @property
    def device(self) -> Device:
        return self._meta.device

    @property
    def ndim(self) -> int:
        return len(self._meta.shape)

    def dim(self) -> int:
        return len(self._meta.shape)

    def numel(self) -> int:
        return numel(self._meta.shape)

    def storage_offset(self) -> int:
        return self._meta.offset

    def element_size(self) -> int:
        return self._meta.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._meta.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._meta.dtype.itemsize

    def is_contiguous(self) -> bool:
        return self._meta.contiguous

    def is_floating_point(self) -> bool:
        return self._meta.dtype.is_floating_point

    @property
    def is_cuda(self) -> bool:
        return self._meta.device.type == "cuda"

    def untyped_storage(self) -> Storage:
        return self._storage

    def data_ptr(self) -> int:
        """Address of the first element: equal for tensors that start at the same place."""
        return self._meta.device.backend.address_of(self._storage.handle) + self._meta.offset * self.itemsize

    def __len__(self) -> int:
        if not self._meta.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._meta.shape[0]

    # -- autograd state -------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None and not requires_grad:
            raise AutogradError(f"requires_grad can only be switched off on leaf tensors; this one "
                                f"comes from {self.grad_fn.name} (use .detach())")
        if requires_grad and not self._meta.dtype.is_floating_point:
            raise DTypeError(f"only floating-point tensors can require gradients, got {self.dtype}")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf after backward (leaves always keep it)."""
        if not self._requires_grad:
            raise AutogradError("retain_grad() on a tensor that does not require grad")
        if self.grad_fn is not None and not self._retains_grad:
            self.grad_fn.retained = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def detach(self) -> Tensor:
        """Shares the storage, not the graph: a new leaf that does not require grad."""
        return self._alias()

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        return self._alias()

    @data.setter
    def data(self, other: Tensor) -> None:
        """Point this tensor at ``other``'s storage and metadata (keeps its grad state)."""
        self._array = other._array
        self._storage = other._storage
        self._meta = other._meta

    def _bump_version(self) -> None:
        self._storage.version += 1

    # -- conversion -----------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A NumPy array sharing memory with this CPU tensor (no copy)."""
        if self._requires_grad:
            raise AutogradError("numpy() of a tensor that requires grad; use tensor.detach().numpy()")
        if self._meta.device.type != "cpu":
            raise DeviceError(f"numpy() of a tensor on {self.device}; use tensor.cpu().numpy()")
        return self._array

    def _host_array(self) -> np.ndarray:
        """The values as a NumPy array (a copy from the device when not on the CPU). Every
        read of values from a device comes here; it first runs the checks that waited for
        one (``Device.defer_check``)."""
        device = self._meta.device
        if device._deferred_checks:
            device.run_deferred_checks()
        return device.backend.to_numpy(self._array)

    def tolist(self) -> Any:  # nested lists of numbers (a number for a 0-d tensor)
        return self._host_array().tolist()

    def item(self) -> bool | int | float:
        n = self.numel()
        if n != 1:
            raise ValueArgumentError(f"item(): a tensor with {n} elements cannot be converted to a Python scalar")
        return self._host_array().reshape(()).item()

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        array = self._host_array()
        return array if dtype is None else array.astype(dtype)

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its Python number (as in PyTorch)."""
        if self._meta.shape == ():
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._meta.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise ValueArgumentError(f"the truth value of a tensor with {self.numel()} elements is ambiguous; "
                             "use .any() or .all()")
        return bool(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        host = self._host_array()
        if self._meta.dtype is dtypes.bfloat16:  # NumPy formats ml_dtypes' type as an integer ("2,"), not "2.,"
            host = host.astype(np.float32)       # (exact)
        values = np.array2string(host, separator=", ", prefix="tensor(",
                                 **printing.array2string_options())
        extras = []
        if self._meta.device.type != "cpu":
            extras.append(f"device='{self.device}'")
        if self._meta.dtype not in (dtypes.float32, dtypes.int64, dtypes.bool_):
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([values] + extras) + ")"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickling copies the values to NumPy (for multiprocessing and deepcopy)."""
        return (_rebuild, (type(self), self._host_array().copy(), str(self.device), self._requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        result = self.detach().clone()
        result._requires_grad = self._requires_grad
        if self.grad is not None:
            result.grad = self.grad.clone()
        memo[id(self)] = result
        return result


def _rebuild(cls: type[Tensor], array: np.ndarray, device: str, requires_grad: bool) -> Tensor:
    """Unpickle a tensor (or a Parameter: ``cls``) from a host copy of its values."""
    t = Tensor._from_host(array, dtypes.from_numpy_dtype(array.dtype), Device(device))
    if cls is not Tensor:
        t = t._alias(cls)
    if requires_grad:
        t.requires_grad_(True)
    return t


def number_of_elements(input: Tensor) -> int:  # noqa: A002  (PyTorch's name)
    """``zero.numel(x)``, ``x.nelement()``: the number of elements."""
    return input.numel()


def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)
