"""prod and cumprod (ops/products.py): the harness on every layout, gradients where the
input holds no zero, one zero and several zeros (by hand, gradcheck and PyTorch)."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.autograd import gradcheck

SHAPE3 = (2, 3, 4)


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1])
def test_prod_through_the_harness(dim):
    check_op(lambda a: a.prod(dim), lambda a: np.prod(a, axis=dim), [SHAPE3], low=0.5, high=1.5)
    check_op(lambda a: zero.prod(a, dim, keepdim=True) if dim is not None else zero.prod(a),
             lambda a: np.prod(a, axis=dim, keepdims=dim is not None), [SHAPE3], low=-1.5, high=1.5)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cumprod_through_the_harness(dim):
    check_op(lambda a: a.cumprod(dim), lambda a: np.cumprod(a, axis=dim), [SHAPE3], low=-1.5, high=1.5)
    check_op(lambda a: zero.cumprod(a, dim) * a, lambda a: np.cumprod(a, axis=dim) * a, [SHAPE3])


ROWS_WITH_ZEROS = np.array([[2.0, 0.0, 3.0, 4.0],    # one zero
                            [0.0, 5.0, 0.0, 2.0],    # two zeros
                            [1.5, -2.0, 3.0, 0.5],   # none
                            [0.0, 0.0, 0.0, 0.0],    # all
                            [3.0, 2.0, 1.0, 0.0]])   # a zero at the end


def test_prod_gradient_with_zeros_by_hand():
    x = zero.tensor(ROWS_WITH_ZEROS, requires_grad=True)
    x.prod(1).sum().backward()
    assert x.grad.tolist() == [[0, 24, 0, 0], [0, 0, 0, 0], [-3, 2.25, -1.5, -9], [0, 0, 0, 0], [0, 0, 0, 6]]
    x = zero.tensor([2.0, 0.0, 3.0], requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 6.0, 0.0]


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_and_cumprod_gradients_with_zeros(dim):
    x = zero.tensor(ROWS_WITH_ZEROS, dtype=zero.float64, requires_grad=True)
    gradcheck(lambda a: a.prod(dim), [x])
    check_against_torch(lambda lib, a: lib.prod(a) if dim is None else lib.prod(a, dim), [ROWS_WITH_ZEROS])
    if dim is not None:
        gradcheck(lambda a: a.cumprod(dim), [x])
        check_against_torch(lambda lib, a: lib.cumprod(a, dim), [ROWS_WITH_ZEROS])


def test_cumprod_gradient_by_hand():
    x = zero.tensor([2.0, 0.0, 3.0, 0.0, 5.0], requires_grad=True)
    x.cumprod(0).sum().backward()
    assert x.grad.tolist() == [1.0, 8.0, 0.0, 0.0, 0.0]  # dy/dx_1 = 2 (1 + 3 + 0 + 0)... + 2 * 3
    x = zero.tensor([0.0, 2.0, 3.0], requires_grad=True)
    x.cumprod(0).sum().backward()
    assert x.grad.tolist() == [1.0 + 2.0 + 6.0, 0.0, 0.0]


def test_dtypes_empty_and_zero_dim_match_torch():
    ints = np.array([[1, 2], [3, 0]])
    for data in (ints, ints.astype(np.int32), ints.astype(np.uint8), ints.astype(bool), ints.astype(np.float32)):
        check_against_torch(lambda lib, a: (lib.prod(a), lib.prod(a, 1), lib.prod(a, 0, keepdim=True),
                                            lib.cumprod(a, 1), a.cumprod(0)), [data], context=str(data.dtype))
        check_against_torch(lambda lib, a: (lib.prod(a, 1, dtype=lib.float64), lib.cumprod(a, 0, dtype=lib.float32)),
                            [data], context=str(data.dtype))
    check_against_torch(lambda lib, a: (lib.prod(a), lib.prod(a, 0), lib.cumprod(a, 0)), [np.zeros((0, 3))])
    check_against_torch(lambda lib, a: (lib.prod(a), lib.prod(a, 0), lib.cumprod(a, 0), a.cumprod(-1)),
                        [np.array(3.0)])
    check_against_torch(lambda lib, a: (a * 1).cumprod_(1), [ROWS_WITH_ZEROS])


def test_prod_takes_one_dim():
    with pytest.raises(TypeError, match=r"prod: dim must be one int .*, got \(0, 1\)"):
        zero.ones(2, 3).prod((0, 1))
    with pytest.raises(zero.errors.ZeroIndexError, match="cumprod: dim 2 is out of range"):
        zero.ones(2, 3).cumprod(2)
