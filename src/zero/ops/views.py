"""View ops: new metadata on the same storage, no data copied.

A view shares its input's storage but is a tensor of its own, with its own
graph record and gradient slot (the book's ``ViewWithMeta``). Each view op's
backward maps the gradient back to the input's shape:

    transpose / permute   permute the gradient back
    view / reshape        reshape the gradient back
    expand                sum over the expanded dimensions (sum_to_shape)
    t[basic index]        scatter into zeros of the input's shape

Also here: the copies that views sometimes need (``contiguous``, ``clone``,
dtype casts) and indexing with integer or boolean tensors, which copies.
"""
from __future__ import annotations

from .. import dtypes
from ..autograd.op import Op
from ..errors import DeviceError, DTypeError, ShapeError, ViewError, ZeroIndexError, describe
from ..tensor.meta import contiguous_strides, infer_shape, normalize_dim, numel, view_strides
from ..tensor.tensor import Tensor
from .broadcast import sum_to_shape


class View(Op):
    """Reinterpret the storage with a new shape; only where strides allow it."""

    def forward(self, x: Tensor, shape: tuple):
        meta = x._meta
        shape = infer_shape(shape, numel(meta.shape), "view")
        strides = view_strides(meta.shape, meta.strides, shape)
        if strides is None:
            raise ViewError(f"view: cannot view {describe(x)} with strides {list(meta.strides)} as "
                            f"{list(shape)} without copying; use .reshape(...) (which copies when it "
                            "must) or .contiguous().view(...)")
        self.in_shape = meta.shape
        return x._view_as(shape, strides, meta.offset)

    def backward(self, grad):
        return (reshape(grad, self.in_shape), None)


def reshape(x: Tensor, shape) -> Tensor:
    """A view when the layout allows it, otherwise a contiguous copy reshaped."""
    meta = x._meta
    shape = infer_shape(shape, numel(meta.shape), "reshape")
    if shape == meta.shape:
        return x
    if view_strides(meta.shape, meta.strides, shape) is None:
        x = Copy.apply(x)
    return View.apply(x, shape)


class Permute(Op):
    """Reorder dimensions: sizes and strides are permuted, the data stays put."""

    def forward(self, x: Tensor, dims: tuple):
        meta = x._meta
        ndim = len(meta.shape)
        dims = tuple(normalize_dim(d, ndim, "permute") for d in dims)
        if sorted(dims) != list(range(ndim)):
            raise ShapeError(f"permute: dims {list(dims)} must be a permutation of 0..{ndim - 1} "
                             f"for {describe(x)}")
        self.inverse = tuple(sorted(range(ndim), key=dims.__getitem__))
        return x._view_as(tuple(meta.shape[d] for d in dims), tuple(meta.strides[d] for d in dims),
                          meta.offset)

    def backward(self, grad):
        return (Permute.apply(grad, self.inverse), None)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    ndim = x.ndim
    dims = list(range(ndim))
    d0, d1 = normalize_dim(dim0, ndim, "transpose"), normalize_dim(dim1, ndim, "transpose")
    if ndim < 2 or d0 == d1:
        return x
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(x, tuple(dims))


class Expand(Op):
    """Repeat size-1 dimensions (and add leading ones) by giving them stride 0."""

    def forward(self, x: Tensor, shape: tuple):
        meta = x._meta
        lead = len(shape) - len(meta.shape)
        if lead < 0:
            raise ShapeError(f"expand: target {list(shape)} has fewer dimensions than {describe(x)}")
        new_shape, new_strides = [], []
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
        return x._view_as(tuple(new_shape), tuple(new_strides), meta.offset)

    def backward(self, grad):
        return (sum_to_shape(grad, self.in_shape), None)


def squeeze(x: Tensor, dim=None) -> Tensor:
    shape = x.shape
    if dim is None:
        drop = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        drop = {d for d in (normalize_dim(d, len(shape), "squeeze") for d in dims) if shape and shape[d] == 1}
    if not drop:
        return x
    return View.apply(x, tuple(s for i, s in enumerate(shape) if i not in drop))


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    ndim = x.ndim
    if not -ndim - 1 <= dim <= ndim:
        raise ZeroIndexError(f"unsqueeze: dim {dim} is out of range for {describe(x)} "
                             f"(expected a value in [{-ndim - 1}, {ndim}])")
    dim = dim % (ndim + 1)
    return View.apply(x, x.shape[:dim] + (1,) + x.shape[dim:])


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if x.ndim == 0:
        return reshape(x, (1,))
    start = normalize_dim(start_dim, x.ndim, "flatten")
    end = normalize_dim(end_dim, x.ndim, "flatten")
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape
    return reshape(x, shape[:start] + (numel(shape[start:end + 1]),) + shape[end + 1:])


# -- copies -------------------------------------------------------------------------------------


class Copy(Op):
    """A contiguous copy (``clone``, ``contiguous``, reshape of a non-viewable layout)."""

    def forward(self, x: Tensor):
        out = Tensor._empty(x._meta.shape, x._meta.dtype, x._meta.device)
        x._meta.device.kernels.copy(x._array, out._array)
        return out

    def backward(self, grad):
        return (grad,)


class Cast(Op):
    """Convert to another dtype; the gradient is converted back."""

    def forward(self, x: Tensor, dtype):
        self.in_dtype = x._meta.dtype
        out = Tensor._empty(x._meta.shape, dtype, x._meta.device)
        x._meta.device.kernels.copy(x._array, out._array)
        return out

    def backward(self, grad):
        return (grad.to(self.in_dtype) if self.in_dtype.is_floating_point else None, None)


# -- indexing -------------------------------------------------------------------------------


def _is_basic(item) -> bool:
    return item is None or item is Ellipsis or isinstance(item, (int, slice)) and not isinstance(item, bool)


def _normalize_key(key) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    return key


def basic_index_geometry(shape: tuple, strides: tuple, offset: int, key: tuple):
    """Shape, strides and offset of ``t[key]`` for ints, slices (step > 0), None and ``...``."""
    consuming = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise ZeroIndexError("an index can only have a single ellipsis ('...')")
    if consuming > len(shape):
        raise ZeroIndexError(f"too many indices for a tensor of dimension {len(shape)} "
                             f"({consuming} given)")
    new_shape, new_strides = [], []
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

    def forward(self, x: Tensor, key: tuple):
        meta = x._meta
        shape, strides, offset = basic_index_geometry(meta.shape, meta.strides, meta.offset, key)
        self.in_shape, self.in_dtype, self.key = meta.shape, meta.dtype, key
        return x._view_as(shape, strides, offset)

    def backward(self, grad):
        grad_in = Tensor._empty(self.in_shape, self.in_dtype, grad.device)
        kernels = grad.device.kernels
        kernels.fill(grad_in._array, 0)
        shape, strides, offset = basic_index_geometry(self.in_shape, contiguous_strides(self.in_shape),
                                                      0, self.key)
        kernels.copy(grad._array, grad_in._view_as(shape, strides, offset)._array)
        return (grad_in, None)


class AdvancedIndex(Op):
    """Indexing with integer or boolean tensors (NumPy's rules): a copy. Backward adds the
    gradient back at the indexed places, so repeated indices accumulate."""

    def forward(self, x: Tensor, key: tuple):
        kernels = x._meta.device.kernels
        try:
            result = kernels.index_get(x._array, key)
        except IndexError as e:
            raise ZeroIndexError(f"index out of range for {describe(x)}: {e}") from None
        out = Tensor._empty(tuple(result.shape), x._meta.dtype, x._meta.device)
        kernels.copy(result, out._array)
        self.in_shape, self.in_dtype, self.key = x._meta.shape, x._meta.dtype, key
        return out

    def backward(self, grad):
        grad_in = Tensor._empty(self.in_shape, self.in_dtype, grad.device)
        kernels = grad.device.kernels
        kernels.fill(grad_in._array, 0)
        kernels.index_add(grad_in._array, self.key, grad._array)
        return (grad_in, None)


def _advanced_key(x: Tensor, key: tuple) -> tuple:
    """Turn tensors and lists in an index into device arrays, checking their dtypes."""
    from .. import tensor as make_tensor  # noqa: PLC0415

    converted = []
    for item in key:
        if isinstance(item, (list, tuple)) or type(item).__module__ == "numpy":
            item = make_tensor(item, device=x.device)
        if isinstance(item, Tensor):
            if item.device is not x.device:
                raise DeviceError(f"index: index tensor {describe(item)} for a tensor {describe(x)}")
            if item.dtype.is_floating_point:
                raise DTypeError(f"tensors used as indices must be integer or bool, got {describe(item)}")
            converted.append(item._array)
        else:
            converted.append(item)
    return tuple(converted)


def getitem(x: Tensor, key) -> Tensor:
    key = _normalize_key(key)
    if all(_is_basic(k) for k in key):
        return BasicIndex.apply(x, key)
    return AdvancedIndex.apply(x, _advanced_key(x, key))


def setitem(x: Tensor, key, value) -> None:
    """``x[key] = value``: an in-place write (not recorded in the graph)."""
    x._check_inplace("setitem")
    key = _normalize_key(key)
    kernels = x._meta.device.kernels
    value_array = value._array if isinstance(value, Tensor) else value
    if isinstance(value, Tensor) and value.device is not x.device:
        raise DeviceError(f"setitem: value {describe(value)} for a tensor {describe(x)}")
    if all(_is_basic(k) for k in key):
        meta = x._meta
        target = x._view_as(*basic_index_geometry(meta.shape, meta.strides, meta.offset, key))
        if isinstance(value, Tensor) and value.ndim > target.ndim:
            value_array = value_array.reshape(value.shape[value.ndim - target.ndim:]) \
                if numel(value.shape[:value.ndim - target.ndim]) == 1 else value_array
        try:
            kernels.copy(value_array, target._array)
        except ValueError:
            raise ShapeError(f"setitem: cannot assign a value of shape "
                             f"{list(getattr(value, 'shape', ()))} to a slice of shape {list(target.shape)}") from None
    else:
        try:
            kernels.index_put(x._array, _advanced_key(x, key), value_array)
        except IndexError as e:
            raise ZeroIndexError(f"setitem: index out of range for {describe(x)}: {e}") from None
    x._bump_version()


def to_dtype(x: Tensor, dtype) -> Tensor:
    dtype = dtypes.to_dtype(dtype)
    if dtype is x._meta.dtype:
        return x
    return Cast.apply(x, dtype)
