"""The Tensor's four members and their sharing rules; metadata and stride arithmetic."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import zero
from zero.tensors.meta import broadcast_shapes, contiguous_strides, infer_shape, is_contiguous, view_strides


def test_a_python_name_shares_everything():
    a = zero.ones(2, requires_grad=True)
    b = a
    (b * 3).sum().backward()
    assert a.grad is b.grad and a.grad.tolist() == [3.0, 3.0]


def test_a_view_shares_storage_but_has_its_own_metadata_graph_and_grad_slot():
    a = zero.arange(6.0).view(2, 3).requires_grad_()
    v = a.T
    assert v.untyped_storage() is a.untyped_storage()
    assert (v.shape, v.stride()) == ((3, 2), (1, 3)) and (a.shape, a.stride()) == ((2, 3), (3, 1))
    assert v.grad_fn is not None and a.grad_fn is None
    v.retain_grad()
    (v * 2).sum().backward()
    assert v.grad is not a.grad and v.grad.shape == (3, 2) and a.grad.shape == (2, 3)


def test_writes_through_a_view_are_seen_by_the_base():
    base = zero.zeros(3, 4)
    base.T[1:3, 0].fill_(5.0)  # column 0, rows 1..2 of the base
    base[..., -1] = zero.tensor([1.0, 2.0, 3.0])
    expected = np.zeros((3, 4))
    expected[0, 1:3] = 5.0
    expected[:, -1] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(base.numpy(), expected)


def test_metadata_accessors():
    t = zero.zeros(2, 3, 4, dtype=zero.float64)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4) and t.size(-1) == 4
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.element_size() == 8 and t.itemsize == 8 and t.nbytes == 192
    assert t.is_floating_point() and not zero.ones(1, dtype=zero.int32).is_floating_point()
    assert [row.shape for row in t] == [(3, 4), (3, 4)]
    with pytest.raises(TypeError, match="len"):
        len(zero.tensor(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(zero.tensor(1.0))


def test_storage_is_returned_when_the_last_view_goes():
    live = zero.cpu.memory_stats()["live_bytes"]
    t = zero.empty(1000)
    block = t.untyped_storage().handle.base.nbytes  # at least 4000 bytes (the pool may give a larger block)
    assert block >= 4000 and zero.cpu.memory_stats()["live_bytes"] == live + block
    views = [t.T, t[::2], t.view(10, 100)]
    del t
    assert zero.cpu.memory_stats()["live_bytes"] == live + block  # the views keep the storage alive
    del views
    assert zero.cpu.memory_stats()["live_bytes"] == live


def test_data_property_and_detach_in_place():
    x = zero.ones(2, requires_grad=True)
    alias = x.data
    assert alias.untyped_storage() is x.untyped_storage() and not alias.requires_grad
    x.data = zero.tensor([5.0, 6.0])
    assert x.tolist() == [5.0, 6.0] and x.requires_grad
    y = x * 2
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad


def test_repr():
    assert repr(zero.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(zero.tensor([1, 2], dtype=zero.int32)) == "tensor([1, 2], dtype=zero.int32)"
    assert repr(zero.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert "grad_fn=<MulBackward>" in repr(zero.tensor([1.0], requires_grad=True) * 2)


def test_pickle_and_deepcopy_copy_values_and_grad_state():
    x = zero.tensor([[1.0, 2.0]], requires_grad=True)
    (x * 2).sum().backward()
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == x.tolist() and y.requires_grad and y.untyped_storage() is not x.untyped_storage()
    z = copy.deepcopy(x)
    assert z.tolist() == x.tolist() and z.requires_grad and z.grad.tolist() == [[2.0, 2.0]]
    assert z.grad.untyped_storage() is not x.grad.untyped_storage()
    t = zero.arange(6.0).view(2, 3).T
    assert pickle.loads(pickle.dumps(t)).tolist() == t.tolist()


# -- stride arithmetic ------------------------------------------------------------------------


def test_contiguous_strides_are_the_books_init_strides():
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides(()) == ()
    assert contiguous_strides((5,)) == (1,)
    assert contiguous_strides((2, 0, 3)) == (3, 3, 1)


def test_is_contiguous():
    assert is_contiguous((2, 3), (3, 1)) and not is_contiguous((3, 2), (1, 3))
    assert is_contiguous((2, 1, 3), (3, 99, 1))  # size-1 dims may have any stride
    assert is_contiguous((0, 3), (7, 7))  # empty tensors are contiguous
    assert not is_contiguous((2, 3), (0, 1))  # expanded


def test_new_tensors_share_their_metadata_and_each_knows_its_contiguity():
    """New contiguous tensors of one shape, dtype and device share one TensorMeta (it never
    changes), and a meta's contiguity, worked out once, matches is_contiguous for views."""
    a, b = zero.empty(3, 4), zero.ones(3, 4)
    assert a._meta is b._meta and a._meta.contiguous
    assert zero.empty(3, 4, dtype=zero.float64)._meta is not a._meta
    assert zero.empty(np.int64(3), 4).shape == (3, 4) and type(zero.empty(np.int64(3), 4).shape[0]) is int
    t = zero.arange(24.0).reshape(2, 3, 4)
    for view in (t, t.transpose(0, 2), t[:, 1:], t[..., ::2], t[:1], t.view(6, 4), t.transpose(1, 2).reshape(6, 4),
                 zero.ones(3, 1).expand(3, 5)):
        meta = view._meta
        assert meta.contiguous == is_contiguous(meta.shape, meta.strides) == view.is_contiguous()


def test_infer_shape_checks_every_size():
    assert infer_shape([2, 3, 4], 24, "view") == (2, 3, 4)
    assert infer_shape((-1,), 0, "view") == (0,)
    for shape, message in (((-1, -1), "only one dimension can be -1"), ((2, -3), "invalid size"),
                           ((2, 2.0), "sizes must be ints"), ((0, -1), "invalid for a tensor of 0 elements")):
        with pytest.raises((zero.errors.ShapeError, TypeError), match=message):
            infer_shape(shape, 0 if 0 in shape else 4, "view")


def test_view_strides():
    assert view_strides((2, 3, 4), (12, 4, 1), (6, 4)) == (4, 1)
    assert view_strides((2, 3, 4), (12, 4, 1), (24,)) == (1,)
    assert view_strides((3, 2), (1, 3), (6,)) is None  # a transpose cannot be flattened
    assert view_strides((3, 2), (1, 3), (3, 2, 1)) == (1, 3, 3)
    assert view_strides((4, 6), (12, 2), (2, 2, 3, 2)) == (24, 12, 4, 2)  # every other column ...
    assert view_strides((4, 6), (12, 2), (24,)) == (2,)  # ... is every other element
    assert view_strides((4, 3), (6, 1), (12,)) is None  # the first half of each row is not
    assert view_strides((3, 4), (0, 1), (3, 2, 2)) == (0, 2, 1)  # expanded rows split their columns


def test_infer_shape_and_broadcast_shapes():
    assert infer_shape((2, -1), 6, "view") == (2, 3)
    with pytest.raises(zero.errors.ShapeError, match="invalid for a tensor of 6 elements"):
        infer_shape((4, -1), 6, "view")
    assert broadcast_shapes((2, 1, 3), (4, 1)) == (2, 4, 3)
    assert broadcast_shapes((), (3,)) == (3,)
    with pytest.raises(zero.errors.ShapeError, match=r"op: shapes \[2\] and \[3\]"):
        broadcast_shapes((2,), (3,), op="op")
