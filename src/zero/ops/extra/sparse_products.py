"""The arithmetic of sparse COO tensors, on their two dense parts: ``indices``, an int64
(sparse_dim, nnz) tensor whose column k is the position of entry k among the sparse dims, and
``values``, (nnz, *dense_sizes), entry k's value (a number, or a dense block for a hybrid
tensor). The sparse tensor itself (``zero.sparse``) sits above the ops; these functions see
only its parts, so every one is a composition of differentiable dense ops, and gradients reach
``values`` (and the dense operand) through index_select and index_add:

    flat_index(indices, sizes)        (nnz,) row-major position of each entry among the sparse dims
    scatter_values(indices, values, size)   to_dense: zeros, each entry added at its place
                                      (duplicates sum); backward gathers the gradient at the places
    gather_values(dense, indices)     the dense tensor's values at the places (sparse_mask,
                                      to_sparse); backward scatters them back
    sparse_dense_mm(indices, values, n, dense)
                                      (n, m) sparse @ (m, p) dense -> (n, p):
                                      out[row_k] += values_k * dense[col_k]
                                      = index_add(zeros, rows, values[:, None] * dense[cols])
                                      backward: d dense = index_add(cols, values * d out[rows]),
                                      d values_k = <d out[row_k], dense[col_k]>

The product works entry by entry (nnz x p multiply-adds, one gather, one scatter-add): what a
graph network's ``adj @ x`` needs, on NumPy on the CPU and CuPy on CUDA through the ops' kernels.
"""
from __future__ import annotations

from ...dtypes import int64
from ...tensors.creation import tensor as make_tensor
from ...tensors.creation import zeros
from ...tensors.meta import Shape, contiguous_strides, numel
from ...tensors.tensor import Tensor
from ..joining import index_select, stack
from .scatter import index_add


def flat_index(indices: Tensor, sizes: Shape) -> Tensor:
    """(sparse_dim, nnz) positions in a grid of ``sizes`` -> (nnz,) row-major flat positions."""
    if indices.shape[0] == 0:
        return zeros((indices.shape[1],), dtype=int64, device=indices.device)
    strides = make_tensor(list(contiguous_strides(tuple(sizes))), dtype=int64, device=indices.device)
    return (indices * strides.unsqueeze(1)).sum(0)


def unravel_index(flat: Tensor, sizes: Shape) -> Tensor:
    """flat_index's inverse: (nnz,) flat positions -> (len(sizes), nnz) positions."""
    rows = [(flat // stride) % size for stride, size in zip(contiguous_strides(tuple(sizes)), sizes)]
    if not rows:
        return zeros((0, flat.shape[0]), dtype=int64, device=flat.device)
    return stack(rows)


def scatter_values(indices: Tensor, values: Tensor, size: Shape) -> Tensor:
    """The dense tensor of ``size``: zeros with each entry's value added at its place."""
    sparse_dim = indices.shape[0]
    grid = (numel(size[:sparse_dim]),) + tuple(size[sparse_dim:])   # (positions, *dense_sizes)
    out = zeros(grid, dtype=values.dtype, device=values.device)
    return index_add(out, 0, flat_index(indices, size[:sparse_dim]), values).reshape(tuple(size))


def gather_values(dense: Tensor, indices: Tensor) -> Tensor:
    """(nnz, *dense_sizes): ``dense``'s values at the places ``indices`` names."""
    sparse_dim = indices.shape[0]
    grid = dense.reshape((-1,) + tuple(dense.shape[sparse_dim:]))     # (positions, *dense_sizes)
    return index_select(grid, 0, flat_index(indices, dense.shape[:sparse_dim]))


def sparse_dense_mm(indices: Tensor, values: Tensor, rows: int, dense: Tensor) -> Tensor:
    """(rows, m) sparse (2 sparse dims, nnz entries) @ (m, p) dense -> (rows, p) dense."""
    products = index_select(dense, 0, indices[1]) * values.unsqueeze(1)   # (nnz, p)
    out = zeros((rows, dense.shape[1]), dtype=products.dtype, device=dense.device)
    return index_add(out, 0, indices[0], products)
