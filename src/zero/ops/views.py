"""View ops: new metadata on the same storage, no data copied.

A view shares its input's storage but is a tensor of its own, with its own
graph record and gradient slot (the book's ``ViewWithMeta``). Each view op's
backward maps the gradient back to the input's shape:

    transpose / permute   permute the gradient back
    view / reshape        reshape the gradient back
    expand                sum over the expanded dimensions (sum_to_shape)

Indexing (``t[1:3]``, a view, and ``t[index_tensor]``, a copy) is in ``indexing``;
the copies a reshape sometimes needs are in ``conversion``. The functional forms
(``zero.reshape``, and ``x.view``, ``x.T`` ... through ``ops/tensor_methods.py``) are at
the end of the file.
"""
from __future__ import annotations

import warnings
from typing import Any

from ..autograd.op import Grads, Op
from ..errors import ShapeError, ViewError, ZeroIndexError, describe
from ..dtypes import DType
from ..tensors.meta import TensorMeta, infer_shape, normalize_dim, numel, view_strides
from ..tensors.tensor import Tensor
from .arguments import Sizes, sizes_of
from .broadcast import sum_to_shape
from .conversion import Copy

ViewStep = tuple[type[Op], tuple[Any, ...]]  # a view op and the parameters it was applied with


def mark_view(out: Tensor, x: Tensor, step: ViewStep) -> Tensor:
    """Remember that ``out`` is a view of ``x`` made by ``step`` (op class, parameters), as
    the steps from the root base: an in-place op on ``out`` rebases that base (ops/inplace.py)."""
    if x._view_of is None:
        out._view_of = (x, (step,), x._history_stamp)
    else:
        base, steps, stamp = x._view_of
        out._view_of = (base, steps + (step,), stamp)
    return out


class View(Op):
    """Reinterpret the storage with a new shape; only where strides allow it."""

    def forward(self, x: Tensor, shape: Sizes) -> Tensor:
        meta = x._meta
        shape = infer_shape(shape, numel(meta.shape), "view")
        if meta.contiguous:     # the common case, and the cheap one: row-major strides of the new shape
            out = x._reshaped(shape)
        else:
            strides = view_strides(meta.shape, meta.strides, shape)
            if strides is None:
                raise ViewError(f"view: cannot view {describe(x)} with strides {list(meta.strides)} as "
                                f"{list(shape)} without copying; use .reshape(...) (which copies when it "
                                "must) or .contiguous().view(...)")
            out = x._view_as(shape, strides, meta.offset)
        self.in_shape = meta.shape
        return mark_view(out, x, (View, (shape,)))

    def backward(self, grad: Tensor) -> Grads:
        return (reshape(grad, self.in_shape), None)


def reshape(input: Tensor, shape: Sizes) -> Tensor:
    """A view when the layout allows it, otherwise a contiguous copy reshaped."""
    meta = input._meta
    shape = infer_shape(shape, numel(meta.shape), "reshape")
    if shape == meta.shape:    # a view, as in PyTorch: a new tensor object on the same storage
        return View.apply(input, shape)
    if not meta.contiguous and view_strides(meta.shape, meta.strides, shape) is None:
        input = Copy.apply(input)
    return View.apply(input, shape)


class Permute(Op):
    """Reorder dimensions: sizes and strides are permuted, the data stays put."""

    def forward(self, x: Tensor, dims: Sizes) -> Tensor:
        meta = x._meta
        ndim = len(meta.shape)
        dims = tuple(normalize_dim(d, ndim, "permute") for d in dims)
        if sorted(dims) != list(range(ndim)):
            raise ShapeError(f"permute: dims {list(dims)} must be a permutation of 0..{ndim - 1} "
                             f"for {describe(x)}")
        self.inverse = tuple(sorted(range(ndim), key=dims.__getitem__))
        out = x._view_as(tuple(meta.shape[d] for d in dims), tuple(meta.strides[d] for d in dims), meta.offset)
        return mark_view(out, x, (Permute, (dims,)))

    def backward(self, grad: Tensor) -> Grads:
        return (Permute.apply(grad, self.inverse), None)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    ndim = input.ndim
    dims = list(range(ndim))
    d0, d1 = normalize_dim(dim0, ndim, "transpose"), normalize_dim(dim1, ndim, "transpose")
    if ndim < 2 or d0 == d1:  # still a view, a new tensor object, as in PyTorch
        return Permute.apply(input, tuple(dims))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


class Expand(Op):
    """Repeat size-1 dimensions (and add leading ones) by giving them stride 0."""

    def forward(self, x: Tensor, shape: Sizes) -> Tensor:
        meta = x._meta
        lead = len(shape) - len(meta.shape)
        if lead < 0:
            raise ShapeError(f"expand: target {list(shape)} has fewer dimensions than {describe(x)}")
        new_shape: list[int] = []
        new_strides: list[int] = []
        for size in shape:
            if size < -1:   # (-1 keeps a size; any other negative one is no size at all)
                raise ShapeError(f"expand: sizes must be non-negative (or -1 to keep a dimension's size), "
                                 f"got {list(shape)} for {describe(x)}")
        for i, size in enumerate(shape):
            if i < lead:
                if size < 0:
                    raise ShapeError(f"expand: size -1 is not allowed for a new leading dimension ({list(shape)})")
                new_shape.append(size)
                new_strides.append(0)
                continue
            old = meta.shape[i - lead]
            if size == -1 or size == old:
                new_shape.append(old)
                new_strides.append(meta.strides[i - lead])
            elif old == 1:
                new_shape.append(size)
                new_strides.append(0)
            else:
                raise ShapeError(f"expand: cannot expand {describe(x)} to {list(shape)} "
                                 f"(dimension {i} has size {old}, only size-1 dimensions can grow)")
        self.in_shape = meta.shape
        return mark_view(x._view_as(tuple(new_shape), tuple(new_strides), meta.offset), x, (Expand, (tuple(shape),)))

    def backward(self, grad: Tensor) -> Grads:
        return (sum_to_shape(grad, self.in_shape), None)


def squeeze(input: Tensor, dim: int | Sizes | None = None) -> Tensor:
    shape = input.shape
    if dim is None:
        drop = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        drop = {d for d in (normalize_dim(d, len(shape), "squeeze") for d in dims) if shape and shape[d] == 1}
    return View.apply(input, tuple(s for i, s in enumerate(shape) if i not in drop))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    ndim = input.ndim
    if not -ndim - 1 <= dim <= ndim:
        raise ZeroIndexError(f"unsqueeze: dim {dim} is out of range for {describe(input)} "
                             f"(expected a value in [{-ndim - 1}, {ndim}])")
    dim = dim % (ndim + 1)
    return View.apply(input, input.shape[:dim] + (1,) + input.shape[dim:])


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if input.ndim == 0:
        return reshape(input, (1,))
    start = normalize_dim(start_dim, input.ndim, "flatten")
    end = normalize_dim(end_dim, input.ndim, "flatten")
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if start == end:  # nothing to merge: the tensor itself, as in PyTorch
        return input
    shape = input.shape
    return reshape(input, shape[:start] + (numel(shape[start:end + 1]),) + shape[end + 1:])


# -- functional forms and the methods that are views (x.view, x.T ...) ----------------------------


def view(input: Tensor, *shape: int | Sizes) -> Tensor:
    """``x.view(2, 3)`` or ``x.view((2, 3))``: the same elements read in a new shape, where
    the strides allow it (``reshape`` copies where they do not). ``x.view(zero.int32)``: the
    same bytes read as another dtype (``view_dtype``)."""
    if len(shape) == 1 and isinstance(shape[0], DType):
        return view_dtype(input, shape[0])
    return View.apply(input, sizes_of(shape))


def view_dtype(input: Tensor, dtype: DType) -> Tensor:
    """The same storage read as ``dtype``, PyTorch's rules: of the same itemsize, the same
    shape; otherwise the last dimension (stride 1) holds proportionally more or fewer elements,
    and every other stride and the offset must convert exactly. Not differentiable (no graph),
    as in PyTorch."""
    meta = input._meta
    old, new = meta.dtype.itemsize, dtype.itemsize
    shape, strides, offset = meta.shape, meta.strides, meta.offset
    if old != new:
        what = f"to view {meta.dtype.name} as {dtype.name} (different element sizes)"
        if not shape:
            raise ViewError(f"view: a 0-d tensor cannot be viewed {what[3:]}: {describe(input)}")
        if strides[-1] != 1 and shape[-1] != 1:
            raise ViewError(f"view: the last dimension must have stride 1 {what}, got strides {list(strides)}")
        if old > new:
            r = old // new
            shape = shape[:-1] + (shape[-1] * r,)
            strides = tuple(s * r for s in strides[:-1]) + (1,)
            offset *= r
        else:
            r = new // old
            if shape[-1] % r:
                raise ViewError(f"view: the last size must be divisible by {r} {what}, got {describe(input)}")
            for d, s in enumerate(strides[:-1]):
                if s % r:
                    raise ViewError(f"view: stride {s} of dimension {d} must be divisible by {r} {what}")
            if offset % r:
                raise ViewError(f"view: the storage offset {offset} must be divisible by {r} {what}")
            shape = shape[:-1] + (shape[-1] // r,)
            strides = tuple(s // r for s in strides[:-1]) + (1,)
            offset //= r
    return Tensor._from_storage(input._storage, TensorMeta(shape, strides, offset, dtype, meta.device))


def view_as(input: Tensor, other: Tensor) -> Tensor:
    return View.apply(input, other.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other.shape)


def permute(input: Tensor, dims: Sizes) -> Tensor:
    return Permute.apply(input, tuple(dims))


def t(input: Tensor) -> Tensor:
    """The transpose of a matrix (a vector or a number as it is)."""
    if input.ndim > 2:
        raise ValueError(f"t() expects a tensor with at most 2 dimensions, got {input.ndim}; use transpose()")
    return all_dims_reversed(input)


def all_dims_reversed(input: Tensor) -> Tensor:
    """``x.T``: every dimension in reverse order."""
    return Permute.apply(input, tuple(reversed(range(input.ndim))))


def last_two_dims_swapped(input: Tensor) -> Tensor:
    """``x.mT``: the matrices of a batch transposed (a 0-d tensor: itself, as a view, with
    PyTorch's deprecation warning; a 1-d tensor is refused, as in PyTorch)."""
    if input.ndim == 0:
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
                      "cases.", UserWarning, stacklevel=3)
        return input.view(())
    if input.ndim == 1:
        raise ShapeError(f"mT: only supported on matrices or batches of matrices, got a 1-D tensor "
                         f"({describe(input)})")
    return transpose(input, -2, -1)


def expand(input: Tensor, *sizes: int | Sizes) -> Tensor:
    """``x.expand(4, -1)`` or ``x.expand((4, -1))``: size-1 dimensions repeated, no copy."""
    return Expand.apply(input, sizes_of(sizes))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return Expand.apply(input, other.shape)


def broadcast_to(input: Tensor, size: Sizes) -> Tensor:
    return Expand.apply(input, tuple(size))

