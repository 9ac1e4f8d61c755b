"""Norms (ops/norms.py, zero.linalg): through the harness, against PyTorch for every order
(values and the subgradients at 0 and at ties), and the orders Zero refuses."""
from __future__ import annotations

import math

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError

SHAPE3 = (2, 3, 4)
ORDERS = [2, 1, 3, 0.5, -1, math.inf, -math.inf, 0]
WITH_ZEROS = np.array([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0], [1.0, -3.0, 3.0], [-2.0, 2.0, -1.0]])


@pytest.mark.parametrize("order", [2, 1, 3, 0.5, math.inf])
def test_vector_norm_through_the_harness(order):
    def reference(a, dims=None, keepdims=False):
        magnitude = np.abs(a)
        if order == math.inf:
            return magnitude.max(axis=dims, keepdims=keepdims)
        return (magnitude ** order).sum(axis=dims, keepdims=keepdims) ** (1 / order)
    check_op(lambda a: zero.linalg.vector_norm(a, order), reference, [SHAPE3], low=0.2, high=2.0)
    check_op(lambda a: zero.linalg.vector_norm(a, order, dim=(0, 2), keepdim=True),
             lambda a: reference(a, (0, 2), True), [SHAPE3], low=-2.0, high=-0.2)


def test_matrix_norms_and_dist_through_the_harness():
    check_op(lambda a: zero.linalg.matrix_norm(a), lambda a: np.sqrt((a * a).sum((-2, -1))), [SHAPE3])
    check_op(lambda a: zero.linalg.matrix_norm(a, 1), lambda a: np.abs(a).sum(-2).max(-1), [SHAPE3])
    check_op(lambda a: zero.linalg.matrix_norm(a, -math.inf, dim=(0, 2)),
             lambda a: np.abs(a).sum(2).min(0), [SHAPE3])
    check_op(lambda a, b: zero.dist(a, b), lambda a, b: np.sqrt(((a - b) ** 2).sum()), [SHAPE3, SHAPE3])
    check_op(lambda a: a.norm(dim=1), lambda a: np.sqrt((a * a).sum(1)), [SHAPE3])


@pytest.mark.parametrize("order", ORDERS)
def test_vector_norm_matches_torch_with_zeros_and_ties(order):
    check_against_torch(lambda lib, a: lib.linalg.vector_norm(a, order), [WITH_ZEROS], context=f"ord {order}")
    check_against_torch(lambda lib, a: lib.linalg.vector_norm(a, order, dim=1), [WITH_ZEROS], context=f"ord {order}")
    check_against_torch(lambda lib, a: lib.linalg.vector_norm(a, order, 0, True, dtype=lib.float64),
                        [WITH_ZEROS.astype(np.float32)], context=f"ord {order}")
    check_against_torch(lambda lib, a, b: (lib.dist(a, b, order), a.dist(b, order)),
                        [WITH_ZEROS, WITH_ZEROS[::-1].copy()], context=f"dist {order}",
                        grad=order != 0)  # (PyTorch's backward of dist with p=0 fails)


@pytest.mark.parametrize("order", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm_matches_torch(order):
    batch = np.stack([WITH_ZEROS, -WITH_ZEROS * 2, WITH_ZEROS[::-1]])
    check_against_torch(lambda lib, a: lib.linalg.matrix_norm(a, order), [batch], context=f"ord {order}")
    check_against_torch(lambda lib, a: lib.linalg.matrix_norm(a, order, dim=(0, 2), keepdim=True), [batch])
    check_against_torch(lambda lib, a: lib.linalg.norm(a, order), [WITH_ZEROS], context=f"linalg.norm {order}")


def test_linalg_norm_and_norm_dispatch_like_torch():
    x3 = np.linspace(-2, 2, 24).reshape(2, 3, 4)
    calls = [lambda lib, a: lib.linalg.norm(a), lambda lib, a: lib.linalg.norm(a, dim=1),
             lambda lib, a: lib.linalg.norm(a, 3, dim=(2,)), lambda lib, a: lib.linalg.norm(a, dim=(0, 2)),
             lambda lib, a: lib.linalg.norm(a, -math.inf, dim=(2, 1), keepdim=True),
             lambda lib, a: lib.norm(a), lambda lib, a: a.norm(1), lambda lib, a: lib.norm(a, "fro", (0, 1)),
             lambda lib, a: lib.norm(a, 3, (0, 1, 2)), lambda lib, a: a.norm(p=2, dim=-1, keepdim=True),
             lambda lib, a: lib.norm(a, math.inf, 1), lambda lib, a: lib.linalg.norm(a, 1),  # (the last: both refuse)
             lambda lib, a: lib.norm(a, "fro", (0, 1, 2))]
    for k, call in enumerate(calls):
        check_against_torch(call, [x3], context=f"call {k}")
    check_against_torch(lambda lib, a: lib.linalg.norm(a, 1), [x3[0]])
    check_against_torch(lambda lib, a: lib.linalg.norm(a, math.inf), [x3[0, 0]])


def test_two_norm_gradient_at_zero_is_zero():
    x = zero.zeros(3, requires_grad=True)
    zero.linalg.vector_norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_refused_orders_and_inputs_name_the_problem():
    a = zero.ones(2, 2)
    with pytest.raises(ShapeError, match=r"norm: p='nuc' without dim needs a 2-D input"):
        zero.norm(zero.ones(2, 2, 2), "nuc")
    with pytest.raises(DTypeError, match=r"vector_norm: input must be floating point, got int64\[2\]"):
        zero.linalg.vector_norm(zero.tensor([1, 2]))
    with pytest.raises(ShapeError, match=r"matrix_norm: needs at least 2 dimensions, got float32\[3\]"):
        zero.linalg.matrix_norm(zero.ones(3))
    with pytest.raises(ShapeError, match=r"linalg.norm: without dim, ord=1 needs a 1-D or 2-D input, "
                                         r"got float32\[2, 2, 2\]"):
        zero.linalg.norm(zero.ones(2, 2, 2), 1)
    with pytest.raises(ValueError, match="matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got 3"):
        zero.linalg.matrix_norm(a, 3)
    with pytest.raises(TypeError, match="vector_norm: ord must be a number, got 'fro'"):
        zero.linalg.vector_norm(a, "fro")
