"""How the CUDA matmul reads strided operands: the cuBLAS calls it plans, checked on the host.

``plan_matmul`` decides transpose flags, leading dimensions and batch strides; here each
planned call is carried out by a small NumPy emulation of column-major
``cublasGemmStridedBatchedEx`` on the planned arrays' own memory, and the result must be
``np.matmul``'s. A transposed view must reach cuBLAS as a flag, not a copy.
"""
from __future__ import annotations

import numpy as np
import pytest

from zero.backends.cuda.kernels.linalg import OP_N, OP_T, Gemm, plan_matmul


def emulate(gemm: Gemm) -> None:
    """C = op_a(A) @ op_b(B) for each batch, every matrix column-major at its pointer."""
    item = gemm.c.itemsize

    def column_major(array, rows, cols, ld, stride, writeable=False):
        return np.lib.stride_tricks.as_strided(array, shape=(gemm.batch, rows, cols),
                                               strides=(stride * item, item, ld * item), writeable=writeable)

    a = column_major(gemm.a, *((gemm.m, gemm.k) if gemm.op_a == OP_N else (gemm.k, gemm.m)), gemm.lda, gemm.stride_a)
    b = column_major(gemm.b, *((gemm.k, gemm.n) if gemm.op_b == OP_N else (gemm.n, gemm.k)), gemm.ldb, gemm.stride_b)
    if gemm.op_a == OP_T:
        a = a.transpose(0, 2, 1)
    if gemm.op_b == OP_T:
        b = b.transpose(0, 2, 1)
    for ld, rows in ((gemm.lda, a.shape[1] if gemm.op_a == OP_N else a.shape[2]),
                     (gemm.ldb, b.shape[1] if gemm.op_b == OP_N else b.shape[2]), (gemm.ldc, gemm.m)):
        assert ld >= max(1, rows), "cuBLAS needs a leading dimension of at least the stored rows"
    c = column_major(gemm.c, gemm.m, gemm.n, gemm.ldc, gemm.stride_c, writeable=True)
    c[...] = a @ b


def run(a, b):
    out_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    out = np.full(out_shape, np.nan)
    gemm = plan_matmul(a, b, out)
    emulate(gemm)
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    return gemm


def matrix(rng, *shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("name,make", [
    ("contiguous", lambda r: (matrix(r, 5, 3), matrix(r, 3, 4))),
    ("a transposed", lambda r: (matrix(r, 3, 5).T, matrix(r, 3, 4))),
    ("b transposed", lambda r: (matrix(r, 5, 3), matrix(r, 4, 3).T)),
    ("both transposed", lambda r: (matrix(r, 3, 5).T, matrix(r, 4, 3).T)),
    ("row slices", lambda r: (matrix(r, 10, 3)[::2], matrix(r, 3, 9)[:, :4])),
    ("column step 2 (copied)", lambda r: (matrix(r, 5, 6)[:, ::2], matrix(r, 3, 4))),
    ("vectors", lambda r: (matrix(r, 1, 3), matrix(r, 3, 1))),
    ("inner size 1", lambda r: (matrix(r, 5, 1), matrix(r, 1, 4))),
    ("batched", lambda r: (matrix(r, 2, 5, 3), matrix(r, 2, 3, 4))),
    ("batch broadcast", lambda r: (matrix(r, 1, 5, 3), matrix(r, 6, 3, 4))),
    ("rank broadcast", lambda r: (matrix(r, 5, 3), matrix(r, 2, 3, 3, 4))),
    ("expanded batch", lambda r: (np.broadcast_to(matrix(r, 5, 3), (4, 5, 3)), matrix(r, 4, 3, 4))),
    ("linear layer", lambda r: (matrix(r, 2, 7, 3), matrix(r, 4, 3).T)),
    ("linear layer, strided rows", lambda r: (matrix(r, 7, 2, 3).transpose(1, 0, 2), matrix(r, 3, 4))),
    ("attention q kT", lambda r: (matrix(r, 2, 6, 3, 4).transpose(0, 2, 1, 3),
                                  matrix(r, 2, 6, 3, 4).transpose(0, 2, 3, 1))),
    ("batch of transposes", lambda r: (matrix(r, 3, 3, 5).transpose(0, 2, 1), matrix(r, 3, 4, 3).transpose(0, 2, 1))),
    ("permuted batch dims", lambda r: (matrix(r, 3, 2, 5, 4).transpose(1, 0, 2, 3), matrix(r, 2, 3, 4, 2))),
])
def test_planned_cublas_calls_compute_the_product(name, make):
    run(*make(np.random.default_rng(0)))


def test_transposed_views_are_read_in_place_with_transpose_flags():
    rng = np.random.default_rng(1)
    a, b = matrix(rng, 3, 5).T, matrix(rng, 4, 3).T       # (5, 3) and (3, 4), both transposed views
    gemm = run(a, b)
    # cuBLAS computes Cᵀ = Bᵀ Aᵀ: B's storage comes first, both with the transpose flag
    assert (gemm.op_a, gemm.op_b) == (OP_T, OP_T)
    assert np.shares_memory(gemm.a, b) and np.shares_memory(gemm.b, a), "a transposed view was copied"
    assert (gemm.m, gemm.n, gemm.k, gemm.batch) == (4, 5, 3, 1)


def test_a_linear_layer_is_one_gemm_over_all_rows():
    rng = np.random.default_rng(2)
    x, weight = matrix(rng, 8, 16, 32), matrix(rng, 24, 32)
    gemm = run(x, weight.T)
    assert gemm.batch == 1 and gemm.n == 8 * 16 and gemm.op_a == OP_T and np.shares_memory(gemm.a, weight)


def test_broadcast_batches_use_stride_zero_instead_of_copies():
    rng = np.random.default_rng(3)
    a, b = matrix(rng, 1, 5, 3), matrix(rng, 6, 3, 4)
    gemm = run(a, b)
    assert gemm.batch == 6 and gemm.stride_b == 0 and np.shares_memory(gemm.b, a)
