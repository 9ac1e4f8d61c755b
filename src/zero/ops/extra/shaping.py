"""Reshaping, stacking and splitting, PyTorch's: narrow, tile, movedim, swapaxes, unflatten,
atleast_1d/2d/3d, hstack, vstack, dstack, column_stack, tensor_split, hsplit, vsplit,
dsplit, meshgrid, rot90, fliplr, flipud, cartesian_prod, block_diag.

All are compositions of ops that have their backward (views, cat, flip, pad), so each is
differentiable and runs on every device without a kernel of its own. Views stay views:
narrow, movedim, swapaxes, unflatten (where reshape can), the pieces of the splits and
meshgrid's expanded grids.

    hstack    1-D pieces end to end, else side by side (dim 1)
    vstack    each at least 2-D ((n,) -> (1, n)), stacked along dim 0
    dstack    each at least 3-D ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)), along dim 2
    rot90     k quarter turns from dims[0] towards dims[1]: flip one of them, then swap them
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from ... import dtypes
from ...errors import DTypeError, ShapeError, ValueRangeError, describe, describe_all
from ...tensors.creation import zeros
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..arguments import Sizes
from ..indexing import BasicIndex
from ..joining import cat, stack
from .rearrange import flip, pad, repeat
from ..views import Permute, reshape, transpose


def _check_tensor(op: str, x: object) -> Tensor:
    """``x``, checked to be a tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {describe(x)}")
    return x


def _tensors(op: str, tensors: Iterable[object]) -> list[Tensor]:
    given = list(tensors)
    if not given:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    return [_check_tensor(op, t) for t in given]


def narrow(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """The view x[.., start:start + length, ..] along ``dim`` (start may count from the end)."""
    _check_tensor("narrow", input)
    dim = normalize_dim(dim, input.ndim, "narrow")
    size = input.shape[dim]
    start = int(start)
    if not -size <= start <= size:
        raise ShapeError(f"narrow: start ({start}) is out of range for dimension {dim} of {describe(input)}")
    start %= size if size else 1
    if length < 0 or start + length > size:
        raise ShapeError(f"narrow: start ({start}) + length ({length}) exceeds the size ({size}) of dimension "
                         f"{dim} of {describe(input)}")
    return BasicIndex.apply(input, (slice(None),) * dim + (slice(start, start + length),))


def tile(input: Tensor, dims: Sizes) -> Tensor:
    """repeat, with fewer repeats than dims allowed (the leading dims are then repeated once)."""
    _check_tensor("tile", input)
    dims = tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def movedim(input: Tensor, source: int | Sizes, destination: int | Sizes) -> Tensor:
    """The view of x with dims ``source`` moved to positions ``destination``, the others in order."""
    _check_tensor("movedim", input)
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise ShapeError(f"movedim: {len(source)} source dims for {len(destination)} destinations")
    source = tuple(normalize_dim(d, input.ndim, "movedim") for d in source)
    destination = tuple(normalize_dim(d, input.ndim, "movedim") for d in destination)
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        raise ShapeError(f"movedim: repeated dims in source {list(source)} or destination {list(destination)}")
    rest = iter(d for d in range(input.ndim) if d not in source)
    placed = dict(zip(destination, source))
    return Permute.apply(input, tuple(placed[d] if d in placed else next(rest) for d in range(input.ndim)))


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    _check_tensor("swapaxes", input)
    return transpose(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    _check_tensor("swapdims", input)
    return transpose(input, dim0, dim1)


def unflatten(input: Tensor, dim: int, sizes: Sizes) -> Tensor:
    """Dimension ``dim`` split into ``sizes`` (one of them may be -1)."""
    _check_tensor("unflatten", input)
    dim = normalize_dim(dim, input.ndim, "unflatten")
    sizes = tuple(sizes)
    if not sizes:
        raise ShapeError("unflatten: sizes must not be empty")
    return reshape(input, input.shape[:dim] + sizes + input.shape[dim + 1:])


def _each(one, tensors: tuple):
    """atleast_Nd(x) -> a tensor; atleast_Nd(x, y, ...) or of a list -> a tuple (PyTorch's)."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return one(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tuple(one(t) for t in tensors)


def atleast_1d(*tensors: Tensor):
    return _each(_atleast_1d, tensors)


def atleast_2d(*tensors: Tensor):
    return _each(_atleast_2d, tensors)


def atleast_3d(*tensors: Tensor):
    return _each(_atleast_3d, tensors)


def _atleast_1d(x: Tensor) -> Tensor:
    return reshape(x, (1,)) if x.ndim == 0 else x


def _atleast_2d(x: Tensor) -> Tensor:
    return reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def _atleast_3d(x: Tensor) -> Tensor:
    if x.ndim == 0:
        return reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return reshape(x, (1,) + x.shape + (1,))
    return reshape(x, x.shape + (1,)) if x.ndim == 2 else x


def hstack(tensors: Iterable[Tensor]) -> Tensor:
    tensors = [_atleast_1d(t) for t in _tensors("hstack", tensors)]
    return cat(tensors, dim=0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Iterable[Tensor]) -> Tensor:
    return cat([_atleast_2d(t) for t in _tensors("vstack", tensors)], dim=0)


def dstack(tensors: Iterable[Tensor]) -> Tensor:
    return cat([atleast_3d(t) for t in _tensors("dstack", tensors)], dim=2)


def column_stack(tensors: Iterable[Tensor]) -> Tensor:
    """0-D and 1-D tensors as columns (n, 1), then all side by side."""
    tensors = _tensors("column_stack", tensors)
    return cat([reshape(t, (t.numel(), 1)) if t.ndim < 2 else t for t in tensors], dim=1)


def tensor_split(input: Tensor, indices_or_sections: int | Sequence[int] | Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Views: ``sections`` pieces as equal as can be (the first n % sections one longer), or
    the pieces between the listed split indices (clipped to the dimension)."""
    _check_tensor("tensor_split", input)
    dim = normalize_dim(dim, input.ndim, "tensor_split")
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise ValueRangeError(f"tensor_split: the number of sections must be positive, got {sections}")
        small, extra = divmod(size, sections)
        bounds = [0]
        for k in range(sections):
            bounds.append(bounds[-1] + small + (1 if k < extra else 0))
    else:
        bounds = [0] + [min(max(int(i), 0), size) for i in indices_or_sections] + [size]
    before = (slice(None),) * dim
    return tuple(BasicIndex.apply(input, before + (slice(start, max(start, stop)),))
                 for start, stop in zip(bounds[:-1], bounds[1:]))


def _split_along(op: str, x: Tensor, indices_or_sections: int | Sequence[int] | Tensor, dim: int,
                 min_ndim: int) -> tuple[Tensor, ...]:
    """hsplit, vsplit, dsplit: tensor_split, but a number of sections must divide the size."""
    _check_tensor(op, x)
    if x.ndim < min_ndim:
        raise ShapeError(f"{op}: needs a tensor with at least {min_ndim} dimensions, got {describe(x)}")
    if isinstance(indices_or_sections, int) and (indices_or_sections <= 0 or x.shape[dim] % indices_or_sections):
        raise ShapeError(f"{op}: dimension {dim} of {describe(x)} (size {x.shape[dim]}) is not divisible into "
                         f"{indices_or_sections} equal sections")
    return tensor_split(x, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections: int | Sequence[int] | Tensor) -> tuple[Tensor, ...]:
    return _split_along("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections: int | Sequence[int] | Tensor) -> tuple[Tensor, ...]:
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: int | Sequence[int] | Tensor) -> tuple[Tensor, ...]:
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def meshgrid(*tensors: Tensor | list[Tensor] | tuple[Tensor, ...], indexing: str = "ij") -> tuple[Tensor, ...]:
    """Grids of 0-D or 1-D tensors: with "ij" grid k varies along dim k (shape (n0, n1, ...));
    with "xy" the first two dims are swapped (shape (n1, n0, ...)). Expanded views."""
    given = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    checked = _tensors("meshgrid", given)
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in checked:
        if t.ndim > 1:
            raise ShapeError(f"meshgrid: takes 0-D or 1-D tensors, got {describe_all(checked)}")
        if t.dtype is not checked[0].dtype:
            raise DTypeError(f"meshgrid: all tensors must have one dtype, got {describe_all(checked)}")
    vectors = [atleast_1d(t) for t in checked]
    swap = indexing == "xy" and len(vectors) >= 2
    if swap:
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = tuple(v.shape[0] for v in vectors)
    grids = [reshape(v, tuple(n if d == k else 1 for d, n in enumerate(shape))).expand(shape)
             for k, v in enumerate(vectors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-D tensor, as rows (itertools.product's order)."""
    tensors = tuple(_tensors("cartesian_prod", tensors))
    for t in tensors:
        if t.ndim != 1:
            raise ShapeError(f"cartesian_prod: takes 1-D tensors, got {describe_all(tensors)}")
    if len(tensors) == 1:
        return tensors[0].clone()
    return stack([grid.reshape(-1) for grid in meshgrid(*tensors, indexing="ij")], dim=1)


def block_diag(*tensors: Tensor) -> Tensor:
    """The blocks (0-D, 1-D as a row, or 2-D) on the diagonal of a matrix of zeros, in the
    promoted dtype."""
    for t in tensors:
        _check_tensor("block_diag", t)
        if t.ndim > 2:
            raise ShapeError(f"block_diag: takes tensors of at most 2 dimensions, got {describe_all(tensors)}")
    if not tensors:
        return zeros(1, 0)
    dtype = dtypes.result_type(*(t.reshape(1) if t.ndim == 0 else t for t in tensors))
    blocks = [atleast_2d(t).to(dtype) for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows: list[Tensor] = []
    left = 0
    for b in blocks:
        rows.append(pad(b, (left, width - left - b.shape[1])))  # the block, zeros either side
        left += b.shape[1]
    return cat(rows, dim=0)


def rot90(input: Tensor, k: int = 1, dims: Sizes = (0, 1)) -> Tensor:
    _check_tensor("rot90", input)
    dims = tuple(dims)
    if len(dims) != 2 or input.ndim < 2:
        raise ShapeError(f"rot90: needs two dims of a tensor with at least 2 dimensions, got dims {list(dims)} for "
                         f"{describe(input)}")
    d0, d1 = (normalize_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise ShapeError(f"rot90: the two dims must differ, got {list(dims)}")
    turns = k % 4
    if turns == 1:
        return transpose(flip(input, d1), d0, d1)
    if turns == 2:
        return flip(input, (d0, d1))
    if turns == 3:
        return transpose(flip(input, d0), d0, d1)
    return input.clone()


def fliplr(input: Tensor) -> Tensor:
    _check_tensor("fliplr", input)
    if input.ndim < 2:
        raise ShapeError(f"fliplr: needs at least 2 dimensions, got {describe(input)}")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    _check_tensor("flipud", input)
    if input.ndim < 1:
        raise ShapeError(f"flipud: needs at least 1 dimension, got {describe(input)}")
    return flip(input, 0)


def concatenate(tensors: Iterable[Tensor], axis: int = 0) -> Tensor:
    """cat under NumPy's name and keyword (PyTorch's concatenate takes axis=)."""
    return cat(tensors, dim=axis)


moveaxis, row_stack = movedim, vstack  # (NumPy's names, which PyTorch has too)
