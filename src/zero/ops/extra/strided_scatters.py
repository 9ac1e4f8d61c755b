"""``as_strided`` (a view of any geometry on a tensor's storage) and the scatters that write
one tensor into a view of a copy of another: ``diagonal_scatter``, ``select_scatter``,
``slice_scatter``, ``as_strided_scatter``; ``index_put`` (values at advanced indices, added
up with ``accumulate``), ``put`` (values at flat indices) and ``index_reduce`` (slices reduced
with a source's, by way of ``scatter_reduce``).

``as_strided``'s backward is PyTorch's: the gradient of each output element is added into
the storage position it read (so elements read twice get both), and the input's gradient is
read back from those positions through the input's own geometry (divided by how many of the
input's elements share a position, when some do).

The scatters are compositions: a copy of ``input``, the view of it, ``copy_`` into the view
(the in-place machinery gives the gradients: ``src`` gets the view's part of the gradient,
``input`` the rest).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...autograd.op import Grads, Op
from ...errors import ShapeError, describe
from ...tensors.creation import tensor, zeros
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..conversion import clone
from ..views import mark_view
from . import linalg
from .scatter import index_add
from .scatter_reduce import scatter_reduce


def _positions(shape: Sequence[int], strides: Sequence[int], offset: int) -> np.ndarray:
    """The storage position (in elements) of every element of a geometry, row-major."""
    positions = np.full((1,) * len(shape), offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(shape, strides)):
        step = np.arange(size, dtype=np.int64) * stride
        positions = positions + step.reshape((1,) * axis + (size,) + (1,) * (len(shape) - axis - 1))
    return np.broadcast_to(positions, tuple(shape)).reshape(-1)


class AsStrided(Op):
    """A view of ``x``'s storage read with ``shape``, ``strides`` and ``offset`` (elements)."""

    def forward(self, x: Tensor, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Tensor:
        meta = x._meta
        capacity = x._storage.nbytes // meta.dtype.itemsize
        needed = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        if needed > capacity:
            raise ShapeError(f"as_strided: sizes {list(shape)}, strides {list(strides)} and storage offset {offset} "
                             f"need a storage of {needed} elements; {describe(x)} has {capacity}")
        self.in_geometry = (meta.shape, meta.strides, meta.offset)
        self.out_geometry = (shape, strides, offset)
        return mark_view(x._view_as(shape, strides, offset), x, (AsStrided, (shape, strides, offset)))

    def backward(self, grad: Tensor) -> Grads:
        out_positions = _positions(*self.out_geometry)
        in_positions = _positions(*self.in_geometry)
        low = int(min(out_positions.min(initial=0), in_positions.min(initial=0)))
        length = int(max(out_positions.max(initial=0), in_positions.max(initial=0))) - low + 1
        device = grad.device
        storage = zeros(length, dtype=grad.dtype, device=device)
        storage = index_add(storage, 0, tensor(out_positions - low, device=device), grad.reshape(-1))
        read = tensor(in_positions - low, device=device)
        grad_in = storage[read]
        counts = np.bincount(in_positions - low, minlength=length)
        if counts.max(initial=0) > 1:   # (input elements sharing a position split its gradient)
            grad_in = grad_in / tensor(counts[in_positions - low], dtype=grad.dtype, device=device)
        return grad_in.reshape(self.in_geometry[0]), None, None, None


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides and storage offset
    (elements from the storage's start; input's own offset by default)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"as_strided(): argument 'input' must be a Tensor, not {type(input).__name__}")
    shape, strides = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise ShapeError(f"as_strided: mismatch in length of strides and shape ({len(strides)} and {len(shape)})")
    if any(n < 0 for n in shape) or any(s < 0 for s in strides):
        raise ShapeError(f"as_strided: negative sizes or strides are not supported, got {list(shape)}, "
                         f"{list(strides)}")
    offset = input._meta.offset if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise ShapeError(f"as_strided: storage offset must be non-negative, got {offset}")
    return AsStrided.apply(input, shape, strides, offset)


def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int],
                    storage_offset: int | None = None) -> Tensor:
    """``as_strided``'s values in new (contiguous) memory."""
    return clone(as_strided(input, size, stride, storage_offset))


# -- scatters into a view of a copy -----------------------------------------------------------------


def _scatter_into(op: str, input: Tensor, src: Tensor, view: Tensor, out: Tensor) -> Tensor:
    if tuple(view.shape) != tuple(src.shape):
        raise ShapeError(f"{op}: src {describe(src)} must have the shape of the view it fills, {list(view.shape)}")
    view.copy_(src)
    return out


def _check(op: str, input: object, src: object) -> None:
    for name, t in (("input", input), ("src", src)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(t).__name__}")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` on the diagonal ``diagonal(offset, dim1, dim2)``."""
    _check("diagonal_scatter", input, src)
    out = clone(input)
    return _scatter_into("diagonal_scatter", input, src, linalg.diagonal(out, offset, dim1, dim2), out)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` at ``index`` along ``dim``."""
    _check("select_scatter", input, src)
    dim = normalize_dim(dim, input.ndim, "select_scatter")
    if not -input.shape[dim] <= index < input.shape[dim]:
        raise IndexError(f"select_scatter: index {index} out of range for dimension {dim} of {describe(input)}")
    out = clone(input)
    return _scatter_into("select_scatter", input, src, out[(slice(None),) * dim + (index,)], out)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` in the slice ``start:end:step`` along ``dim``."""
    _check("slice_scatter", input, src)
    dim = normalize_dim(dim, input.ndim, "slice_scatter")
    out = clone(input)
    return _scatter_into("slice_scatter", input, src, out[(slice(None),) * dim + (slice(start, end, step),)], out)


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` (contiguous) with ``src`` written through ``as_strided(size, stride,
    storage_offset)`` of it."""
    _check("as_strided_scatter", input, src)
    out = clone(input).contiguous()
    return _scatter_into("as_strided_scatter", input, src, as_strided(out, size, stride, storage_offset), out)


# -- values at indices: index_put, put ---------------------------------------------------------------


def _index_tensors(op: str, input: Tensor, indices: Sequence[Tensor | None]) -> list[Tensor]:
    """The index tensors as integer tensors, one per leading dimension (a bool mask stands for
    the integer indices of its True elements, one tensor per dimension it covers)."""
    out: list[Tensor] = []
    for index in indices:
        if not isinstance(index, Tensor):
            raise TypeError(f"{op}: indices must be tensors, got {type(index).__name__}")
        if index.dtype.name == "bool":
            out.extend(index.nonzero().unbind(1))
        elif index.dtype.is_floating_point:
            raise IndexError(f"{op}: tensors used as indices must be long, int, byte or bool tensors, "
                             f"got {describe(index)}")
        else:
            out.append(index)
    if len(out) > input.ndim:
        raise IndexError(f"{op}: too many indices for {describe(input)}: {len(out)}")
    return out


def index_put(input: Tensor, indices: Sequence[Tensor], values: Tensor,
              accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` at ``input[indices]`` (advanced indexing by a tuple of
    index tensors); with ``accumulate``, added to what is there -- repeated indices add up."""
    if not isinstance(input, Tensor):
        raise TypeError(f"index_put(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be a tuple of Tensors, not {type(indices).__name__}")
    index = _index_tensors("index_put", input, indices)
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not {type(values).__name__}")
    if not accumulate:
        out = clone(input)
        out[tuple(index)] = values
        return out
    lead = input.shape[:len(index)]
    rest = input.shape[len(index):]
    flat_index = None
    for k, (i, size) in enumerate(zip(index, lead)):
        if bool(((i < -size) | (i >= size)).any()):
            raise IndexError(f"index_put: index out of range for dimension {k} of size {size}")
        wrapped = i % size
        flat_index = wrapped if flat_index is None else flat_index * size + wrapped
    if flat_index is None:   # (no indices: the whole tensor, once)
        return input + values
    target_shape = tuple(flat_index.shape) + tuple(rest)
    source = values.to(input.dtype).expand(target_shape).reshape((-1,) + tuple(rest))
    rows = int(np.prod(lead)) if lead else 1
    flat = clone(input).reshape((rows,) + tuple(rest))
    return index_add(flat, 0, flat_index.reshape(-1), source).reshape(input.shape)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source``'s values at the flat (row-major) positions ``index``;
    with ``accumulate``, added to what is there."""
    if not isinstance(input, Tensor) or not isinstance(index, Tensor) or not isinstance(source, Tensor):
        raise TypeError("put(): input, index and source must be tensors")
    if index.numel() != source.numel():
        raise IndexError(f"put: index and source need to have the same number of elements, but got "
                           f"{index.numel()} and {source.numel()}")
    flat = index_put(input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` whose slices ``index[i]`` along ``dim`` are reduced ('prod', 'mean',
    'amax' or 'amin') with ``source``'s slice i (and with themselves unless ``include_self`` is
    False): ``scatter_reduce`` with the index spread over each slice."""
    if reduce not in INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not all(isinstance(t, Tensor) for t in (input, index, source)):
        raise TypeError("index_reduce(): input, index and source must be tensors")
    dim = normalize_dim(dim, input.ndim, "index_reduce")
    if index.ndim > 1 or index.numel() != source.shape[dim]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source.shape[dim]}), for dim: {dim}")
    size = input.shape[dim]
    if bool(((index < 0) | (index >= size)).any()):   # (negative indices too, as PyTorch)
        raise IndexError("index_reduce: index out of range in self")
    spread = index.reshape((1,) * dim + (-1,) + (1,) * (source.ndim - dim - 1)).expand(source.shape)
    return scatter_reduce(input, dim, spread.contiguous(), source, reduce, include_self=include_self)
