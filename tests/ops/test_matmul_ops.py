"""matmul through the harness: 1-D, 2-D, batched and broadcast batches, on transposed views."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op

import zero
from zero.ops.matmul import MatMul

SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (2, 4, 5)),  # broadcast batch on the left
    ((2, 3, 4), (1, 4, 5)),  # ... and on the right
    ((2, 3, 4), (4, 5)),  # a matrix shared by the batch (a linear layer)
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 2)),  # batch dims broadcast against each other
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_matmul(a_shape, b_shape):
    check_op(lambda a, b: a @ b, np.matmul, [a_shape, b_shape], broadcast=False, rtol=1e-5, atol=1e-5)


def test_matmul_method_and_function():
    check_op(lambda a, b: a.matmul(b), np.matmul, [(3, 4), (4, 2)], broadcast=False)
    check_op(lambda a, b: zero.matmul(a, b), np.matmul, [(3, 4), (4, 2)], broadcast=False)


def test_linear_layer_pattern_x_at_weight_transposed():
    check_op(lambda x, w: x @ w.T, lambda x, w: x @ w.T, [(2, 3, 4), (5, 4)], broadcast=False)
    check_op(lambda x, w: x @ w.mT, lambda x, w: x @ np.swapaxes(w, -1, -2), [(2, 3, 4), (2, 5, 4)],
             broadcast=False)


def test_transposed_views_reach_matmul_without_a_copy():
    a = zero.randn(5, 4)
    b = zero.randn(3, 5)
    at, bt = a.T, b.T  # (4, 5) and (5, 3), both with transposed strides
    assert not at.is_contiguous() and not bt.is_contiguous()
    assert at.data_ptr() == a.data_ptr()
    np.testing.assert_allclose((at @ bt).numpy(), a.numpy().T @ b.numpy().T, rtol=1e-5)


def test_matmul_gradient_of_a_shared_weight_is_summed_over_the_batch():
    x = zero.randn(2, 3, 4, dtype=zero.float64)
    w = zero.randn(4, 5, dtype=zero.float64, requires_grad=True)
    (x @ w).sum().backward()
    expected = np.einsum("bmk,bmn->kn", x.numpy(), np.ones((2, 3, 5)))
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)
    assert w.grad.shape == (4, 5)


def test_matmul_errors_name_the_op_and_shapes():
    with pytest.raises(zero.errors.ShapeError, match=r"matmul.*\[3, 4\].*\[5, 2\]"):
        zero.ones(3, 4) @ zero.ones(5, 2)
    with pytest.raises(zero.errors.DTypeError, match=r"matmul.*float32.*float64"):
        MatMul.apply(zero.ones(3, 4), zero.ones(4, 2, dtype=zero.float64))
    with pytest.raises(zero.errors.ShapeError, match="matmul"):
        zero.ones(2, 3, 4) @ zero.ones(3, 4, 5)
    with pytest.raises(zero.errors.ShapeError, match="matmul.*at least one dimension"):
        zero.tensor(2.0) @ zero.ones(2)
