"""Broadcasting: the shape rule of elementwise ops and the one helper every
backward uses to undo it.

Forward repeats a small operand along broadcast dimensions; backward must sum
the gradient over those same dimensions (the book's ``SumToSize``):

    x: [3]  --broadcast-->  y: [2, 3]        dL/dx_j = sum_i dL/dy_ij
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..tensors.meta import Shape, broadcast_shapes
from ..tensors.tensor import Tensor

if TYPE_CHECKING:
    from ..dtypes import DType
    from .arguments import Operand


def operand_shape(x: Operand) -> Shape:
    """Shape of a tensor operand; a Python scalar broadcasts like a 0-d tensor."""
    return x._meta.shape if isinstance(x, Tensor) else ()


def broadcast_shape_of(op_name: str, *operands: Operand) -> Shape:
    shapes = [operand_shape(x) for x in operands]
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    return broadcast_shapes(*shapes, op=op_name)


def sum_to_shape(grad: Tensor, shape: Shape, dtype: DType | None = None) -> Tensor:
    """Sum ``grad`` down to ``shape`` over the dimensions broadcasting added or stretched,
    and cast it to ``dtype`` (the input's) when given. The single place this rule lives."""
    meta = grad._meta
    dtype = dtype or meta.dtype
    if meta.shape == shape:
        return grad if dtype is meta.dtype else grad.to(dtype)
    lead = len(meta.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(shape) if size == 1 and meta.shape[lead + i] != 1)
    out = Tensor._empty(shape, dtype, meta.device)
    reduced = tuple(s for i, s in enumerate(meta.shape) if i not in axes)
    meta.device.kernels.sum(grad._array, axes, out._array.reshape(reduced))
    return out
