"""count_nonzero, nansum, nanmean, median, aminmax, std_mean, var_mean (ops/statistics.py):
against NumPy through the harness, against PyTorch (values, dtypes, gradient conventions at
ties and NaN), and bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError

SHAPE3 = (2, 3, 5)
NAN = math.nan
WITH_NAN = np.array([[1.0, NAN, 3.0, 2.0], [NAN, NAN, 1.0, 0.0], [4.0, 2.0, 2.0, 4.0]])
TIES = np.array([[2.0, 1.0, 1.0, 2.0, 3.0], [5.0, 5.0, 5.0, 5.0, 5.0], [0.0, -1.0, 7.0, 7.0, -1.0]])


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_median_along_a_dim_through_the_harness(dim):
    def lower_median(a):
        n = a.shape[dim]
        return np.sort(a, axis=dim).take((n - 1) // 2, axis=dim)
    check_op(lambda a: a.median(dim).values, lower_median, [SHAPE3])
    check_op(lambda a: zero.median(a), lambda a: np.sort(a, axis=None)[(a.size - 1) // 2], [SHAPE3])


def test_nansum_nanmean_std_mean_through_the_harness():
    check_op(lambda a: zero.nansum(a, 1), lambda a: np.nansum(a, 1), [SHAPE3])
    check_op(lambda a: a.nanmean((0, 2), keepdim=True), lambda a: np.nanmean(a, (0, 2), keepdims=True), [SHAPE3])
    check_op(lambda a: zero.std_mean(a, 1), lambda a: (np.std(a, 1, ddof=1), np.mean(a, 1)), [SHAPE3])
    check_op(lambda a: zero.var_mean(a, (0, 1), correction=0), lambda a: (np.var(a, (0, 1)), np.mean(a, (0, 1))),
             [SHAPE3])
    check_op(lambda a: zero.aminmax(a, dim=1), lambda a: (np.min(a, 1), np.max(a, 1)), [SHAPE3])


@pytest.mark.parametrize("data", [WITH_NAN, TIES], ids=["nan", "ties"])
def test_against_torch_with_nan_and_ties(data):
    check_against_torch(lambda lib, a: (lib.median(a), a.median()), [data])
    for dim in (0, 1, -1):
        check_against_torch(lambda lib, a: tuple(lib.median(a, dim)), [data], context=f"median dim {dim}")
        check_against_torch(lambda lib, a: tuple(a.median(dim, keepdim=True)), [data])
        check_against_torch(lambda lib, a: (lib.nansum(a, dim), lib.nanmean(a, dim), lib.count_nonzero(a, dim)),
                            [data], context=f"nan* dim {dim}")
        check_against_torch(lambda lib, a: tuple(lib.aminmax(a, dim=dim)), [data], context=f"aminmax dim {dim}")
    check_against_torch(lambda lib, a: (lib.nansum(a), a.nanmean(), lib.count_nonzero(a, (0, 1)), *lib.aminmax(a)),
                        [data])
    check_against_torch(lambda lib, a: (*lib.std_mean(a, 1), *lib.var_mean(a, 0, True), *lib.var_mean(a)), [data])
    check_against_torch(lambda lib, a: lib.std_mean(a, dim=1, correction=0, keepdim=True), [data])


def test_integer_inputs_match_torch():
    ints = np.array([[3, 0, 2], [1, 1, 7]])
    for data in (ints, ints.astype(np.int32), ints.astype(bool), ints.astype(np.uint8)):
        check_against_torch(lambda lib, a: (lib.count_nonzero(a), lib.nansum(a), lib.nansum(a, 1)), [data])
        check_against_torch(lambda lib, a: (lib.median(a), *lib.median(a, 1)), [data], context=str(data.dtype))
        check_against_torch(lambda lib, a: lib.nanmean(a), [data])      # refused by both
        check_against_torch(lambda lib, a: lib.std_mean(a), [data])     # refused by both
    check_against_torch(lambda lib, a: (*lib.aminmax(a), *lib.aminmax(a, dim=0)), [ints])


def test_median_of_empty_and_zero_dim_match_torch():
    check_against_torch(lambda lib, a: lib.median(a), [np.zeros(0)])
    check_against_torch(lambda lib, a: (lib.median(a), *lib.median(a, 0), *lib.median(a, -1, True)), [np.array(2.5)])
    check_against_torch(lambda lib, a: lib.median(a, 1), [np.zeros((2, 0))])  # both refuse


def test_by_hand():
    x = zero.tensor([3.0, 1.0, 2.0, 2.0, 5.0], requires_grad=True)
    m = x.median()
    m.backward()
    assert m.item() == 2.0 and x.grad.tolist() == [0, 0, 0.5, 0.5, 0]  # equal medians share the gradient
    values, indices = zero.median(zero.tensor([[2, 1, 1, 2], [5, 5, 5, 5]]), 1)
    assert values.tolist() == [1, 5] and indices.tolist() == [2, 1] and values.dtype is zero.int64
    assert zero.count_nonzero(zero.tensor([[1.0, 0.0], [NAN, 0.0]]), dim=0).tolist() == [2, 0]
    result = zero.aminmax(zero.tensor([[1, 5], [7, -2]]))
    assert (result.min.item(), result.max.item()) == (-2, 7)


def test_bad_input_names_the_problem():
    with pytest.raises(DTypeError, match=r"nanmean: input must be floating point, got int64\[2\] on cpu"):
        zero.nanmean(zero.tensor([1, 2]))
    with pytest.raises(DTypeError, match=r"std_mean: input must be floating point, got int64\[2\]"):
        zero.std_mean(zero.tensor([1, 2]))
    with pytest.raises(ShapeError, match=r"median: cannot take the median over an empty dimension 1 of "
                                         r"float32\[2, 0\]"):
        zero.zeros(2, 0).median(1)
    with pytest.raises(ShapeError, match=r"aminmax: cannot reduce an empty dimension of float32\[0\]"):
        zero.aminmax(zero.zeros(0))
