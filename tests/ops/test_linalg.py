"""Linear algebra (ops/linalg.py): the products, diagonals, trace, tensordot and kron
through the op harness, against PyTorch (values, dtypes, gradients, refusals), the
diagonal as a view, and the dimension checks naming both shapes."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError


def _diag_embed(a, offset=0):
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    index = np.arange(a.shape[-1])
    rows, columns = (index, index + offset) if offset >= 0 else (index - offset, index)
    out[..., rows, columns] = a
    return out


CASES = {  # name: (zero function, NumPy reference, input shapes)
    "mm": (lambda a, b: zero.mm(a, b), np.matmul, [(3, 4), (4, 2)]),
    "mm_method": (lambda a, b: a.mm(b), np.matmul, [(2, 3), (3, 5)]),
    "bmm": (lambda a, b: zero.bmm(a, b), np.matmul, [(2, 3, 4), (2, 4, 3)]),
    "mv": (lambda a, v: zero.mv(a, v), np.matmul, [(3, 4), (4,)]),
    "dot": (lambda a, b: zero.dot(a, b), np.dot, [(5,), (5,)]),
    "vdot": (lambda a, b: a.vdot(b), np.vdot, [(4,), (4,)]),
    "outer": (lambda a, b: zero.outer(a, b), np.outer, [(3,), (4,)]),
    "ger": (lambda a, b: a.ger(b), np.outer, [(2,), (3,)]),
    "addmm": (lambda x, a, b: zero.addmm(x, a, b, beta=0.5, alpha=2), lambda x, a, b: 0.5 * x + 2 * a @ b,
              [(3, 2), (3, 4), (4, 2)]),
    "addmm_broadcast": (lambda x, a, b: x.addmm(a, b), lambda x, a, b: x + a @ b, [(2,), (3, 4), (4, 2)]),
    "addmv": (lambda x, a, v: zero.addmv(x, a, v, alpha=-1), lambda x, a, v: x - a @ v, [(3,), (3, 4), (4,)]),
    "baddbmm": (lambda x, a, b: zero.baddbmm(x, a, b, beta=2), lambda x, a, b: 2 * x + a @ b,
                [(1, 3, 2), (2, 3, 4), (2, 4, 2)]),
    "diagonal": (lambda a: zero.diagonal(a), lambda a: np.diagonal(a, 0, 0, 1), [(3, 4, 2)]),
    "diagonal_offset": (lambda a: a.diagonal(1, 2, 0), lambda a: np.diagonal(a, 1, 2, 0), [(3, 4, 2)]),
    "diagonal_negative": (lambda a: a.diagonal(-1, -1, -2), lambda a: np.diagonal(a, -1, -1, -2), [(2, 4, 3)]),
    "diag_of_matrix": (lambda a: zero.diag(a, 1), lambda a: np.diag(a, 1), [(3, 4)]),
    "diag_of_vector": (lambda a: a.diag(-2), lambda a: np.diag(a, -2), [(3,)]),
    "diag_embed": (lambda a: zero.diag_embed(a), _diag_embed, [(2, 3)]),
    "diag_embed_offset": (lambda a: a.diag_embed(2), lambda a: _diag_embed(a, 2), [(2, 3)]),
    "trace": (lambda a: zero.trace(a), np.trace, [(3, 4)]),
    "tensordot": (lambda a, b: zero.tensordot(a, b), lambda a, b: np.tensordot(a, b), [(2, 3, 4), (3, 4, 2)]),
    "tensordot_lists": (lambda a, b: zero.tensordot(a, b, dims=([1, 0], [0, 2])),
                        lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 2])), [(2, 3, 4), (3, 2, 2)]),
    "tensordot_zero": (lambda a, b: zero.tensordot(a, b, 0), lambda a, b: np.tensordot(a, b, 0), [(2, 3), (3,)]),
    "kron": (lambda a, b: zero.kron(a, b), np.kron, [(2, 3), (3, 2)]),
    "kron_ranks": (lambda a, b: a.kron(b), np.kron, [(2, 2, 3), (3,)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_through_the_harness(name):
    fn, ref, shapes = CASES[name]
    check_op(fn, ref, shapes, broadcast=False)


RNG = np.random.default_rng(0)


def _r(*shape):
    return RNG.standard_normal(shape)


def test_against_torch():
    calls = [
        (lambda lib, a, b: lib.mm(a, b), [_r(3, 4), _r(4, 2)]),
        (lambda lib, a, b: lib.bmm(a, b), [_r(2, 3, 4), _r(2, 4, 3)]),
        (lambda lib, a, b: (lib.mv(a, b), a.mv(b)), [_r(3, 4), _r(4)]),
        (lambda lib, a, b: (lib.dot(a, b), lib.vdot(a, b), lib.outer(a, b), lib.ger(b, a)), [_r(4), _r(4)]),
        (lambda lib, x, a, b: (lib.addmm(x, a, b), lib.addmm(x, a, b, beta=0, alpha=3), x.addmm(a, b, beta=-1)),
         [_r(2), _r(3, 4), _r(4, 2)]),
        (lambda lib, x, a, b: lib.baddbmm(x, a, b, beta=0.5, alpha=2), [_r(3, 1), _r(2, 3, 4), _r(2, 4, 1)]),
        (lambda lib, x, a, b: (lib.addmv(x, a, b, beta=2), x.addmv(a, b)), [_r(3), _r(3, 4), _r(4)]),
        (lambda lib, a: (lib.diagonal(a), lib.diagonal(a, 2, 1, 2), a.diagonal(-3, 0, 2), a.diagonal(9)),
         [_r(3, 4, 5)]),
        (lambda lib, a: (lib.diag(a), lib.diag(a, 1), lib.diag(a, -2), lib.diag(a, 5), lib.trace(a)), [_r(3, 4)]),
        (lambda lib, a: (lib.diag(a), lib.diag(a, 2), a.diag(-1), lib.diag_embed(a), lib.diag_embed(a, -1, 0, 1)),
         [_r(3)]),
        (lambda lib, a: (lib.diag_embed(a, 1, 0, 2), a.diag_embed(-2, 2, 1)), [_r(2, 3)]),
        (lambda lib, a, b: (lib.tensordot(a, b), lib.tensordot(a, b, 1), lib.tensordot(a, b, ([0], [2]))),
         [_r(2, 3, 4), _r(3, 4, 2)]),
        (lambda lib, a, b: (lib.kron(a, b), lib.kron(b, a), a.kron(b)), [_r(2, 3), _r(4)]),
    ]
    for k, (call, inputs) in enumerate(calls):
        check_against_torch(call, inputs, context=f"call {k}")
    ints = np.arange(6).reshape(2, 3)
    check_against_torch(lambda lib, a: (lib.trace(a), lib.diag(a), lib.mm(a, a.T), lib.kron(a, a), lib.dot(a[0], a[1]),
                                        lib.outer(a[0], a[1].float())), [ints])
    check_against_torch(lambda lib, a: lib.trace(a), [ints.astype(np.int32)])  # int64, as PyTorch sums
    check_against_torch(lambda lib, a: (lib.addmm(a, a, a.T), lib.outer(a[0].bool(), a[0])), [ints[:, :2]])
    check_against_torch(lambda lib, x, a, b: x.clone().addmm_(a, b, alpha=2), [_r(3, 2), _r(3, 4), _r(4, 2)],
                        grad=False)
    check_against_torch(lambda lib, x, a, b: (x * 1).baddbmm_(a, b), [_r(2, 3, 2), _r(2, 3, 4), _r(2, 4, 2)])
    check_against_torch(lambda lib, x, a, b: (x * 1).addmv_(a, b, beta=0), [_r(3), _r(3, 4), _r(4)])


def test_beta_zero_ignores_nan_in_the_input():
    x = zero.full((2, 2), float("nan"))
    assert zero.addmm(x, zero.eye(2), zero.eye(2), beta=0).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_diagonal_is_a_view_that_writes_through():
    x = zero.zeros(3, 3)
    d = x.diagonal()
    assert d.data_ptr() == x.data_ptr() and d.stride() == (4,)
    d.fill_(2.0)
    assert x.tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]
    x.diagonal(1).add_(1.0)
    assert x.tolist() == [[2, 1, 0], [0, 2, 1], [0, 0, 2]]
    # In the graph: an in-place op on the diagonal of a non-leaf.
    a = zero.ones(3, 3, requires_grad=True)
    b = a * 2
    b.diagonal().mul_(zero.tensor([1.0, 2.0, 3.0]))
    b.sum().backward()
    assert a.grad.tolist() == [[2, 2, 2], [2, 4, 2], [2, 2, 6]]


def test_dimension_checks_name_both_shapes():
    a, v = zero.ones(2, 3), zero.ones(3)
    with pytest.raises(ShapeError, match=r"mm: mat1 and mat2 shapes cannot be multiplied \(float32\[2, 3\] on cpu "
                                         r"and float32\[4, 5\] on cpu: 3 != 4\)"):
        zero.mm(a, zero.ones(4, 5))
    with pytest.raises(ShapeError, match=r"mm: mat2 must be a matrix \(2-D\), got float32\[3\]"):
        zero.mm(a, v)
    with pytest.raises(ShapeError, match=r"bmm: batch1 must be a 3-D batch of matrices \(3-D\), got float32\[2, 3\]"):
        zero.bmm(a, a)
    with pytest.raises(ShapeError, match=r"bmm: batch2 must be \[2, 3, p\] for batch1 float32\[2, 2, 3\] on cpu, "
                                         r"got float32\[3, 3, 4\]"):
        zero.bmm(zero.ones(2, 2, 3), zero.ones(3, 3, 4))
    with pytest.raises(DTypeError, match=r"mm: both operands must have the same dtype, got float32\[2, 3\] on cpu "
                                         r"and float64\[3, 2\]"):
        zero.mm(a, zero.ones(3, 2, dtype=zero.float64))
    with pytest.raises(ShapeError, match=r"mv: size mismatch, mat float32\[2, 3\] on cpu and vec float32\[4\]"):
        zero.mv(a, zero.ones(4))
    with pytest.raises(ShapeError, match=r"dot: 1-D tensors expected, got float32\[2, 3\] on cpu and"):
        zero.dot(a, a)
    with pytest.raises(ShapeError, match=r"dot: both vectors must have the same number of elements"):
        zero.dot(v, zero.ones(4))
    with pytest.raises(ShapeError, match=r"addmm: input float32\[3\] on cpu does not broadcast to the product's "
                                         r"shape \[2, 2\]|addmm: shapes"):
        zero.addmm(zero.ones(3), a, zero.ones(3, 2))
    with pytest.raises(ShapeError, match=r"diag: takes a 1-D or 2-D tensor, got float32\[2, 2, 2\]"):
        zero.diag(zero.ones(2, 2, 2))
    with pytest.raises(ShapeError, match="diagonal: dim1 and dim2 must be different dimensions, got 1 and -1"):
        a.diagonal(0, 1, -1)
    with pytest.raises(ShapeError, match=r"trace: input must be a matrix \(2-D\), got float32\[2, 2, 2\]"):
        zero.trace(zero.ones(2, 2, 2))
    with pytest.raises(ShapeError, match=r"tensordot: contracted dimensions must match: float32\[2, 3\] on cpu has "
                                         r"3 in dim 1, float32\[2\] on cpu has 2 in dim 0"):
        zero.tensordot(a, zero.ones(2), 1)
