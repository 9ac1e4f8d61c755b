"""Linear algebra, PyTorch's: mm, bmm, mv, dot, vdot, outer, addmm, addmv, baddbmm, diag,
diagonal, diag_embed, trace, tensordot and kron.

The products are ``MatMul`` (ops/matmul.py, one BLAS call each) after the dimension checks
PyTorch makes -- mm takes matrices only, bmm 3-D batches of one batch size -- with messages
that name both operands; their gradients are MatMul's. The rest:

    diagonal(x, offset, dim1, dim2)   a view: dim1 and dim2 removed, the diagonal appended as
                                      the last dim (stride = stride1 + stride2); backward
                                      writes the gradient into that diagonal of zeros
    diag_embed(x, offset, dim1, dim2) the last dim of x placed on that diagonal of zeros
                                      (diagonal's mirror: each one's backward is the other)
    diag(x, k)                        1-D: the matrix with x on diagonal k; 2-D: diagonal k (a copy)
    trace(a)                          the sum of the diagonal of a matrix
    tensordot(a, b, dims)             the contracted dims moved together, one matrix product
    kron(a, b)                        (a_i b_j) laid out block by block: a's dims interleaved
                                      with b's, one broadcast product, reshaped
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ...autograd.op import Grads, Op
from ...errors import DTypeError, ShapeError, describe
from ...tensors.creation import zeros
from ...tensors.meta import Shape, broadcast_shapes, contiguous_strides, normalize_dim
from ...tensors.tensor import Tensor
from ..arguments import Number
from ..conversion import Copy
from ..matmul import MatMul
from ..reduction import Sum
from ..views import mark_view
from ...autograd import autocast_hook


def _check_tensors(op: str, **operands: object) -> None:
    for name, t in operands.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a tensor, got {describe(t)}")


def _check_ndim(op: str, name: str, t: Tensor, ndim: int, what: str) -> None:
    if t.ndim != ndim:
        raise ShapeError(f"{op}: {name} must be {what} ({ndim}-D), got {describe(t)}")


def _check_same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise DTypeError(f"{op}: both operands must have the same dtype, got {describe(a)} and {describe(b)}; "
                         "convert one with .to(dtype)")


# -- products -------------------------------------------------------------------------------------


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """(n, m) @ (m, p) -> (n, p); matrices only (matmul broadcasts, mm does not)."""
    if autocast_hook.state.active:
        input, mat2 = autocast_hook.cast("mm", input, mat2)
    _check_tensors("mm", mat1=input, mat2=mat2)
    _check_ndim("mm", "mat1", input, 2, "a matrix")
    _check_ndim("mm", "mat2", mat2, 2, "a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise ShapeError(f"mm: mat1 and mat2 shapes cannot be multiplied ({describe(input)} and {describe(mat2)}: "
                         f"{input.shape[1]} != {mat2.shape[0]})")
    _check_same_dtype("mm", input, mat2)
    return MatMul.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """(b, n, m) @ (b, m, p) -> (b, n, p); one batch size, no broadcasting."""
    if autocast_hook.state.active:
        input, mat2 = autocast_hook.cast("bmm", input, mat2)
    _check_tensors("bmm", batch1=input, batch2=mat2)
    _check_ndim("bmm", "batch1", input, 3, "a 3-D batch of matrices")
    _check_ndim("bmm", "batch2", mat2, 3, "a 3-D batch of matrices")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise ShapeError(f"bmm: batch2 must be [{input.shape[0]}, {input.shape[2]}, p] for batch1 "
                         f"{describe(input)}, got {describe(mat2)}")
    _check_same_dtype("bmm", input, mat2)
    return MatMul.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """(n, m) @ (m,) -> (n,)."""
    if autocast_hook.state.active:
        input, vec = autocast_hook.cast("mv", input, vec)
    _check_tensors("mv", mat=input, vec=vec)
    _check_ndim("mv", "mat", input, 2, "a matrix")
    _check_ndim("mv", "vec", vec, 1, "a vector")
    if input.shape[1] != vec.shape[0]:
        raise ShapeError(f"mv: size mismatch, mat {describe(input)} and vec {describe(vec)}")
    _check_same_dtype("mv", input, vec)
    return MatMul.apply(input, vec.unsqueeze(1)).squeeze(1)


def dot(input: Tensor, other: Tensor) -> Tensor:
    """sum_i a_i b_i of two vectors of one size and dtype (a 0-d tensor)."""
    if autocast_hook.state.active:
        input, other = autocast_hook.cast("dot", input, other)
    _check_tensors("dot", input=input, other=other)
    if input.ndim != 1 or other.ndim != 1:
        raise ShapeError(f"dot: 1-D tensors expected, got {describe(input)} and {describe(other)}")
    if input.shape != other.shape:
        raise ShapeError(f"dot: both vectors must have the same number of elements, got {describe(input)} and "
                         f"{describe(other)}")
    _check_same_dtype("dot", input, other)
    return MatMul.apply(input.unsqueeze(0), other.unsqueeze(1)).reshape(())


vdot = dot  # (the conjugate of a real vector is itself)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """a_i b_j: (n,) and (m,) -> (n, m), the dtypes promoted."""
    _check_tensors("outer", input=input, vec2=vec2)
    _check_ndim("outer", "input", input, 1, "a vector")
    _check_ndim("outer", "vec2", vec2, 1, "a vector")
    return input.unsqueeze(1) * vec2


def _scaled_sum(op: str, x: Tensor, product: Tensor, beta: Number, alpha: Number) -> Tensor:
    """beta * x + alpha * product, x broadcast to the product's shape; beta 0 ignores x (its
    NaN and inf too), as PyTorch does."""
    _check_tensors(op, input=x)
    if broadcast_shapes(x.shape, product.shape, op=op) != product.shape:
        raise ShapeError(f"{op}: input {describe(x)} does not broadcast to the product's shape "
                         f"{list(product.shape)}")
    _check_same_dtype(op, x, product)
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled
    return scaled + (x if beta == 1 else x * beta)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """beta x + alpha (mat1 @ mat2)."""
    if autocast_hook.state.active:
        input, mat1, mat2 = autocast_hook.cast("addmm", input, mat1, mat2)
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """beta x + alpha (mat @ vec)."""
    if autocast_hook.state.active:
        input, mat, vec = autocast_hook.cast("addmv", input, mat, vec)
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """beta x + alpha (batch1 @ batch2), batch by batch."""
    if autocast_hook.state.active:
        input, batch1, batch2 = autocast_hook.cast("baddbmm", input, batch1, batch2)
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def tensordot(a: Tensor, b: Tensor,
              dims: int | tuple[int | Sequence[int], int | Sequence[int]] | list[Sequence[int]] = 2) -> Tensor:
    """Contract the last ``dims`` dims of a with the first ``dims`` of b, or the dims listed
    in ``dims = (dims_of_a, dims_of_b)``."""
    if autocast_hook.state.active:
        a, b = autocast_hook.cast("tensordot", a, b)
    _check_tensors("tensordot", a=a, b=b)
    if isinstance(dims, int):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: dims ({dims}) must be in [0, {min(a.ndim, b.ndim)}] for {describe(a)} "
                             f"and {describe(b)}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
        dims_a = [normalize_dim(d, a.ndim, "tensordot") for d in dims_a]
        dims_b = [normalize_dim(d, b.ndim, "tensordot") for d in dims_b]
        if len(dims_a) != len(dims_b):
            raise ShapeError(f"tensordot: as many dims of a as of b must be contracted, got {dims_a} and {dims_b}")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise ShapeError(f"tensordot: contracted dimensions must match: {describe(a)} has {a.shape[da]} in "
                             f"dim {da}, {describe(b)} has {b.shape[db]} in dim {db}")
    _check_same_dtype("tensordot", a, b)
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    inner = math.prod(a.shape[d] for d in dims_a)
    rows = a.permute(free_a + dims_a).reshape(math.prod(a.shape[d] for d in free_a), inner)
    columns = b.permute(dims_b + free_b).reshape(inner, math.prod(b.shape[d] for d in free_b))
    out_shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return MatMul.apply(rows, columns).reshape(out_shape)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: of shape a.shape * b.shape (ranks padded with leading 1s),
    (a kron b)[i*q + k, j*r + l] = a[i, j] b[k, l] for matrices."""
    _check_tensors("kron", input=input, other=other)
    ndim = max(input.ndim, other.ndim)
    shape_a = (1,) * (ndim - input.ndim) + input.shape
    shape_b = (1,) * (ndim - other.ndim) + other.shape
    spread_a = input.reshape(tuple(n for s in shape_a for n in (s, 1)))   # (a0, 1, a1, 1, ...)
    spread_b = other.reshape(tuple(n for s in shape_b for n in (1, s)))   # (1, b0, 1, b1, ...)
    return (spread_a * spread_b).reshape(tuple(x * y for x, y in zip(shape_a, shape_b)))


# -- diagonals ------------------------------------------------------------------------------------


def _diagonal_dims(op: str, ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    d1, d2 = normalize_dim(dim1, ndim, op), normalize_dim(dim2, ndim, op)
    if d1 == d2:
        raise ShapeError(f"{op}: dim1 and dim2 must be different dimensions, got {dim1} and {dim2}")
    return d1, d2


def diagonal_geometry(shape: Shape, strides: Shape, start: int, offset: int, d1: int,
                      d2: int) -> tuple[Shape, Shape, int]:
    """Shape, strides and storage offset of the diagonal view: dims d1, d2 dropped and the
    diagonal appended last (offset > 0: above the main diagonal, in d2's direction)."""
    n1, n2 = shape[d1], shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    if length:
        start += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
    kept = [d for d in range(len(shape)) if d not in (d1, d2)]
    return (tuple(shape[d] for d in kept) + (length,), tuple(strides[d] for d in kept) + (strides[d1] + strides[d2],),
            start)


class Diagonal(Op):
    """The diagonal of dims d1 and d2, as a view."""

    def forward(self, x: Tensor, offset: int, d1: int, d2: int) -> Tensor:
        meta = x._meta
        shape, strides, start = diagonal_geometry(meta.shape, meta.strides, meta.offset, offset, d1, d2)
        self.in_shape, self.in_dtype, self.params = meta.shape, meta.dtype, (offset, d1, d2)
        return mark_view(x._view_as(shape, strides, start), x, (Diagonal, (offset, d1, d2)))

    def backward(self, grad: Tensor) -> Grads:
        grad_in = zeros(self.in_shape, dtype=self.in_dtype, device=grad.device)
        shape, strides, start = diagonal_geometry(self.in_shape, contiguous_strides(self.in_shape), 0, *self.params)
        grad.device.kernels.copy(grad._array, grad_in._view_as(shape, strides, start)._array)
        return (grad_in, None, None, None)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    _check_tensors("diagonal", input=input)
    if input.ndim < 2:
        raise ShapeError(f"diagonal: needs at least 2 dimensions, got {describe(input)}")
    return Diagonal.apply(input, offset, *_diagonal_dims("diagonal", input.ndim, dim1, dim2))


class DiagEmbed(Op):
    """Zeros with the last dim of x on the diagonal ``offset`` of dims d1, d2 of the result."""

    def forward(self, x: Tensor, offset: int, d1: int, d2: int) -> Tensor:
        size = x.shape[-1] + abs(offset)
        others = iter(x.shape[:-1])
        shape = tuple(size if d in (d1, d2) else next(others) for d in range(x.ndim + 1))
        out = zeros(shape, dtype=x.dtype, device=x.device)
        geometry = diagonal_geometry(shape, contiguous_strides(shape), 0, offset, d1, d2)
        x.device.kernels.copy(x._array, out._view_as(*geometry)._array)
        self.params = (offset, d1, d2)
        return out

    def backward(self, grad: Tensor) -> Grads:
        return (Diagonal.apply(grad, *self.params), None, None, None)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    _check_tensors("diag_embed", input=input)
    if input.ndim < 1:
        raise ShapeError(f"diag_embed: needs at least 1 dimension, got {describe(input)}")
    return DiagEmbed.apply(input, offset, *_diagonal_dims("diag_embed", input.ndim + 1, dim1, dim2))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector -> the square matrix with it on diagonal ``diagonal``; a matrix -> that
    diagonal (a copy)."""
    _check_tensors("diag", input=input)
    if input.ndim == 1:
        return DiagEmbed.apply(input, diagonal, 0, 1)
    if input.ndim == 2:
        return Copy.apply(Diagonal.apply(input, diagonal, 0, 1))
    raise ShapeError(f"diag: takes a 1-D or 2-D tensor, got {describe(input)}")


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers summed in int64)."""
    if autocast_hook.state.active:
        input, = autocast_hook.cast("trace", input)
    _check_tensors("trace", input=input)
    _check_ndim("trace", "input", input, 2, "a matrix")
    return Sum.apply(Diagonal.apply(input, 0, 0, 1), None, False, None)  # (Sum itself: not autocast's sum)


ger = outer  # (PyTorch's older name)
