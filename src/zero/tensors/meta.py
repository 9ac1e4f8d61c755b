"""TensorMeta and the stride arithmetic of views (the book's ``TensorMeta``).

Sizes say how long each dimension is, strides how many *elements* to step in
storage to move one place along it, and the offset where element (0, ..., 0)
sits. A row-major [2, 3] matrix has strides [3, 1]; its transpose, on the same
storage, has sizes [3, 2] and strides [1, 3].
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import ShapeError, ZeroIndexError

if TYPE_CHECKING:
    from ..backends.device import Device
    from ..dtypes import DType

Shape = tuple[int, ...]  # sizes (or strides) of each dimension
Sizes = tuple[int, ...] | list[int]   # a shape or a list of dimensions, as one sequence


class TensorMeta:
    """How to read a storage as an n-dimensional array. Never changed after creation."""

    __slots__ = ("shape", "strides", "offset", "dtype", "device", "_contiguous")

    shape: Shape
    strides: Shape
    offset: int
    dtype: DType
    device: Device
    _contiguous: bool | None

    def __init__(self, shape: Shape, strides: Shape, offset: int, dtype: DType, device: Device,
                 contiguous: bool | None = None) -> None:
        """``contiguous``: whether the layout is row-major without gaps, when the maker knows;
        None works it out at the first ask."""
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.dtype = dtype
        self.device = device
        self._contiguous = contiguous

    @property
    def contiguous(self) -> bool:
        """Row-major with no gaps (``is_contiguous``), worked out once per metadata: ops and
        optimizers ask it of the same tensors again and again."""
        known = self._contiguous
        if known is None:
            known = self._contiguous = is_contiguous(self.shape, self.strides)
        return known

    def __repr__(self) -> str:
        return (f"TensorMeta(shape={self.shape}, strides={self.strides}, offset={self.offset}, "
                f"dtype={self.dtype}, device={self.device})")


@functools.lru_cache(maxsize=4096)
def contiguous_strides(shape: Shape) -> Shape:
    """Row-major strides: the book's ``InitStrides``. [2, 3, 4] -> (12, 4, 1)."""
    strides = [0] * len(shape)
    step = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = step
        step *= max(shape[i], 1)
    return tuple(strides)


def numel(shape: Shape) -> int:
    return math.prod(shape)


_contiguous_metas: dict[tuple[Shape, DType, Device], tuple[TensorMeta, int]] = {}   # -> (TensorMeta, nbytes)
MAX_CACHED_METAS = 4096


def contiguous_meta(shape: Shape, dtype: DType, device: Device) -> tuple[TensorMeta, int]:
    """The metadata of a new contiguous tensor of ``shape`` read from the start of its
    storage, and the storage's size in bytes. Metadata never changes, so every such tensor
    of one shape, dtype and device shares one object: most ops' outputs take it from here,
    a dictionary lookup instead of strides computed and an object built."""
    key = (shape, dtype, device)
    found = _contiguous_metas.get(key)
    if found is None:
        if len(_contiguous_metas) >= MAX_CACHED_METAS:
            _contiguous_metas.clear()
        shape = tuple(int(size) for size in shape)   # NumPy integers stop here
        found = _contiguous_metas[key] = (TensorMeta(shape, contiguous_strides(shape), 0, dtype, device, True),
                                          numel(shape) * dtype.itemsize)
    return found


def is_contiguous(shape: Shape, strides: Shape) -> bool:
    """Row-major with no gaps; dimensions of size 1 (and empty tensors) may have any stride."""
    if 0 in shape:
        return True
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != step:
            return False
        step *= size
    return True


def view_strides(shape: Shape, strides: Shape, new_shape: Shape) -> Shape | None:
    """Strides that let ``new_shape`` read the same elements in the same order without a
    copy, or None when the layout cannot express it (then reshape must copy).

    Works chunk by chunk: consecutive old dimensions that are contiguous with each other
    form one chunk, and each chunk can be split into new dimensions freely.
    """
    if numel(shape) == 0 or len(shape) == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1] if strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        # End of a chunk: the dimension before is not contiguous with this one.
        if tensor_d == 0 or (shape[tensor_d - 1] != 1
                             and strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def normalize_dim(dim: int, ndim: int, op: str) -> int:
    """A dimension index in [-ndim, ndim) made non-negative, or a clear error."""
    if not isinstance(dim, int):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    bound = max(ndim, 1)  # a scalar accepts dim 0 and -1, as in PyTorch
    if not -bound <= dim < bound:
        raise ZeroIndexError(f"{op}: dim {dim} is out of range for a tensor with {ndim} dimension(s) "
                             f"(expected a value in [{-bound}, {bound - 1}])")
    return dim % bound


def normalize_dims(dims: int | Iterable[int] | None, ndim: int, op: str) -> tuple[int, ...]:
    """None -> every dimension; an int or a sequence -> sorted, unique, non-negative dims."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    result = sorted({normalize_dim(d, ndim, op) for d in dims})
    if len(result) != len(tuple(dims)):
        raise ShapeError(f"{op}: dim {tuple(dims)} names a dimension twice")
    return tuple(result) if ndim else ()  # a scalar accepts dim 0 or -1 but has no axis to reduce


def infer_shape(shape: Iterable[int], count: int, op: str) -> Shape:
    """Resolve one -1 in a requested shape against ``count`` elements."""
    shape = tuple(shape)
    unknown = None
    known = 1
    for i, size in enumerate(shape):
        if not isinstance(size, int):
            raise TypeError(f"{op}: sizes must be ints, got {shape}")
        if size >= 0:
            known *= size
        elif size != -1:
            raise ShapeError(f"{op}: invalid size in {shape}")
        elif unknown is not None:
            raise ShapeError(f"{op}: only one dimension can be -1, got {shape}")
        else:
            unknown = i
    if unknown is not None:
        if known == 0 or count % known:
            raise ShapeError(f"{op}: shape {shape} is invalid for a tensor of {count} elements")
        return shape[:unknown] + (count // known,) + shape[unknown + 1:]
    if known != count:
        raise ShapeError(f"{op}: shape {shape} is invalid for a tensor of {count} elements")
    return shape


def broadcast_shapes(*shapes: Shape, op: str = "broadcast") -> Shape:
    """NumPy's rule, compared from the last dimension: equal, or one of them is 1 (or missing)."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, size in enumerate(shape):
            current = result[offset + i]
            if size == current or size == 1:
                continue
            if current == 1:
                result[offset + i] = size
            else:
                listed = " and ".join(str(list(s)) for s in shapes)
                raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together "
                                 f"(dimension {offset + i - ndim}: {current} vs {size})")
    return tuple(result)
