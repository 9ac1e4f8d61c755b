"""Writing along a dimension by an index, and picking by masks and flat indices, PyTorch's:
scatter, scatter_add, index_add, index_fill, index_copy (each out of place here; the
``x.name_()`` forms are in place), take, take_along_dim, masked_select, nonzero, argwhere.

    scatter(x, d, index, src)      out = x, then out[.., index[i][j], ..] = src[i][j] along d
    scatter_add(x, d, index, src)  the same, adding (a repeated index adds up)
    index_add(x, d, index, src)    out[.., index[k], ..] += alpha * src[.., k, ..] along d
    index_copy(x, d, index, src)   out[.., index[k], ..] = src[.., k, ..]
    index_fill(x, d, index, v)     out[.., index[k], ..] = v

Gradients (PyTorch's): where an op overwrote, x's gradient is 0 there and the written
values get the gradient gathered back from where they went; where it added, x's gradient
passes whole and the added values get theirs gathered. take, take_along_dim and
masked_select are compositions of indexing and gather (whose backward scatter-adds).

Index tensors are int64 (or int32) and checked against the dimension's size; PyTorch's
``reduce=`` of scatter: "add" with a src tensor or a value, "multiply" with a value.
"""
from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from ... import dtypes
from ...autograd.op import Grads, Op
from ...backends.device import Device
from ...dtypes import DType
from ...errors import DTypeError, DTypeMismatchError, ShapeError, ValueRangeError, describe
from ...tensors.meta import Shape, broadcast_shapes, normalize_dim
from ...tensors.tensor import Tensor
from ..arguments import Number, fill_value
from ..conversion import Copy
from ..joining import Gather, _check_index, _check_range
from ..views import Expand
from ...autograd import autocast_hook


def _to_tensor(array: Any, dtype: DType, device: Device) -> Tensor:
    """A tensor holding a copy of an array a kernel returned."""
    out = Tensor._empty(tuple(array.shape), dtype, device)
    device.kernels.copy(array, out._array)
    return out


def _check_scatter(op: str, x: Tensor, dim: int, index: Tensor, src: Tensor | None) -> int:
    """PyTorch's rule: index has x's number of dims, and no larger size than src in any dim
    nor than x outside ``dim``; its values lie in [-size, size) of x's ``dim``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {describe(x)}")
    _check_index(op, index)
    dim = normalize_dim(dim, x.ndim, op)
    if isinstance(src, Tensor) and src.dtype is not x.dtype:
        raise DTypeMismatchError(f"{op}: src {describe(src)} must have the input's dtype ({describe(x)}), "
                                 "as in PyTorch; convert it with .to(input.dtype)")
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise ShapeError(f"{op}: index {describe(index)} must have as many dimensions as the input {describe(x)}")
    for d in range(index.ndim):
        if d != dim and index.shape[d] > x.shape[d] or isinstance(src, Tensor) and index.shape[d] > src.shape[d]:
            raise ShapeError(f"{op}: index {describe(index)} is larger than the input {describe(x)} outside "
                             f"dim {dim}, or than src {describe(src)}, in dimension {d}")
    _check_range(op, index, x.shape[dim] if x.ndim else 1)
    return dim


def _window(src: Tensor, shape: Shape) -> Tensor:
    """The leading part of src of ``shape`` (src[:i, :j, ...]), as PyTorch's scatter reads it."""
    return src if src.shape == shape else src[tuple(slice(0, n) for n in shape)]


class Scatter(Op):
    """scatter with a src tensor (``value`` None) or a number."""

    def forward(self, x: Tensor, dim: int, index: Tensor, src: Tensor | None,
                value: Number | Tensor | None = None) -> Tensor:
        dim = _check_scatter("scatter", x, dim, index, src)
        out = Copy.apply(x.detach())
        if index.numel():
            values = _window(src.detach(), index.shape).to(x.dtype) if src is not None else \
                x.new_full(index.shape, fill_value("scatter", value, x.dtype))
            out.device.kernels.scatter_window(_flat(out)._array, dim, _flat(index)._array,
                                              _flat(values.contiguous())._array)
        self.save_for_backward(index)
        self.dim = dim
        if src is not None:   # (backward reads them only then: a number needs no gradient)
            self.src_shape, self.src_dtype = src.shape, src.dtype
        return out

    def backward(self, grad: Tensor) -> Grads:
        (index,) = self.saved_tensors
        need_x, _, _, need_src = self.needs_input_grad[:4]
        grad_x = Scatter.apply(grad, self.dim, index, None, value=0.0) if need_x else None
        grad_src = _gathered_back(grad, self.dim, index, self.src_shape, self.src_dtype) if need_src else None
        return grad_x, None, None, grad_src


def _flat(t: Tensor) -> Tensor:
    """A 0-d tensor as a 1-element vector (the kernels index along an axis)."""
    return t.reshape(1) if t.ndim == 0 else t


def _gathered_back(grad: Tensor, dim: int, index: Tensor, src_shape: Shape, src_dtype: DType) -> Tensor:
    """src's gradient: grad gathered where src's values went, zeros outside index's window."""
    picked = Gather.apply(_flat(grad), dim, _flat(index)).reshape(index.shape)
    if picked.shape != src_shape:
        picked = _pad_to(picked, src_shape)
    return picked.to(src_dtype)


def _pad_to(t: Tensor, shape: Shape) -> Tensor:
    """t in the leading corner of zeros of ``shape``."""
    out = t.new_zeros(shape)
    out[tuple(slice(0, n) for n in t.shape)] = t
    return out


class ScatterAdd(Op):
    def forward(self, x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
        if not isinstance(src, Tensor):
            raise TypeError(f"scatter_add: src must be a tensor, got {describe(src)}")
        dim = _check_scatter("scatter_add", x, dim, index, src)
        out = Copy.apply(x.detach())
        if index.numel():
            values = _window(src.detach(), index.shape).to(x.dtype).contiguous()
            out.device.kernels.scatter_add(_flat(out)._array, dim, _flat(index)._array, _flat(values)._array)
        self.save_for_backward(index)
        self.dim, self.src_shape, self.src_dtype = dim, src.shape, src.dtype
        return out

    def backward(self, grad: Tensor) -> Grads:
        (index,) = self.saved_tensors
        need_src = self.needs_input_grad[3]
        return grad, None, None, _gathered_back(grad, self.dim, index, self.src_shape, self.src_dtype) \
            if need_src else None


def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | Number | None = None, *,
            value: Number | Tensor | None = None, reduce: str | None = None) -> Tensor:
    """x with the values of src (or the number ``value``) written at ``index`` along ``dim``."""
    if isinstance(src, (bool, int, float)) and value is None:
        src, value = None, src       # scatter(x, dim, index, 2.5): PyTorch's value overload
    if (src is None) == (value is None):
        raise TypeError("scatter: give either src (a tensor) or value (a number)")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise ValueRangeError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
        if reduce == "add" and src is not None:
            return ScatterAdd.apply(input, dim, index, src)
        if src is None and value is not None and isinstance(input, Tensor) and isinstance(index, Tensor):
            return _scatter_value_reduce(input, dim, index, value, reduce)
        if isinstance(src, Tensor) and isinstance(input, Tensor) and isinstance(index, Tensor):
            return _scatter_multiply(input, dim, index, src)
        raise TypeError(f"scatter: src must be a tensor, got {describe(src)}")
    if src is not None and not isinstance(src, Tensor):
        raise TypeError(f"scatter: src must be a tensor, got {describe(src)}")
    return Scatter.apply(input, dim, index, src, value=value)


def _scatter_value_reduce(input: Tensor, dim: int, index: Tensor, value: Number | Tensor,
                          reduce: str) -> Tensor:
    """scatter(x, dim, index, value=v, reduce=...): each indexed place gets v added (or is
    multiplied by v) once per time the index names it -- x + v * hits, or x * v ** hits."""
    fill = fill_value("scatter", value, input.dtype)
    if reduce == "add":
        return ScatterAdd.apply(input, dim, index, input.new_full(index.shape, fill))
    hits = ScatterAdd.apply(input.detach().new_zeros(input.shape), dim, index, input.new_ones(index.shape).detach())
    return input * input.new_full((), fill) ** hits


def _scatter_multiply(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """scatter(x, dim, index, src, reduce='multiply'): each indexed place multiplied by every
    src value sent to it. A place named k times is written in k rounds, each round a write at
    distinct places (so repeats multiply, in index order); the rounds are found on the host."""
    dim = _check_scatter("scatter", input, dim, index, src)
    out = Copy.apply(input)
    if not index.numel():
        return out
    size = input.shape[dim] if input.ndim else 1
    where = np.indices(index.shape if index.ndim else (1,))
    where[dim if input.ndim else 0] = index.detach().cpu().numpy().reshape(where.shape[1:]) % size
    places = np.ravel_multi_index(tuple(where), input.shape if input.ndim else (1,)).reshape(-1)
    order = np.argsort(places, kind="stable")
    ranked = places[order]
    starts = np.r_[0, np.flatnonzero(ranked[1:] != ranked[:-1]) + 1]
    rank = np.empty_like(places)
    rank[order] = np.arange(len(places)) - np.repeat(starts, np.diff(np.r_[starts, len(places)]))
    flat_out = out.reshape(-1)                                   # (a view of out: the writes land there)
    values = _window(src, index.shape).reshape(-1)
    for r in range(int(rank.max()) + 1):
        picked = np.flatnonzero(rank == r)
        at = Tensor._from_host(places[picked], dtypes.int64, input.device)
        flat_out[at] = flat_out[at] * values[Tensor._from_host(picked, dtypes.int64, input.device)]
    return out


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, src = autocast_hook.cast("scatter_add", input, src)
    return ScatterAdd.apply(input, dim, index, src)


# -- index_add, index_copy, index_fill: whole slices along a dim ---------------------------------


def _check_index_along(op: str, x: Tensor, dim: int, index: Tensor, source: Tensor | None = None) -> int:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {describe(x)}")
    _check_index(op, index)
    if index.ndim > 1:
        raise ShapeError(f"{op}: index must be 0-D or 1-D, got {describe(index)}")
    dim = normalize_dim(dim, x.ndim, op)
    if source is not None:
        if not isinstance(source, Tensor):
            raise TypeError(f"{op}: source must be a tensor, got {describe(source)}")
        expected = x.shape[:dim] + (index.numel(),) + x.shape[dim + 1:] if x.ndim else (index.numel(),)
        if source.shape != expected and not (source.numel() == index.numel() == 1 and x.ndim <= 1):
            raise ShapeError(f"{op}: source {describe(source)} must have the input's shape with "
                             f"{index.numel()} (the index's length) in dim {dim}, i.e. {list(expected)} "
                             f"(input {describe(x)})")
        if source.dtype.category > x.dtype.category:
            raise DTypeError(f"{op}: source {describe(source)} cannot be written into the input {describe(x)}")
    _check_range(op, index, x.shape[dim] if x.ndim else 1)
    return dim


def _along(dim: int, index_array: Any) -> tuple[Any, ...]:
    return (slice(None),) * dim + (index_array,)


class IndexAdd(Op):
    def forward(self, x: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Number = 1) -> Tensor:
        dim = _check_index_along("index_add", x, dim, index, source)
        out = Copy.apply(x.detach())
        source = source.detach()
        values = (source if alpha == 1 else source * alpha).to(x.dtype).contiguous()
        out.device.kernels.index_add_along(_flat(out)._array, dim, _flat(index)._array,
                                           values._array.reshape(_flat(values).shape))
        self.save_for_backward(index)
        self.dim, self.alpha, self.source_dtype = dim, alpha, source.dtype
        return out

    def backward(self, grad: Tensor) -> Grads:
        (index,) = self.saved_tensors
        grad_source: Tensor | None = None
        if self.needs_input_grad[3]:
            grad_source = _flat(grad).index_select(self.dim, _flat(index)).reshape(_source_shape(grad, index,
                                                                                                  self.dim))
            grad_source = (grad_source if self.alpha == 1 else grad_source * self.alpha).to(self.source_dtype)
        return grad, None, None, grad_source


def _source_shape(x: Tensor, index: Tensor, dim: int) -> Shape:
    return x.shape[:dim] + (index.numel(),) + x.shape[dim + 1:] if x.ndim else index.shape


class IndexCopy(Op):
    def forward(self, x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
        dim = _check_index_along("index_copy", x, dim, index, source)
        out = Copy.apply(x.detach())
        out.device.kernels.index_put(_flat(out)._array, _along(dim, _flat(index)._array),
                                     _flat(source.detach().to(x.dtype))._array)
        self.save_for_backward(index)
        self.dim, self.source_dtype = dim, source.dtype
        return out

    def backward(self, grad: Tensor) -> Grads:
        (index,) = self.saved_tensors
        need_x, need_source = self.needs_input_grad[0], self.needs_input_grad[3]
        grad_x = IndexFill.apply(grad, self.dim, index, 0.0) if need_x else None
        grad_source: Tensor | None = None
        if need_source:
            grad_source = _flat(grad).index_select(self.dim, _flat(index))
            grad_source = grad_source.reshape(_source_shape(grad, index, self.dim)).to(self.source_dtype)
        return grad_x, None, None, grad_source


class IndexFill(Op):
    """index_fill with a number (a 0-d tensor is read as its number, as PyTorch reads it)."""

    def forward(self, x: Tensor, dim: int, index: Tensor, value: Number | Tensor) -> Tensor:
        dim = _check_index_along("index_fill", x, dim, index)
        value = fill_value("index_fill", value, x.dtype)
        out = Copy.apply(x.detach())
        out.device.kernels.index_put(_flat(out)._array, _along(dim, _flat(index)._array), value)
        self.save_for_backward(index)
        self.dim = dim
        return out

    def backward(self, grad: Tensor) -> Grads:
        (index,) = self.saved_tensors
        return IndexFill.apply(grad, self.dim, index, 0.0), None, None, None


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Number = 1) -> Tensor:
    return IndexAdd.apply(input, dim, index, source, alpha=alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, source = autocast_hook.cast("index_copy", input, source)
    return IndexCopy.apply(input, dim, index, source)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Number | Tensor) -> Tensor:
    return IndexFill.apply(input, dim, index, value)


# -- picking: take, take_along_dim, masked_select, nonzero ----------------------------------------


def take(input: Tensor, index: Tensor) -> Tensor:
    """x as a flat vector, read at ``index`` (any shape, negative counting from the end)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"take: expected a tensor, got {describe(input)}")
    _check_index("take", index)
    _check_range("take", index, input.numel())
    return input.reshape(-1)[index]


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """gather with broadcasting: x and indices broadcast outside ``dim``, then x picked along
    it; ``dim`` None picks from x flattened."""
    if not isinstance(input, Tensor):
        raise TypeError(f"take_along_dim: expected a tensor, got {describe(input)}")
    _check_index("take_along_dim", indices)
    if dim is None:
        return Gather.apply(input.reshape(-1), 0, indices.reshape(-1))
    if indices.ndim != input.ndim:
        raise ShapeError(f"take_along_dim: indices {describe(indices)} must have as many dimensions as the input "
                         f"{describe(input)}")
    dim = normalize_dim(dim, input.ndim, "take_along_dim")
    outside = broadcast_shapes(input.shape[:dim] + (1,) + input.shape[dim + 1:],
                               indices.shape[:dim] + (1,) + indices.shape[dim + 1:], op="take_along_dim")
    x_shape = outside[:dim] + (input.shape[dim],) + outside[dim + 1:]
    index_shape = outside[:dim] + (indices.shape[dim],) + outside[dim + 1:]
    input = input if input.shape == x_shape else Expand.apply(input, x_shape)
    indices = indices if indices.shape == index_shape else Expand.apply(indices, index_shape)
    return Gather.apply(input, dim, indices)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of x (broadcast with mask) where mask holds, as a 1-D tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"masked_select: expected a tensor, got {describe(input)}")
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        raise DTypeError(f"masked_select: mask must be a bool tensor, got {describe(mask)}")
    shape = broadcast_shapes(input.shape, mask.shape, op="masked_select")
    input = input if input.shape == shape else Expand.apply(input, shape)
    mask = mask if mask.shape == shape else mask.expand(shape)
    return _flat(input)[_flat(mask)]


@overload
def nonzero(input: Tensor, *, as_tuple: Literal[False] = False) -> Tensor: ...
@overload
def nonzero(input: Tensor, *, as_tuple: Literal[True]) -> tuple[Tensor, ...]: ...
@overload
def nonzero(input: Tensor, *, as_tuple: bool) -> Tensor | tuple[Tensor, ...]: ...


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The indices of the nonzero elements: a (count, ndim) int64 tensor, or with ``as_tuple``
    one 1-D tensor per dimension (a 0-d x counts as 1-D)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero: expected a tensor, got {describe(input)}")
    found = _to_tensor(input.device.kernels.argwhere(input._array), dtypes.int64, input.device)
    if input.ndim == 0:
        found = found.reshape(found.shape[0], 0)
        if as_tuple:
            found = _to_tensor(input.device.kernels.argwhere(_flat(input)._array), dtypes.int64, input.device)
            return (found.reshape(-1),)
    if as_tuple:
        return tuple(found[:, d].contiguous() for d in range(input.ndim))
    return found


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)
