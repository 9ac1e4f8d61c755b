"""PyTorch's view copies, views by another name, and questions a tensor answers.

- ``*_copy``: each view op followed by a copy -- the same values, gradient and shape as
  the view, in new (contiguous) memory: ``zero.transpose_copy(x, 0, 1)`` is
  ``x.transpose(0, 1).clone()``. One rule (``copy_of``) builds them from the views.
- views: ``select`` (one index along a dimension), ``split_with_sizes``, the ``unsafe_``
  forms of split and chunk (the same views: Zero has no other kind), ``ravel`` (a view
  when the tensor's layout allows, as ``reshape``).
- ``sum_to_size``: a tensor summed down to a size it broadcasts from.
- questions: ``is_floating_point``, ``is_complex``, ``is_signed``, ``is_nonzero``,
  ``is_same_size``, ``is_conj``, ``is_neg``, ``get_device``, ``typename``, ``can_cast``,
  ``is_storage``, ``x.is_cpu``, ``x.is_meta``, ``x.ndimension()``; and ``conj``,
  ``conj_physical``, ``resolve_conj``, ``resolve_neg``, which -- Zero's tensors all being
  real, never lazily conjugated or negated -- are the tensor itself, as PyTorch's are for a
  real tensor.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..errors import ShapeError, describe
from ..tensors.storage import Storage
from ..tensors.tensor import Tensor
from .arguments import sizes_of
from .extra import linalg, more_math, shaping
from .extra.tensor_types import type_name
from . import conversion, joining, views
from ..tensors.meta import normalize_dim


def _copied(result: Any) -> Any:
    if isinstance(result, Tensor):
        return conversion.clone(result)
    return tuple(conversion.clone(t) for t in result)


def copy_of(name: str, view: Callable[..., Any]) -> Callable[..., Any]:
    """``zero.<name>``: ``view(input, ...)``, copied into new memory (each piece, for a split)."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
        return _copied(view(input, *args, **kwargs))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``{view.__name__}``'s result in new memory (PyTorch's ``torch.{name}``)."
    return function


# -- views ----------------------------------------------------------------------------------------


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim`` (that dimension removed), a view: ``x[:, index]``
    for dim 1."""
    dim = normalize_dim(dim, input.ndim, "select")
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {dim}")
    return input[(slice(None),) * dim + (index,)]


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Views of consecutive pieces of the listed sizes along ``dim`` (they must add up to its size)."""
    return joining.split(input, list(split_sizes), dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``split``'s views (PyTorch's unsafe form only skips its view bookkeeping)."""
    return joining.split(input, split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                            dim: int = 0) -> tuple[Tensor, ...]:
    return joining.split(input, list(split_sizes), dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    return joining.chunk(input, chunks, dim)


def ravel(input: Tensor) -> Tensor:
    """The elements as one dimension: a view when the layout allows, a copy otherwise."""
    return views.reshape(input, (-1,))


def _slice(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> Tensor:
    dim = normalize_dim(dim, input.ndim, "slice_copy")
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _view(input: Tensor, size: Any) -> Tensor:
    return views.view_dtype(input, size) if isinstance(size, DType) else views.view(input, size)


def _expand(input: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    return views.expand(input, tuple(size))


def _squeeze(input: Tensor, dim: Any = None) -> Tensor:
    return views.squeeze(input, dim)


def _permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    return views.permute(input, sizes_of((dims,)))


def _split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    return joining.split(input, split_size, dim)


alias_copy = copy_of("alias_copy", conversion.clone)
diagonal_copy = copy_of("diagonal_copy", linalg.diagonal)
expand_copy = copy_of("expand_copy", _expand)
narrow_copy = copy_of("narrow_copy", shaping.narrow)
permute_copy = copy_of("permute_copy", _permute)
select_copy = copy_of("select_copy", select)
slice_copy = copy_of("slice_copy", _slice)
split_copy = copy_of("split_copy", _split)
split_with_sizes_copy = copy_of("split_with_sizes_copy", split_with_sizes)
squeeze_copy = copy_of("squeeze_copy", _squeeze)
t_copy = copy_of("t_copy", views.t)
transpose_copy = copy_of("transpose_copy", views.transpose)
unbind_copy = copy_of("unbind_copy", joining.unbind)
unfold_copy = copy_of("unfold_copy", more_math.unfold)
unsqueeze_copy = copy_of("unsqueeze_copy", views.unsqueeze)
view_copy = copy_of("view_copy", _view)


def detach_copy(input: Tensor) -> Tensor:
    """``input.detach()`` in new memory: no graph, no gradient."""
    return conversion.clone(input.detach())


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """``input`` summed down to ``size``, which must expand to input's shape (the dimensions
    broadcasting would add or stretch are summed)."""
    target = tuple(sizes_of(size))
    shape = tuple(input.shape)
    lead = len(shape) - len(target)
    if lead < 0 or any(t != s and t != 1 for t, s in zip(target, shape[lead:])):
        raise ShapeError(f"sum_to_size: size {list(target)} is not expandable to size {list(shape)} "
                         f"({describe(input)})")
    if target == shape:
        return input
    stretched = tuple(lead + i for i, t in enumerate(target) if t == 1 and shape[lead + i] != 1)
    out = input.sum(stretched, keepdim=True) if stretched else input
    return out.sum(tuple(range(lead))) if lead else out


# -- questions ------------------------------------------------------------------------------------


def is_floating_point(input: Tensor) -> bool:
    return _tensor("is_floating_point", input).dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    """False: Zero has no complex dtypes."""
    _tensor("is_complex", input)
    return False


def is_signed(input: Tensor) -> bool:
    """Whether the dtype holds negative numbers (not bool, not uint8)."""
    dtype = _tensor("is_signed", input).dtype
    return dtype is not dtypes.bool_ and dtype is not dtypes.uint8


def is_nonzero(input: Tensor) -> bool:
    """The one element's truth; a RuntimeError for none or several, as PyTorch's."""
    n = _tensor("is_nonzero", input).numel()
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                           "is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(_tensor("is_same_size", input).shape) == tuple(_tensor("is_same_size", other).shape)


def is_conj(input: Tensor) -> bool:
    """False: Zero never conjugates lazily (it has no complex tensors)."""
    _tensor("is_conj", input)
    return False


def is_neg(input: Tensor) -> bool:
    """False: Zero never negates lazily."""
    _tensor("is_neg", input)
    return False


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: of a real tensor, the tensor itself (as PyTorch's)."""
    return _tensor("conj", input)


def conj_physical(input: Tensor) -> Tensor:
    return _tensor("conj_physical", input)


def resolve_conj(input: Tensor) -> Tensor:
    return _tensor("resolve_conj", input)


def resolve_neg(input: Tensor) -> Tensor:
    return _tensor("resolve_neg", input)


def get_device(input: Tensor) -> int:
    """The device index: -1 on the CPU, the GPU's number on CUDA."""
    device = _tensor("get_device", input).device
    return -1 if device.type == "cpu" else int(device.index or 0)


def is_cpu(input: Tensor) -> bool:
    """Whether the tensor is on the CPU (``x.is_cpu``)."""
    return _tensor("is_cpu", input).device.type == "cpu"


def is_meta(input: Tensor) -> bool:
    """False: Zero has no meta (data-less) tensors (``x.is_meta``)."""
    _tensor("is_meta", input)
    return False


def ndimension(input: Tensor) -> int:
    """The number of dimensions (``x.dim()``; PyTorch's older name)."""
    return len(_tensor("ndimension", input).shape)


def typename(obj: Any) -> str:
    """'torch.FloatTensor' (PyTorch's names) for a tensor; the type's name otherwise."""
    if isinstance(obj, Tensor):
        return type_name(obj)
    kind = type(obj)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", None) else f"{module}.{kind.__qualname__}"


def can_cast(from_: DType, to: DType) -> bool:
    """Whether PyTorch's casting rule lets a value of ``from_`` be written into ``to``: never
    to a lower kind (float to integer, integer to bool)."""
    return dtypes.to_dtype(from_).category <= dtypes.to_dtype(to).category


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (what ``x.untyped_storage()`` gives)."""
    return isinstance(obj, Storage)


def _tensor(op: str, input: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input
