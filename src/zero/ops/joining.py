"""Joining, splitting and gathering: cat, stack, split, chunk, unbind, gather,
index_select, embedding lookup, tril and triu.

Splits are views (each piece a basic-index view of the input). Gathers copy;
their backward scatter-*adds*, so an index that repeats accumulates gradient.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .. import dtypes
from ..autograd import autocast_hook
from ..autograd.op import Grads, Op
from ..errors import DTypeError, IndexRangeError, ShapeError, ValueRangeError, ZeroIndexError, describe, describe_all
from ..errors import IndexShapeError
from ..tensors.creation import zeros
from ..tensors.meta import Shape, normalize_dim
from ..tensors.tensor import Tensor
from .index_checks import check_index_range
from .indexing import BasicIndex


def _check_index(op: str, index: Tensor) -> None:
    if not isinstance(index, Tensor) or index.dtype not in (dtypes.int64, dtypes.int32):
        got = describe(index)
        raise DTypeError(f"{op}: index must be an int64 or int32 tensor, got {got}")


def _check_range(op: str, index: Tensor, size: int) -> None:
    lowest = -size if op in ("take", "index_fill") else 0   # (the others refuse negatives, as PyTorch)

    def problem(smallest: int, largest: int) -> str | None:
        if smallest < lowest or largest >= size:
            return f"index out of range: values must lie in [{lowest}, {size - 1}], got [{smallest}, {largest}]"
        return None

    # PyTorch: IndexError from index_select and embedding, RuntimeError from gather and scatter
    error = ZeroIndexError if op in ("index_select", "embedding") else IndexRangeError
    check_index_range(op, index, problem, error=error)


class Cat(Op):
    """Concatenate along ``dim``; every other dimension must match."""

    def forward(self, *tensors: Tensor, dim: int = 0) -> Tensor:
        if not tensors:
            raise ValueError("cat: expected a non-empty sequence of tensors")
        first = tensors[0]
        if first.ndim == 0:
            raise ShapeError("cat: zero-dimensional tensors cannot be concatenated; use stack()")
        dim = normalize_dim(dim, first.ndim, "cat")
        for t in tensors[1:]:
            if t.ndim != first.ndim or t.shape[:dim] + t.shape[dim + 1:] != first.shape[:dim] + first.shape[dim + 1:]:
                raise ShapeError(f"cat: sizes must match except in dimension {dim}, got {describe_all(tensors)}")
        dtype = dtypes.result_type(*tensors)
        sizes = [t.shape[dim] for t in tensors]
        out = Tensor._empty(first.shape[:dim] + (sum(sizes),) + first.shape[dim + 1:], dtype, first.device)
        kernels = first.device.kernels
        start = 0
        for t, size in zip(tensors, sizes):
            kernels.copy(t._array, out._array[(slice(None),) * dim + (slice(start, start + size),)])
            start += size
        self.dim, self.sizes, self.dtypes = dim, sizes, [t.dtype for t in tensors]
        return out

    def backward(self, grad: Tensor) -> Grads:
        pieces: list[Tensor] = []
        start = 0
        for size, dtype in zip(self.sizes, self.dtypes):
            piece = grad[(slice(None),) * self.dim + (slice(start, start + size),)]
            pieces.append(piece if dtype is grad.dtype else piece.to(dtype))
            start += size
        return tuple(pieces)


def cat(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    if isinstance(tensors, Tensor):
        raise TypeError(f"cat: expected a sequence of tensors, got one tensor {describe(tensors)}")
    if autocast_hook.state.active:
        tensors = autocast_hook.cast("cat", *tensors)
    return Cat.apply(*tensors, dim=dim)


concat = cat  # (NumPy's name, which PyTorch has too)


def stack(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if autocast_hook.state.active:
        tensors = list(autocast_hook.cast("stack", *tensors))
    if not tensors:
        raise ValueRangeError("stack: expected a non-empty sequence of tensors")
    shape = tensors[0].shape
    for t in tensors[1:]:
        if t.shape != shape:
            raise ShapeError(f"stack: all tensors must have the same shape, got {describe_all(tensors)}")
    ndim = len(shape) + 1
    if not -ndim <= dim < ndim:
        raise ZeroIndexError(f"stack: dim {dim} out of range for {ndim} dimensions")
    return Cat.apply(*(t.unsqueeze(dim) for t in tensors), dim=dim)


def split(x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Views of consecutive pieces: equal pieces of a given size (the last may be smaller)
    or pieces of the listed sizes."""
    dim = normalize_dim(dim, x.ndim, "split")
    length = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise ValueRangeError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, length - s) for s in range(0, length, step)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != length:
            raise ShapeError(f"split: sections {sizes} sum to {sum(sizes)}, but dimension {dim} of "
                             f"{describe(x)} has size {length}")
    pieces: list[Tensor] = []
    start = 0
    for size in sizes:
        pieces.append(BasicIndex.apply(x, (slice(None),) * dim + (slice(start, start + size),)))
        start += size
    return tuple(pieces)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    if chunks <= 0:
        raise ValueRangeError(f"chunk: chunks must be positive, got {chunks}")
    if x.ndim == 0:
        raise ShapeError(f"chunk: expects a tensor of at least 1 dimension, got {describe(x)}")
    length = x.shape[normalize_dim(dim, x.ndim, "chunk")]
    return split(x, max(1, math.ceil(length / chunks)), dim)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    dim = normalize_dim(dim, x.ndim, "unbind")
    return tuple(BasicIndex.apply(x, (slice(None),) * dim + (i,)) for i in range(x.shape[dim]))


class PickAlongDim(Op):
    """Values picked along ``dim`` by an integer index (gather, index_select). Backward adds
    each output gradient back where its value came from, so a repeated index accumulates."""

    kernel = staticmethod(lambda kernels: kernels.gather)              # picks, forward
    scatter_kernel = staticmethod(lambda kernels: kernels.scatter_add)  # adds back, backward

    def pick(self, x: Tensor, dim: int, index: Tensor, out_shape: Shape) -> Tensor:
        out = Tensor._empty(out_shape, x.dtype, x.device)
        self.kernel(x.device.kernels)(x._array, dim, index._array, out._array)
        self.save_for_backward(index)
        self.in_shape, self.in_dtype, self.dim = x.shape, x.dtype, dim
        return out

    def backward(self, grad: Tensor) -> Grads:
        (index,) = self.saved_tensors
        grad_in = zeros(self.in_shape, dtype=self.in_dtype, device=grad.device)
        grad = grad.contiguous()
        self.scatter_kernel(grad.device.kernels)(grad_in._array, self.dim, index._array, grad._array)
        return (grad_in, None, None)


class Gather(PickAlongDim):
    """out[i][j] = x[index[i][j]][j] for dim 0 (and likewise for other dims)."""

    kernel = staticmethod(lambda kernels: kernels.gather)
    scatter_kernel = staticmethod(lambda kernels: kernels.scatter_add)

    def forward(self, x: Tensor, dim: int, index: Tensor) -> Tensor:
        _check_index("gather", index)
        dim = normalize_dim(dim, x.ndim, "gather")
        if index.ndim != x.ndim or any(index.shape[d] > x.shape[d] for d in range(x.ndim) if d != dim):
            raise ShapeError(f"gather: index {describe(index)} must have the input's number of dimensions "
                             f"and no larger size outside dim {dim} (input {describe(x)})")
        _check_range("gather", index, x.shape[dim])
        return self.pick(x, dim, index, index.shape)


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    if isinstance(x, Tensor) and x.ndim == 0 and isinstance(index, Tensor):
        # a 0-d input acts as a 1-element vector, as in PyTorch; the result has index's shape
        normalize_dim(dim, 0, "gather")
        if index.ndim > 1:
            raise ShapeError(f"gather: index {describe(index)} must have the same number of dimensions "
                             f"as the input {describe(x)} (or 1, for a 0-d input)")
        return Gather.apply(x.reshape(1), 0, index.reshape(-1)).reshape(index.shape)
    return Gather.apply(x, dim, index)


class IndexSelect(PickAlongDim):
    """Rows (or slices along ``dim``) picked by a 1-D index; an embedding lookup is the
    same with ``dim=0`` and an index of any shape."""

    kernel = staticmethod(lambda kernels: kernels.index_select)
    scatter_kernel = staticmethod(lambda kernels: kernels.index_add_along)

    def forward(self, x: Tensor, dim: int, index: Tensor) -> Tensor:
        _check_index("index_select", index)
        dim = normalize_dim(dim, x.ndim, "index_select")
        _check_range("index_select", index, x.shape[dim])
        return self.pick(x, dim, index, x.shape[:dim] + index.shape + x.shape[dim + 1:])


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexShapeError(f"index_select: index must be 0-D or 1-D, got {describe(index)}")
    if isinstance(x, Tensor) and x.ndim == 0 and isinstance(index, Tensor):
        # a 0-d input acts as a 1-element vector, as in PyTorch: one index, a 0-d result
        normalize_dim(dim, 0, "index_select")
        if index.numel() != 1:
            raise ShapeError(f"index_select: an index into a 0-d input ({describe(x)}) must hold exactly "
                             f"one value, got {describe(index)}")
        return IndexSelect.apply(x.reshape(1), 0, index.reshape(1)).reshape(())
    return IndexSelect.apply(x, dim, index)


def embedding(indices: Tensor, weight: Tensor) -> Tensor:
    """weight[indices]: (*) int -> (*, C). Backward adds each output row's gradient into the
    row it came from, so repeated tokens accumulate."""
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ShapeError(f"embedding: weight must be a 2-D tensor [num_embeddings, dim], got "
                         f"{describe(weight)}")
    return IndexSelect.apply(weight, 0, indices)


class Triangle(Op):
    """tril/triu over the last two dimensions; the gradient is masked the same way."""

    def forward(self, x: Tensor, diagonal: int, upper: bool) -> Tensor:
        if x.ndim < 2:
            raise ShapeError(f"{'triu' if upper else 'tril'}: needs at least 2 dimensions, got {describe(x)}")
        out = Tensor._empty(x.shape, x.dtype, x.device)
        x.device.kernels.triangle(x._array, diagonal, upper, out._array)
        self.diagonal, self.upper = diagonal, upper
        return out

    def backward(self, grad: Tensor) -> Grads:
        return (Triangle.apply(grad, self.diagonal, self.upper), None, None)


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    return Triangle.apply(x, diagonal, False)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    return Triangle.apply(x, diagonal, True)
