"""Making tensors: from data, filled, ranged, random; NumPy interop."""
from __future__ import annotations

import numpy as np
import pytest

import zero


def test_tensor_from_nested_lists_infers_shape_and_dtype():
    t = zero.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.dtype is zero.float32 and t.is_contiguous()
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert zero.tensor([[1, 2], [3, 4]]).dtype is zero.int64
    assert zero.tensor([True, False]).dtype is zero.bool
    assert zero.tensor([1, 2.5]).dtype is zero.float32
    assert zero.tensor(3).shape == () and zero.tensor(3).dtype is zero.int64
    assert zero.tensor(2.5).item() == 2.5 and zero.tensor(True).dtype is zero.bool
    assert zero.tensor([]).shape == (0,) and zero.tensor([[], []]).shape == (2, 0)
    assert zero.tensor([zero.tensor(1.0), zero.tensor(2.0)]).tolist() == [1.0, 2.0]


def test_tensor_with_an_explicit_dtype_keeps_full_precision():
    t = zero.tensor([0.1, 1.0 / 3.0], dtype=zero.float64)
    assert t.tolist() == [0.1, 1.0 / 3.0]  # not rounded through float32 on the way
    assert zero.tensor([1.7, -2.2], dtype=zero.int32).tolist() == [1, -2]
    assert zero.tensor([1, 2], dtype=zero.float32).tolist() == [1.0, 2.0]
    assert zero.tensor([0, 2], dtype=zero.bool).tolist() == [False, True]


def test_tensor_from_numpy_copies_and_keeps_the_dtype():
    array = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = zero.tensor(array)
    assert t.dtype is zero.float64 and t.shape == (2, 3)
    array[0, 0] = 99.0
    assert t[0, 0].item() == 0.0  # a copy
    assert zero.tensor(array.T).tolist() == array.T.tolist()  # any strides
    assert zero.tensor(np.array([1, 2], dtype=np.int32)).dtype is zero.int32
    assert zero.tensor(np.float64(1.5)).dtype is zero.float64


def test_tensor_from_a_tensor_copies_without_graph():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = zero.tensor(x)
    assert y.untyped_storage() is not x.untyped_storage() and not y.requires_grad
    assert zero.tensor(x, dtype=zero.float64).dtype is zero.float64


def test_ragged_data_is_refused():
    with pytest.raises(zero.errors.ShapeError, match=r"data\[0\]\[1\] has shape \[2\]"):
        zero.tensor([[[1], [2, 3]]])
    with pytest.raises(TypeError, match="cannot make a tensor from str"):
        zero.tensor(["a"])


def test_filled_tensors():
    assert zero.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert zero.zeros((2, 3)).shape == (2, 3) and zero.zeros([2, 3]).shape == (2, 3)
    assert zero.ones(2, dtype=zero.int32).tolist() == [1, 1]
    assert zero.full((2,), 7).dtype is zero.int64 and zero.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert zero.full((2,), True).dtype is zero.bool
    assert zero.full((1, 2), 3, dtype=zero.float64).dtype is zero.float64
    assert zero.empty(4).shape == (4,) and zero.empty(0).numel() == 0
    assert zero.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    like = zero.ones(2, 3, dtype=zero.float64)
    assert zero.zeros_like(like).dtype is zero.float64 and zero.zeros_like(like).tolist() == [[0.0] * 3] * 2
    assert zero.ones_like(like, dtype=zero.int64).dtype is zero.int64
    assert zero.full_like(like, 4).tolist() == [[4.0] * 3] * 2
    assert zero.empty_like(like).shape == (2, 3)
    assert zero.zeros(2, requires_grad=True).requires_grad
    assert like.new_zeros((3,)).dtype is zero.float64 and like.new_full((1,), 2.0).tolist() == [2.0]


def test_ranges():
    assert zero.arange(5).tolist() == [0, 1, 2, 3, 4] and zero.arange(5).dtype is zero.int64
    assert zero.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert zero.arange(1, 2, 0.25).dtype is zero.float32
    assert zero.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert zero.arange(0, 1, 0.1).shape == (10,)
    assert zero.arange(3, dtype=zero.float64).dtype is zero.float64
    assert zero.arange(2, 2).shape == (0,)
    np.testing.assert_allclose(zero.linspace(-1, 1, 5).numpy(), [-1, -0.5, 0, 0.5, 1])
    with pytest.raises(RuntimeError, match="step must be non-zero"):
        zero.arange(0, 1, 0)


def test_random_tensors_are_seeded():
    zero.manual_seed(123)
    a = zero.randn(3, 4)
    b = zero.rand(5)
    zero.manual_seed(123)
    assert zero.randn(3, 4).tolist() == a.tolist() and zero.rand(5).tolist() == b.tolist()
    assert zero.initial_seed() == 123
    g1, g2 = zero.Generator(seed=7), zero.Generator(seed=7)
    assert zero.randn(4, generator=g1).tolist() == zero.randn(4, generator=g2).tolist()
    state = zero.get_rng_state()
    first = zero.rand(3).tolist()
    zero.set_rng_state(state)
    assert zero.rand(3).tolist() == first


def test_random_distributions():
    zero.manual_seed(0)
    u = zero.rand(10000)
    assert u.min().item() >= 0.0 and u.max().item() < 1.0 and abs(u.mean().item() - 0.5) < 0.02
    n = zero.randn(10000, dtype=zero.float64)
    assert n.dtype is zero.float64 and abs(n.mean().item()) < 0.05 and abs(n.std().item() - 1.0) < 0.05
    r = zero.randint(3, 7, (1000,))
    assert r.dtype is zero.int64 and r.min().item() == 3 and r.max().item() == 6
    assert zero.randint(5, size=(2, 2)).shape == (2, 2)
    assert sorted(zero.randperm(6).tolist()) == list(range(6))
    assert zero.randn_like(zero.ones(2, 3, dtype=zero.float64)).dtype is zero.float64
    assert zero.rand_like(zero.ones(2)).shape == (2,)
    with pytest.raises(RuntimeError, match="high .* must be greater than low"):
        zero.randint(5, 5, (2,))


def test_from_numpy_shares_memory_both_ways():
    array = np.arange(6.0).reshape(2, 3)
    t = zero.from_numpy(array)
    assert t.dtype is zero.float64 and t.data_ptr() == array.ctypes.data
    array[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t[1, 2] = -1.0
    assert array[1, 2] == -1.0


def test_from_numpy_of_strided_arrays():
    array = np.arange(12.0).reshape(3, 4)
    assert zero.from_numpy(array.T).stride() == (1, 4)
    assert zero.from_numpy(array.T).tolist() == array.T.tolist()
    sliced = zero.from_numpy(array[1:, ::2])
    assert sliced.tolist() == array[1:, ::2].tolist() and sliced.stride() == (4, 2)
    sliced[0, 0] = -5.0
    assert array[1, 0] == -5.0
    with pytest.raises(ValueError, match="negative strides"):
        zero.from_numpy(array[::-1])
    assert zero.from_numpy(np.zeros((0, 3))).shape == (0, 3)


def test_numpy_is_zero_copy():
    t = zero.arange(6.0).view(2, 3)
    array = t.numpy()
    assert array.ctypes.data == t.data_ptr() and array.shape == (2, 3)
    array[1, 1] = 42.0
    assert t[1, 1].item() == 42.0
    view = t.T.numpy()
    assert view.strides == (4, 12) and view[1, 1] == 42.0
    assert zero.as_tensor(array).data_ptr() == array.ctypes.data


def test_item_tolist_and_python_conversions():
    assert zero.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert isinstance(zero.tensor([3]).item(), int) and isinstance(zero.tensor(2.5).item(), float)
    assert float(zero.tensor([1.5])) == 1.5 and int(zero.tensor(7)) == 7
    assert [1, 2, 3][zero.tensor(1)] == 2
    assert bool(zero.tensor([True])) and not bool(zero.tensor(0.0))
    with pytest.raises(RuntimeError, match="2 elements cannot be converted to a Python scalar"):
        zero.ones(2).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(zero.ones(2))
    assert np.asarray(zero.ones(2, 2)).shape == (2, 2)
