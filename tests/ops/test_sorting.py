"""sort, argsort, topk, cumsum through the op harness (every layout, float32/float64,
gradcheck) and against PyTorch's documented rules."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op

import zero
from zero.errors import DTypeError, ShapeError

SHAPE = (3, 4, 5)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dim, descending):
    def reference(a):
        return -np.sort(-a, axis=dim) if descending else np.sort(a, axis=dim)
    assert check_op(lambda a: a.sort(dim, descending).values, reference, [SHAPE], broadcast=False)


def test_sort_is_stable_and_puts_nan_last_ascending_first_descending():
    x = zero.tensor([3.0, float("nan"), 1.0, 3.0, -2.0])
    assert x.sort().indices.tolist() == [4, 2, 0, 3, 1]
    assert x.sort(descending=True).indices.tolist() == [1, 0, 3, 2, 4]
    assert zero.argsort(zero.tensor([2, 1, 2, 0]), descending=True).tolist() == [0, 2, 1, 3]
    assert zero.tensor([True, False, True]).sort(descending=True).indices.tolist() == [0, 2, 1]


@pytest.mark.parametrize("k, dim, largest", [(2, -1, True), (1, 0, True), (3, 1, False), (0, -1, True)])
def test_topk(k, dim, largest):
    def reference(a):
        ordered = -np.sort(-a, axis=dim) if largest else np.sort(a, axis=dim)
        return np.take(ordered, np.arange(k), axis=dim)
    assert check_op(lambda a: a.topk(k, dim, largest).values, reference, [SHAPE], broadcast=False)


def test_topk_indices_and_errors():
    values, indices = zero.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]).topk(2)
    assert values.tolist() == [[5.0, 2.0], [7.0, 3.0]] and indices.tolist() == [[1, 2], [0, 2]]
    with pytest.raises(ShapeError, match=r"topk: k \(4\) must be in \[0, 3\]"):
        zero.ones(3).topk(4)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_cumsum(dim):
    assert check_op(lambda a: a.cumsum(dim), lambda a: np.cumsum(a, axis=dim), [SHAPE], broadcast=False)


def test_cumsum_of_integers_is_int64_and_of_a_scalar_is_itself():
    assert zero.tensor([1, 2, 3], dtype=zero.int32).cumsum(0).dtype is zero.int64
    assert zero.cumsum(zero.tensor(2.5), 0).tolist() == 2.5


def test_bitwise_operators_are_bitwise_on_integers_and_logical_on_bools():
    six = zero.tensor([6])
    assert (six & 3).tolist() == [2] and (six | 3).tolist() == [7] and (six ^ 3).tolist() == [5]
    assert (~six).tolist() == [-7] and (3 & six).tolist() == [2]
    t, f = zero.tensor([True, True]), zero.tensor([True, False])
    assert (t & f).tolist() == [True, False] and (~f).tolist() == [False, True] and (t ^ f).tolist() == [False, True]
    assert zero.bitwise_and(six, zero.tensor([4])).tolist() == [4]
    with pytest.raises(DTypeError, match="integer and bool"):
        zero.ones(2) & 1
    with pytest.raises(DTypeError, match="integer and bool"):
        ~zero.ones(2)


@pytest.mark.skipif(not __import__("importlib").util.find_spec("torch"), reason="PyTorch is not installed")
def test_sort_and_topk_match_pytorch_with_ties_and_nans():
    import torch
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (6, 7)).astype(np.float32)
    a[rng.random(a.shape) < 0.1] = np.nan
    for descending in (False, True):
        ours = zero.tensor(a).sort(1, descending)
        theirs = torch.tensor(a).sort(dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    b = rng.standard_normal((5, 9)).astype(np.float32)
    np.testing.assert_array_equal(zero.tensor(b).topk(3, 1).indices.numpy(), torch.tensor(b).topk(3, 1).indices.numpy())
