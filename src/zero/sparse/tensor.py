"""The sparse COO tensor: a ``Tensor`` (as PyTorch's: ``isinstance(s, zero.Tensor)``) of layout
``zero.sparse_coo`` that holds two dense tensors instead of a storage of its own:

    indices   int64 (sparse_dim, nnz): column k is where entry k sits among the first sparse_dim dims
    values    (nnz, *dense_sizes): entry k's value (a number; a dense block for a hybrid tensor)
    size      the whole tensor's shape, sparse dims first, then dense dims

    indices = [[0, 1, 1],      values = [3., 4., 5.]      size = (2, 3)    ->   [[0, 0, 3],
               [2, 0, 2]]                                                        [4, 0, 5]]

Entries may repeat a place (they sum); ``coalesce()`` sorts the places and sums repeats, and
``is_coalesced()`` says whether that is known to hold. Gradients live on ``values``: a sparse
tensor built from values that require grad passes the gradient to them, and a sparse leaf that
requires grad (``requires_grad=True``) keeps its gradient as a sparse ``.grad`` of the same places.

A dense op must never read a sparse tensor as if it were strided. The sparse tensor's array
(what kernels read) and its view record (what every op's ``Op.apply`` looks at first) are a
guard that raises ``SparseLayoutError`` naming the layout at the first touch, so ``zero.exp(s)``,
``s.view(6)`` or ``s + 1`` fail with one clear line, never with wrong numbers.
"""
from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from ..dtypes import DType, bfloat16, bool_, float32, float64, int64
from ..errors import DeviceError, ShapeError, SparseLayoutError, describe
from ..ops.extra import sparse_products as products
from ..ops.extra.scatter import index_add
from ..ops.extra.searching import unique
from ..ops.joining import cat, index_select
from ..tensors import printing
from ..tensors.creation import arange, zeros
from ..tensors.meta import TensorMeta, contiguous_strides
from ..tensors.storage import Storage
from ..tensors.tensor import Tensor


class Layout:
    """How a tensor's elements are stored: ``zero.strided`` (dense) or ``zero.sparse_coo``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"zero.{self.name}"

    def __reduce__(self) -> str:
        return self.name   # (the module-level object: one of each)


strided = Layout("strided")
sparse_coo = Layout("sparse_coo")


def refusal(size: tuple[int, ...]) -> SparseLayoutError:
    return SparseLayoutError(
        f"a dense (strided) operation was given a sparse tensor (layout=zero.sparse_coo, size {tuple(size)}), "
        "which it cannot read; convert it with .to_dense(), or use zero.sparse's functions")


class _DenseReadGuard:
    """What a sparse tensor shows where a dense one has its array and its view record: any
    use raises SparseLayoutError (see the module's docstring)."""

    __slots__ = ("size",)

    def __init__(self, size: tuple[int, ...]) -> None:
        self.size = size

    def refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise refusal(self.size)

    def __getattr__(self, name: str) -> NoReturn:
        self.refuse()

    __getitem__ = __iter__ = __len__ = __array__ = __array_ufunc__ = __array_function__ = refuse


class SparseTensor(Tensor):
    __slots__ = ("_sparse_indices", "_sparse_values", "_coalesced")

    _sparse_indices: Tensor   # int64 (sparse_dim, nnz)
    _sparse_values: Tensor    # (nnz, *dense_sizes)
    _coalesced: bool

    def __new__(cls, *args: Any) -> SparseTensor:
        raise TypeError("zero.sparse_coo_tensor(indices, values, size) makes a sparse tensor")

    @classmethod
    def _make(cls, indices: Tensor, values: Tensor, size: tuple[int, ...], coalesced: bool) -> SparseTensor:
        """A sparse tensor over these parts (no checks: the callers made them consistent)."""
        size = tuple(int(n) for n in size)
        guard = _DenseReadGuard(size)
        # contiguous=False: contiguous() must copy (and so refuse), never hand the tensor back
        meta = TensorMeta(size, contiguous_strides(size), 0, values._meta.dtype, values._meta.device, False)
        t: SparseTensor = object.__new__(cls)
        t._array = guard
        t._storage = Storage.wrap(None, 0, values._meta.device)
        t._meta = meta
        t.grad_fn = values.grad_fn
        t._requires_grad = values._requires_grad
        t._retains_grad = False
        t._grad_accumulator = None
        t._view_of = guard  # type: ignore[assignment]  # Op.apply reads it first, and refuses
        t._history_stamp = 0
        t._sparse_indices = indices
        t._sparse_values = values
        t._coalesced = coalesced
        return t

    # -- the parts ---------------------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def sparse_dim(self) -> int:
        return int(self._sparse_indices.shape[0])

    def dense_dim(self) -> int:
        return int(self._sparse_values.ndim - 1)

    def _nnz(self) -> int:
        return int(self._sparse_values.shape[0])

    def _indices(self) -> Tensor:
        return self._sparse_indices

    def _values(self) -> Tensor:
        return self._sparse_values

    def indices(self) -> Tensor:
        """The places, of a coalesced tensor only (an uncoalesced one may repeat them)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sparse_indices

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sparse_values

    def is_coalesced(self) -> bool:
        return self._coalesced

    def coalesce(self) -> SparseTensor:
        """The same tensor with its places sorted (row-major) and repeats summed; itself when
        already coalesced. Differentiable: a summed value's gradient goes to each repeat."""
        if self._coalesced:
            return self
        sparse_sizes = self.shape[:self.sparse_dim()]
        flat = products.flat_index(self._sparse_indices, sparse_sizes)
        places, inverse = unique(flat, return_inverse=True)
        values = self._sparse_values
        summed = zeros((places.shape[0],) + tuple(values.shape[1:]), dtype=values.dtype, device=values.device)
        summed = index_add(summed, 0, inverse, values)
        return SparseTensor._make(products.unravel_index(places, sparse_sizes), summed, self.shape, True)

    def to_dense(self, dtype: DType | None = None, *, masked_grad: bool | None = None) -> Tensor:
        """The strided tensor (duplicates summed); differentiable with respect to the values."""
        dense = products.scatter_values(self._sparse_indices, self._sparse_values, self.shape)
        return dense if dtype is None else dense.to(dtype)

    def to_sparse(self, sparse_dim: int | None = None, *, layout: Layout | None = None,
                  blocksize: Any = None, dense_dim: int | None = None) -> SparseTensor:
        if layout not in (None, sparse_coo) or blocksize is not None:
            raise NotImplementedError(f"to_sparse: Zero has the sparse_coo layout only, got layout={layout}")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from a sparse tensor with sparse_dim {self.sparse_dim()} "
                               f"to sparse_dim {sparse_dim} is not supported")
        return self

    to_sparse_coo = to_sparse

    # -- autograd state: the values' ----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._sparse_values._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._sparse_values.requires_grad_(requires_grad)
        self._requires_grad = self._sparse_values._requires_grad
        return self

    @property  # type: ignore[override]
    def grad(self) -> SparseTensor | None:
        """A leaf's gradient: sparse, at the leaf's places."""
        values_grad = self._sparse_values.grad
        if values_grad is None:
            return None
        return SparseTensor._make(self._sparse_indices, values_grad, self.shape, self._coalesced)

    @grad.setter
    def grad(self, value: SparseTensor | None) -> None:
        if value is None:
            self._sparse_values.grad = None
        elif isinstance(value, SparseTensor) and value._sparse_indices is self._sparse_indices:
            self._sparse_values.grad = value._sparse_values
        else:
            raise RuntimeError(f"a sparse tensor's .grad can only be set to None or a sparse tensor of its "
                               f"places, got {describe(value)}")

    def detach(self) -> SparseTensor:
        return SparseTensor._make(self._sparse_indices, self._sparse_values.detach(), self.shape, self._coalesced)

    def clone(self, *, memory_format: Any = None) -> SparseTensor:
        return SparseTensor._make(self._sparse_indices.clone(), self._sparse_values.clone(), self.shape,
                                  self._coalesced)

    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        """Moved or converted, as Tensor.to: the values as asked, the indices to the same device."""
        values = self._sparse_values.to(*args, **kwargs)
        if values is self._sparse_values:
            return self
        return SparseTensor._make(self._sparse_indices.to(values.device), values, self.shape, self._coalesced)

    def cpu(self) -> SparseTensor:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> SparseTensor:
        return self.to("cuda" if device is None else device)

    def double(self) -> SparseTensor:
        return self.to(dtype=float64)

    def float(self) -> SparseTensor:
        return self.to(dtype=float32)

    # -- arithmetic ------------------------------------------------------------------------------------
    def __add__(self, other: Any) -> SparseTensor:  # type: ignore[override]
        return self.add(other)

    def add(self, other: Any, *, alpha: Any = 1) -> SparseTensor:
        """sparse + sparse (same size): a sparse tensor, coalesced when both were. PyTorch refuses
        sparse + dense; dense + sparse is dense (``__radd__``)."""
        if not isinstance(other, SparseTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        if other.shape != self.shape:
            raise ShapeError(f"add: sparse tensors of different sizes: {tuple(self.shape)} and {tuple(other.shape)}")
        if self.sparse_dim() != other.sparse_dim():
            raise RuntimeError(f"add: sparse tensors with different sparse_dim: {self.sparse_dim()} and "
                               f"{other.sparse_dim()}")
        other_values = other._sparse_values if alpha == 1 else other._sparse_values * alpha
        summed = SparseTensor._make(cat([self._sparse_indices, other._sparse_indices], 1),
                                    cat([self._sparse_values, other_values.to(self.dtype)], 0), self.shape, False)
        return summed.coalesce() if self._coalesced and other._coalesced else summed

    def __radd__(self, other: Any) -> Tensor:
        """dense + sparse: the dense tensor with the entries added (a dense result)."""
        if isinstance(other, Tensor) or isinstance(other, (int, float)):
            return other + self.to_dense()
        return NotImplemented

    def __sub__(self, other: Any) -> SparseTensor:  # type: ignore[override]
        return self.add(other, alpha=-1)

    def __rsub__(self, other: Any) -> Tensor:
        return other - self.to_dense()

    def __neg__(self) -> SparseTensor:
        return SparseTensor._make(self._sparse_indices, -self._sparse_values, self.shape, self._coalesced)

    def mul(self, other: Any) -> SparseTensor:
        """sparse * number or 0-d tensor: the values scaled; sparse * dense of the same size: each
        entry times the dense element at its place. The places are kept."""
        if isinstance(other, Tensor) and other.ndim != 0:
            if isinstance(other, SparseTensor) or tuple(other.shape) != tuple(self.shape):
                raise SparseLayoutError(f"mul: Zero multiplies a sparse tensor by a number, a 0-d tensor or a "
                                        f"dense tensor of its size {tuple(self.shape)}, got {describe(other)}")
            other = products.gather_values(other, self._sparse_indices)     # (nnz, *dense_sizes)
        return SparseTensor._make(self._sparse_indices, self._sparse_values * other, self.shape, self._coalesced)

    __mul__ = __rmul__ = mul

    def __truediv__(self, other: Any) -> SparseTensor:
        if isinstance(other, Tensor) and other.ndim != 0:
            raise SparseLayoutError(f"div: Zero divides a sparse tensor by a number or a 0-d tensor only, "
                                    f"got {describe(other)}")
        return SparseTensor._make(self._sparse_indices, self._sparse_values / other, self.shape, self._coalesced)

    div = __truediv__

    def matmul(self, other: Tensor) -> Tensor:
        """(n, m) sparse @ (m, p) or (m,) dense -> dense; gradients for both operands' values."""
        op = "mm"
        if not isinstance(other, Tensor) or isinstance(other, SparseTensor):
            raise TypeError(f"{op}: a sparse matrix multiplies a dense matrix or vector, got {describe(other)}")
        if self.ndim != 2 or self.sparse_dim() != 2:
            raise RuntimeError(f"{op}: the sparse operand must be a 2-D matrix with 2 sparse dims, got size "
                               f"{tuple(self.shape)} with sparse_dim {self.sparse_dim()}")
        if other.ndim not in (1, 2):
            raise RuntimeError(f"{op}: the dense operand must be a matrix or a vector, got {describe(other)}")
        if other.shape[0] != self.shape[1]:
            raise ShapeError(f"{op}: mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} "
                             f"and {'x'.join(str(n) for n in other.shape)})")
        if other.device != self.device:
            raise DeviceError(f"{op}: the sparse operand is on {self.device} and the dense one on {other.device}; "
                              "move one with .to(device) first")
        if other.dtype is not self.dtype:
            raise RuntimeError(f"{op}: expected mat1 and mat2 to have the same dtype, but got: {self.dtype} != "
                               f"{other.dtype}")
        column = other.unsqueeze(1) if other.ndim == 1 else other
        out = products.sparse_dense_mm(self._sparse_indices, self._sparse_values, self.shape[0], column)
        return out.squeeze(1) if other.ndim == 1 else out

    __matmul__ = mm = matmul

    def __rmatmul__(self, other: Tensor) -> Tensor:
        """dense (n, m) @ sparse (m, p) -> dense (n, p), as (sparseᵀ @ denseᵀ)ᵀ."""
        if not isinstance(other, Tensor) or other.ndim != 2:
            raise RuntimeError(f"mm: a dense matrix times a sparse one takes a 2-D dense operand, got "
                               f"{describe(other)}")
        return self.t().matmul(other.mT).mT

    def t(self) -> SparseTensor:
        """The transpose of a sparse matrix: its places' rows swapped."""
        if self.ndim != 2 or self.sparse_dim() != 2:
            raise RuntimeError(f"t: expects a 2-D sparse matrix, got size {tuple(self.shape)}")
        swapped = index_select(self._sparse_indices, 0, arange(1, -1, -1, device=self.device))
        return SparseTensor._make(swapped, self._sparse_values, (self.shape[1], self.shape[0]), False)

    def sparse_mask(self, mask: SparseTensor) -> SparseTensor:
        return sparse_mask_of(self.to_dense(), mask)

    # -- what has no dense meaning -----------------------------------------------------------------
    def _host_array(self) -> np.ndarray:
        raise refusal(self.shape)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __bool__(self) -> bool:
        raise refusal(self.shape)

    def item(self) -> NoReturn:
        raise refusal(self.shape)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._sparse_indices, self._sparse_values, tuple(self.shape), self._coalesced))

    def __deepcopy__(self, memo: dict[int, Any]) -> SparseTensor:
        result = self.clone().detach()
        result.requires_grad_(self.requires_grad and self.grad_fn is None)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        indices = "tensor(indices=" + _bare(self._sparse_indices).replace("\n", "\n" + " " * 15)
        values = "       values=" + _bare(self._sparse_values).replace("\n", "\n" + " " * 14)
        extras = [f"size={tuple(self.shape)}", f"nnz={self._nnz()}"]
        if self.dtype not in (float32, int64, bool_):
            extras.append(f"dtype={self.dtype}")
        extras.append("layout=zero.sparse_coo")
        if self.device.type != "cpu":
            extras.insert(0, f"device='{self.device}'")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"{indices},\n{values},\n       " + ", ".join(extras) + ")"


def sparse_mask_of(dense: Tensor, mask: SparseTensor) -> SparseTensor:
    """``dense.sparse_mask(mask)``: dense's values at mask's places (mask coalesced first)."""
    if not isinstance(mask, SparseTensor):
        raise TypeError(f"sparse_mask: mask must be a sparse tensor, got {describe(mask)}")
    if tuple(mask.shape) != tuple(dense.shape):
        raise ShapeError(f"sparse_mask: operands have incompatible sizes: {tuple(dense.shape)} and "
                         f"{tuple(mask.shape)}")
    mask = mask.coalesce()
    values = products.gather_values(dense, mask._sparse_indices)
    return SparseTensor._make(mask._sparse_indices, values, dense.shape, True)


def _bare(t: Tensor) -> str:
    """``tensor([...])`` without dtype, device or grad (how PyTorch shows a sparse tensor's parts)."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t.shape)})"
    host = t.detach()._host_array()
    if t.dtype is bfloat16:
        host = host.astype(np.float32)
    return "tensor(" + np.array2string(host, separator=", ", prefix="tensor(",
                                       **printing.array2string_options()) + ")"


def _rebuild(indices: Tensor, values: Tensor, size: tuple[int, ...], coalesced: bool) -> SparseTensor:
    return SparseTensor._make(indices, values, size, coalesced)
