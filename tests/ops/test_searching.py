"""unique, bincount, searchsorted, bucketize, histc, tril_indices, triu_indices
(ops/searching.py): against NumPy and hand values, against PyTorch, and bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError

NAN = math.nan


def test_unique_against_torch():
    values = np.array([[3.0, NAN, 1.0], [NAN, 3.0, 3.0]])
    check_against_torch(lambda lib, a: lib.unique(a, return_inverse=True, return_counts=True), [values], grad=False)
    ints = np.array([[1, 2], [1, 2], [0, 5], [1, 3]])
    for dim in (None, 0, 1, -1):
        check_against_torch(lambda lib, a: lib.unique(a, return_inverse=True, return_counts=True, dim=dim), [ints],
                            context=f"dim {dim}")
        check_against_torch(lambda lib, a: a.unique(sorted=False, dim=dim), [ints])
    check_against_torch(lambda lib, a: (lib.unique(a), lib.unique(a, return_counts=True)), [np.array(5)])
    check_against_torch(lambda lib, a: lib.unique(a, return_inverse=True), [np.array([True, False, True])])


def test_bincount_against_torch():
    x = np.array([0, 2, 2, 5, 0])
    for weights in (None, np.array([1.0, 2.0, 3.0, 0.5, -1.0], dtype=np.float32), np.arange(5.0),
                    np.arange(5), np.arange(5.0).astype(np.float16)):
        inputs = [x] if weights is None else [x, weights]
        check_against_torch(lambda lib, a, *w: (lib.bincount(a, *w), a.bincount(*w, minlength=9)), inputs,
                            grad=False, context=str(None if weights is None else weights.dtype))
    check_against_torch(lambda lib, a: lib.bincount(a), [np.array([], dtype=np.int64)])
    for bad in (np.array([-1, 2]), np.array([[1]]), np.array([1.0])):
        check_against_torch(lambda lib, a: lib.bincount(a), [bad])  # both refuse


def test_searchsorted_and_bucketize_against_torch():
    sequence = np.array([1, 3, 3, 5, 7])
    values = np.array([[3, 6, 9], [0, 1, 7]])
    for kwargs in ({}, dict(right=True), dict(side="right"), dict(side="left"), dict(out_int32=True)):
        check_against_torch(lambda lib, s, v: lib.searchsorted(s, v, **kwargs), [sequence, values])
        check_against_torch(lambda lib, v, b: lib.bucketize(v, b, **{k: x for k, x in kwargs.items() if k != "side"}),
                            [values, sequence])
    check_against_torch(lambda lib, s: (lib.searchsorted(s, 3), lib.searchsorted(s, 4, side="right"),
                                        lib.bucketize(3, s)), [sequence])
    batched = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
    check_against_torch(lambda lib, s, v: lib.searchsorted(s, v, right=True), [batched, np.array([[3, 6], [1, 4]])])
    check_against_torch(lambda lib, s, v: lib.searchsorted(s, v, sorter=lib.tensor([1, 3, 2, 0])),
                        [np.array([7, 1, 5, 3]), np.array([3, 6])])
    check_against_torch(lambda lib, s, v: lib.searchsorted(s, v, right=True, side="left"), [sequence, values])
    check_against_torch(lambda lib, s, v: lib.searchsorted(s, v), [sequence[None], values[0]])  # both refuse


def test_histc_against_torch():
    x = np.array([1.0, 2.0, 1.0, 7.0, -3.0, 3.0], dtype=np.float32)
    for kwargs in ({}, dict(bins=4), dict(bins=4, min=0, max=3), dict(bins=3, min=1, max=1)):
        check_against_torch(lambda lib, a: (lib.histc(a, **kwargs), a.histc(**kwargs)), [x], grad=False)
    check_against_torch(lambda lib, a: lib.histc(a, bins=4), [np.array([2.0, 2.0])], grad=False)
    check_against_torch(lambda lib, a: lib.histc(a), [np.array([1, 2])])  # both refuse integers


def test_triangle_indices_against_numpy_and_torch():
    for row, col, offset in ((3, 4, 0), (3, 4, 1), (4, 3, -2), (3, 2, -1), (0, 3, 0), (2, 2, 5)):
        got = zero.tril_indices(row, col, offset)
        np.testing.assert_array_equal(got.numpy(), np.stack(np.tril_indices(row, offset, col)).reshape(2, -1))
        check_against_torch(lambda lib: (lib.tril_indices(row, col, offset), lib.triu_indices(row, col, offset)), [])
    assert zero.triu_indices(2, 2, dtype=zero.int32).dtype is zero.int32


def test_bad_input_names_the_problem():
    with pytest.raises(DTypeError, match=r"bincount: needs a 1-D tensor of non-negative integers, got float32\[1\]"):
        zero.bincount(zero.ones(1))
    with pytest.raises(ValueError, match="bincount: the values must be non-negative, got a minimum of -1"):
        zero.bincount(zero.tensor([-1, 2]))
    with pytest.raises(ShapeError, match=r"bincount: weights must be a tensor of the input's shape \[2\], got "
                                         r"float32\[3\]"):
        zero.bincount(zero.tensor([1, 2]), zero.ones(3))
    with pytest.raises(ValueError, match="searchsorted: side='left' and right=True ask for opposite sides"):
        zero.searchsorted(zero.tensor([1, 2]), zero.tensor([1]), right=True, side="left")
    with pytest.raises(ShapeError, match=r"searchsorted: the sorted sequence must be 1-D or have the leading dims of "
                                         r"the values: got int64\[1, 2\] on cpu and int64\[3\]"):
        zero.searchsorted(zero.tensor([[1, 2]]), zero.tensor([1, 2, 3]))
    with pytest.raises(DTypeError, match=r"histc: needs a floating-point tensor, got int64\[2\]"):
        zero.histc(zero.tensor([1, 2]))
