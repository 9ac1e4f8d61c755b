"""Making sparse COO tensors, and PyTorch's ``torch.sparse`` functions on them:

    sparse_coo_tensor(indices, values, size=None, *, dtype, device, requires_grad, check_invariants, is_coalesced)
    to_sparse(dense, sparse_dim=None)   the nonzero places of a strided tensor (a nonzero block, for a hybrid)
    mm(a, b)  addmm(input, a, b, *, beta, alpha)  hspmm(a, b)  smm(a, b)
                                        products with a sparse operand (sparse @ dense, dense @ sparse)
    sum(input, dim=None, dtype=None)    over every dim (a 0-d dense tensor), or some: sparse while a
                                        sparse dim remains, dense when all are summed
    softmax(input, dim)  log_softmax(input, dim)
                                        over a sparse dim: among each line's specified entries only
                                        (the unspecified ones count as -inf); over a dense dim: the values'
    spdiags(diagonals, offsets, shape)  a sparse matrix with rows of ``diagonals`` on the given diagonals

Every one is a composition of differentiable dense ops on the indices and values
(``ops/extra/sparse_products.py``), so gradients reach the values and the dense operands.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..dtypes import DType, int64
from ..errors import describe
from ..ops.extra import linalg as dense_linalg
from ..ops.extra import sparse_products as products
from ..ops.extra.scatter import index_add, nonzero
from ..ops.extra.scatter_reduce import scatter_reduce
from ..ops.extra.searching import unique
from ..ops.joining import index_select, stack
from ..ops.matmul import matmul as dense_matmul
from ..tensors.creation import arange, full, tensor, zeros
from ..tensors.meta import normalize_dim, normalize_dims
from ..tensors.tensor import Tensor
from .tensor import Layout, SparseTensor, sparse_coo, sparse_mask_of

Number = int | float


def _as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    if isinstance(data, Tensor):
        return data if dtype is None and device is None else data.to(device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def sparse_coo_tensor(indices: Any, values: Any, size: Sequence[int] | None = None, *, dtype: DType | None = None,
                      device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None, is_coalesced: bool | None = None) -> SparseTensor:
    """A sparse COO tensor with ``values[k]`` at place ``indices[:, k]`` (repeats sum). The places
    are always checked against ``size`` (PyTorch checks them when asked: an unchecked place
    outside the size would make every later op read out of bounds)."""
    values = _as_tensor(values, dtype, device)
    indices = _as_tensor(indices, device=values.device)
    if indices.dtype.is_floating_point or indices.dtype is dtypes.bool_:
        raise RuntimeError(f"sparse_coo_tensor: indices must be an integer tensor, got {describe(indices)}")
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    indices = indices.to(int64)
    if values.ndim == 0:
        raise RuntimeError("sparse_coo_tensor: values must have at least one dimension (nnz, *dense_sizes), "
                           "got a 0-d tensor")
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
                           f"nnz from values: {values.shape[0]}")
    dense_sizes = tuple(values.shape[1:])
    host = indices._host_array()
    if nnz and host.min() < 0:
        dim = int((host < 0).any(axis=1).argmax())
        raise RuntimeError(f"found negative index {int(host[dim].min())} for dim {dim}")
    if size is None:
        sparse_sizes = tuple(int(n) + 1 for n in host.max(axis=1)) if nnz else (0,) * sparse_dim
        shape = sparse_sizes + dense_sizes
    else:
        shape = tuple(int(n) for n in size)
        if len(shape) != sparse_dim + len(dense_sizes):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(shape)}, "
                               f"sparse_dim = {sparse_dim}, dense_dim = {len(dense_sizes)}")
        if shape[sparse_dim:] != dense_sizes:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *shape[sparse_dim:]]}, "
                               f"got {list(values.shape)}")
        if nnz:
            for dim, (largest, bound) in enumerate(zip(host.max(axis=1), shape)):
                if largest >= bound:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {dim}, size is {bound} but "
                                       f"found index {int(largest)}")
    if requires_grad:
        values = values.detach().requires_grad_(True)
    elif values.requires_grad and values.grad_fn is None:
        values = values.view(values.shape)   # the sparse tensor is made from the leaf, not the leaf itself
    coalesced = nnz <= 1 if is_coalesced is None else bool(is_coalesced)
    return SparseTensor._make(indices, values, shape, coalesced)


def to_sparse(input: Tensor, sparse_dim: int | None = None, *, layout: Layout | None = None,
              blocksize: Any = None, dense_dim: int | None = None) -> SparseTensor:
    """A strided tensor's nonzero places (over the first ``sparse_dim`` dims; a place whose dense
    block has a nonzero element, for a hybrid tensor), coalesced. Differentiable."""
    if isinstance(input, SparseTensor):
        return input.to_sparse(sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)
    if layout not in (None, sparse_coo) or blocksize is not None:
        raise NotImplementedError(f"to_sparse: Zero has the sparse_coo layout only, got layout={layout}")
    ndim = input.ndim
    if sparse_dim is None:
        sparse_dim = ndim if dense_dim is None else ndim - dense_dim
    if not 0 < sparse_dim <= ndim:
        raise RuntimeError(f"to_sparse: sparse_dim must be in [1, {ndim}] for {describe(input)}, got {sparse_dim}")
    nonzero_places = input != 0
    if sparse_dim < ndim:   # a place is specified when any element of its dense block is nonzero
        nonzero_places = nonzero_places.reshape(tuple(input.shape[:sparse_dim]) + (-1,)).any(-1)
    indices = nonzero(nonzero_places).mT.contiguous()                   # (sparse_dim, nnz)
    return SparseTensor._make(indices, products.gather_values(input, indices), input.shape, True)


def to_dense(input: Tensor, dtype: DType | None = None, *, masked_grad: bool | None = None) -> Tensor:
    """A sparse tensor's dense form; a strided tensor itself (as PyTorch)."""
    if isinstance(input, SparseTensor):
        return input.to_dense(dtype, masked_grad=masked_grad)
    return input if dtype is None else input.to(dtype)


def sparse_mask(input: Tensor, mask: SparseTensor) -> SparseTensor:
    """``input``'s values at ``mask``'s places (a coalesced sparse tensor of mask's places)."""
    from_dense = input.to_dense() if isinstance(input, SparseTensor) else input
    return sparse_mask_of(from_dense, mask)


# -- products ---------------------------------------------------------------------------------------------


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """``zero.mm``, ``zero.spmm``: ``input @ mat2`` with either one sparse (2-D): a dense result;
    both dense: the dense mm."""
    if isinstance(input, SparseTensor):
        return input.matmul(mat2)
    if isinstance(mat2, SparseTensor):
        return mat2.__rmatmul__(input)
    return dense_linalg.mm(input, mat2)


def sparse_mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``zero.sparse.mm(mat1, mat2)`` (its parameters' names): as ``zero.mm``."""
    return mm(mat1, mat2)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``zero.matmul`` that also takes a sparse matrix on either side."""
    if isinstance(input, SparseTensor):
        return input.matmul(other)
    if isinstance(other, SparseTensor):
        return other.__rmatmul__(input)
    return dense_matmul(input, other)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), mat1 sparse or dense (input dense)."""
    if not isinstance(mat1, SparseTensor) and not isinstance(mat2, SparseTensor):
        return dense_linalg.addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    input = to_dense(input)
    product = mm(mat1, mat2)
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled
    return scaled + (input if beta == 1 else input * beta)


def hspmm(mat1: SparseTensor, mat2: Tensor) -> SparseTensor:
    """sparse (n, m) @ dense (m, p) as a hybrid sparse tensor: the rows mat1 has entries in,
    each a dense row of p values (sparse_dim 1, dense_dim 1)."""
    if not isinstance(mat1, SparseTensor):
        raise TypeError(f"hspmm: mat1 must be a sparse tensor, got {describe(mat1)}")
    product = mat1.matmul(mat2)
    rows = unique(mat1._sparse_indices[0]) if mat1._nnz() else zeros((0,), dtype=int64, device=mat2.device)
    return SparseTensor._make(rows.unsqueeze(0), index_select(product, 0, rows), product.shape, True)



def smm(input: SparseTensor, mat: Tensor) -> SparseTensor:
    """sparse (n, m) @ dense (m, p) as a 2-D sparse tensor: hspmm's rows, every column of each
    (zeros included), in order (PyTorch leaves it marked uncoalesced)."""
    rows = hspmm(input, mat)
    row_places, columns = rows._sparse_indices[0], rows.shape[1]
    device = mat.device
    indices = stack([row_places.repeat_interleave(columns), arange(columns, device=device).repeat(len(row_places))])
    return SparseTensor._make(indices, rows._sparse_values.reshape(-1), rows.shape, False)

# -- reductions ---------------------------------------------------------------------------------------------


def sum(input: SparseTensor, dim: int | Sequence[int] | None = None, dtype: DType | None = None) -> Tensor:
    """The sum over ``dim`` (every dim when None: a 0-d dense tensor). Summing some of the sparse
    dims leaves a coalesced sparse tensor; summing all of them, a dense one."""
    if not isinstance(input, SparseTensor):
        raise TypeError(f"sparse.sum: input must be a sparse tensor, got {describe(input)}")
    values = input._sparse_values if dtype is None else input._sparse_values.to(dtype)
    if dim is None:
        return values.sum()
    dims = normalize_dims(dim, input.ndim, "sparse.sum")
    sparse_dim = input.sparse_dim()
    dense_dims = tuple(d - sparse_dim + 1 for d in dims if d >= sparse_dim)
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(sparse_dim) if d not in dims]
    if not kept:
        return values.sum(0)
    size = tuple(input.shape[d] for d in range(input.ndim) if d not in dims)
    indices = input._sparse_indices
    if len(kept) < sparse_dim:
        indices = index_select(indices, 0, tensor(kept, dtype=int64, device=indices.device))
    result = SparseTensor._make(indices, values, size, input._coalesced and len(kept) == sparse_dim)
    return result.coalesce()


def _softmax(op: str, input: SparseTensor, dim: int, dtype: DType | None, log: bool) -> SparseTensor:
    if not isinstance(input, SparseTensor):
        raise TypeError(f"sparse.{op}: input must be a sparse tensor, got {describe(input)}")
    dim = normalize_dim(dim, input.ndim, f"sparse.{op}")
    input = input.coalesce()
    values = input._sparse_values if dtype is None else input._sparse_values.to(dtype)
    sparse_dim = input.sparse_dim()
    if dim >= sparse_dim:       # over a dense dim: each entry's block on its own
        dense_dim = dim - sparse_dim + 1
        values = values.log_softmax(dense_dim) if log else values.softmax(dense_dim)
        return SparseTensor._make(input._sparse_indices, values, input.shape, True)
    # over a sparse dim: the entries that share every other sparse place form one line
    others = [d for d in range(sparse_dim) if d != dim]
    indices = input._sparse_indices
    line_places = index_select(indices, 0, tensor(others, dtype=int64, device=indices.device))
    line_key = products.flat_index(line_places, tuple(input.shape[d] for d in others))
    if input._nnz() == 0:
        return SparseTensor._make(indices, values, input.shape, True)
    lines, line = unique(line_key, return_inverse=True)                    # line[k]: entry k's line
    line_shape = (lines.shape[0],) + tuple(values.shape[1:])
    spread = line.reshape((-1,) + (1,) * (values.ndim - 1)).expand(values.shape)
    largest = scatter_reduce(full(line_shape, -math.inf, dtype=values.dtype, device=values.device), 0,
                             spread, values.detach(), "amax")
    shifted = values - index_select(largest, 0, line)
    exponentials = shifted.exp()
    sums = index_add(zeros(line_shape, dtype=values.dtype, device=values.device), 0, line, exponentials)
    line_sums = index_select(sums, 0, line)
    result = shifted - line_sums.log() if log else exponentials / line_sums
    return SparseTensor._make(indices, result, input.shape, True)


def softmax(input: SparseTensor, dim: int, *, dtype: DType | None = None) -> SparseTensor:
    """Softmax along ``dim`` over the specified entries (the unspecified ones are -inf: they stay
    unspecified, so a line's entries sum to 1)."""
    return _softmax("softmax", input, dim, dtype, log=False)


def log_softmax(input: SparseTensor, dim: int, *, dtype: DType | None = None) -> SparseTensor:
    """log(softmax) along ``dim`` over the specified entries, computed stably."""
    return _softmax("log_softmax", input, dim, dtype, log=True)


def spdiags(diagonals: Tensor, offsets: Tensor, shape: Sequence[int], layout: Layout | None = None) -> SparseTensor:
    """The (m, n) sparse matrix with ``diagonals[k]`` on diagonal ``offsets[k]``: entry (i, i + o)
    takes ``diagonals[k, i + o]`` (the column picks the element, as SciPy's spdiags)."""
    if layout not in (None, sparse_coo):
        raise NotImplementedError(f"spdiags: Zero has the sparse_coo layout only, got layout={layout}")
    if not isinstance(diagonals, Tensor) or not isinstance(offsets, Tensor):
        raise TypeError(f"spdiags: diagonals and offsets must be tensors, got {describe(diagonals)} and "
                        f"{describe(offsets)}")
    if offsets.ndim == 0 and diagonals.ndim == 1:
        diagonals, offsets = diagonals.unsqueeze(0), offsets.unsqueeze(0)
    if diagonals.ndim != 2 or offsets.ndim != 1:
        raise RuntimeError(f"spdiags: expected a 2-D diagonals and 1-D offsets tensor, got {describe(diagonals)} "
                           f"and {describe(offsets)}")
    if offsets.shape[0] != diagonals.shape[0]:
        raise RuntimeError(f"spdiags: number of diagonals ({diagonals.shape[0]}) does not match the number of "
                           f"offsets ({offsets.shape[0]})")
    if len(shape) != 2:
        raise RuntimeError(f"spdiags: output shape must be 2-D, got {tuple(shape)}")
    if offsets.dtype.is_floating_point:
        raise RuntimeError(f"spdiags: offsets must be an integer tensor, got {describe(offsets)}")
    rows_count, columns_count = (int(n) for n in shape)
    offset_list = [int(o) for o in offsets.tolist()]
    if len(set(offset_list)) != len(offset_list):
        raise RuntimeError("spdiags: offset tensor contains duplicate values")
    width = diagonals.shape[1]
    rows: list[int] = []
    columns: list[int] = []
    picks: list[int] = []          # where each entry's value sits in diagonals, flattened
    for k, offset in enumerate(offset_list):
        for row in range(max(0, -offset), min(rows_count, columns_count - offset, width - offset)):
            rows.append(row)
            columns.append(row + offset)
            picks.append(k * width + row + offset)
    device = diagonals.device
    indices = tensor([rows, columns], dtype=int64, device=device).reshape(2, len(rows))
    values = index_select(diagonals.reshape(-1), 0, tensor(picks, dtype=int64, device=device))
    return SparseTensor._make(indices, values, (rows_count, columns_count), len(rows) <= 1)
