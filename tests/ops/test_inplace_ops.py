"""In-place updates: values, refusal in grad mode, the version counter."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero.errors import InPlaceError


def test_inplace_arithmetic_values():
    x = zero.tensor([1.0, 2.0, 3.0])
    assert x.add_(1.0) is x and x.tolist() == [2.0, 3.0, 4.0]
    x.add_(zero.tensor([1.0, 1.0, 1.0]), alpha=-2)
    assert x.tolist() == [0.0, 1.0, 2.0]
    x.mul_(zero.tensor([[2.0]]).view(1))
    assert x.tolist() == [0.0, 2.0, 4.0]
    x.sub_(1.0).div_(2.0)
    assert x.tolist() == [-0.5, 0.5, 1.5]
    x += 1.0
    x *= 2.0
    assert x.tolist() == [1.0, 3.0, 5.0]
    x.clamp_(2.0, 4.0)
    assert x.tolist() == [2.0, 3.0, 4.0]
    x.masked_fill_(zero.tensor([True, False, False]), -1.0)
    assert x.tolist() == [-1.0, 3.0, 4.0]


def test_inplace_broadcasts_the_operand_and_writes_through_views():
    x = zero.zeros(2, 3)
    x.add_(zero.tensor([1.0, 2.0, 3.0]))
    assert x.tolist() == [[1, 2, 3], [1, 2, 3]]
    x.T[0].fill_(9.0)  # a view of column 0
    assert x.tolist() == [[9, 2, 3], [9, 2, 3]]
    x[:, 1:].mul_(10.0)
    assert x.tolist() == [[9, 20, 30], [9, 20, 30]]


def test_copy_zero_fill():
    x = zero.zeros(2, 3)
    x.copy_(zero.tensor([1, 2, 3]))  # int source converted, broadcast over rows
    assert x.tolist() == [[1, 2, 3], [1, 2, 3]] and x.dtype is zero.float32
    x.T.copy_(zero.arange(6.0).view(3, 2))  # into a transposed view
    assert x.tolist() == [[0, 2, 4], [1, 3, 5]]
    assert x.zero_().tolist() == [[0] * 3] * 2
    assert x.fill_(2.5).tolist() == [[2.5] * 3] * 2
    assert x.fill_(zero.tensor(1.0)).tolist() == [[1.0] * 3] * 2
    with pytest.raises(zero.errors.ShapeError, match=r"copy_: shapes \[2, 3\] and \[4\]"):
        x.copy_(zero.ones(4))


def test_normal_and_uniform_fill_with_the_requested_distribution():
    zero.manual_seed(0)
    x = zero.empty(20000)
    x.normal_(2.0, 0.5)
    assert abs(x.mean().item() - 2.0) < 0.02 and abs(x.std().item() - 0.5) < 0.02
    x.uniform_(-3.0, -1.0)
    assert x.min().item() >= -3.0 and x.max().item() < -1.0
    assert abs(x.mean().item() + 2.0) < 0.03
    # Seeded: the same seed draws the same numbers.
    a = zero.empty(5).normal_(generator=zero.Generator(seed=3))
    b = zero.empty(5).normal_(generator=zero.Generator(seed=3))
    assert a.tolist() == b.tolist()
    c = zero.empty(2, 3).T.uniform_()  # into a non-contiguous view
    assert 0.0 <= c.min().item() and c.max().item() < 1.0


def test_setitem():
    x = zero.zeros(3, 4)
    x[1] = 1.0
    x[:, 2] = zero.tensor([5.0, 6.0, 7.0])
    x[0, ::2] = zero.tensor([[8.0, 9.0]])  # a leading 1 is dropped, as in PyTorch
    x[zero.tensor([2, 2])] = -1.0
    x[x > 8.5] = 100.0
    expected = np.zeros((3, 4))
    expected[1] = 1.0
    expected[:, 2] = [5.0, 6.0, 7.0]
    expected[0, ::2] = [8.0, 9.0]
    expected[[2, 2]] = -1.0
    expected[expected > 8.5] = 100.0
    np.testing.assert_array_equal(x.numpy(), expected)
    with pytest.raises(zero.errors.ShapeError, match=r"setitem.*\[2\].*\[4\]"):
        x[0] = zero.ones(2)
    with pytest.raises(zero.errors.ZeroIndexError, match="setitem: index out of range"):
        x[zero.tensor([7])] = 1.0


INPLACE = {
    "add_": lambda t: t.add_(1.0),
    "sub_": lambda t: t.sub_(1.0),
    "mul_": lambda t: t.mul_(2.0),
    "div_": lambda t: t.div_(2.0),
    "copy_": lambda t: t.copy_(zero.zeros(3)),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(1.0),
    "clamp_": lambda t: t.clamp_(0.0, 1.0),
    "normal_": lambda t: t.normal_(),
    "uniform_": lambda t: t.uniform_(),
    "masked_fill_": lambda t: t.masked_fill_(zero.tensor([True, False, True]), 0.0),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "iadd": lambda t: t.__iadd__(1.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_a_leaf_that_requires_grad_is_refused_in_grad_mode(name):
    x = zero.tensor([1.0, 2.0, 3.0], requires_grad=True)
    before = x.tolist()
    message_names = {"iadd": "add_", "zero_": "fill_", "sub_": "add_", "setitem": "fill_"}  # what they use
    kind = "a view of a leaf tensor" if name == "setitem" else "a leaf tensor"  # x[0] = v writes the view x[0]
    with pytest.raises(InPlaceError, match=f"^{message_names.get(name, name)}: {kind} that requires grad"):
        INPLACE[name](x)
    assert x.tolist() == before  # refused before writing anything
    with zero.no_grad():
        INPLACE[name](x)  # what optimizers and initialisers do
    assert x.requires_grad and x.is_leaf
    assert issubclass(InPlaceError, RuntimeError)


def test_inplace_on_a_tensor_in_the_graph_is_recorded_but_not_on_a_view_of_a_leaf():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(3.0)
    assert y.grad_fn.name == "MulBackward" and y.tolist() == [6.0, 12.0]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    with pytest.raises(InPlaceError, match="fill_: a view of a leaf tensor that requires grad"):
        x[0:1].fill_(0.0)


def test_inplace_on_a_detached_alias_is_allowed_and_seen_by_the_leaf():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    x.detach().mul_(3.0)
    assert x.tolist() == [3.0, 6.0] and x.requires_grad


def test_modifying_a_saved_tensor_then_backward_raises():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # Mul saved x
    with zero.no_grad():
        x.add_(1.0)
    with pytest.raises(InPlaceError, match=r"modified by an inplace operation: \[float32\[2\]\], saved by "
                                           r"MulBackward, is at version 1; expected version 0"):
        y.backward()


@pytest.mark.parametrize("modify", [
    lambda w: w.add_(1.0),
    lambda w: w.__setitem__(0, 5.0),
    lambda w: w.view(3).fill_(2.0),  # through a view: the storage's version counts
    lambda w: w.T.copy_(zero.zeros(3)),
    lambda w: w.detach().zero_(),
], ids=["add_", "setitem", "view_fill_", "transposed_copy_", "detached_zero_"])
def test_the_version_counter_sees_every_kind_of_write(modify):
    x = zero.ones(3, requires_grad=True)
    w = zero.tensor([1.0, 2.0, 3.0])
    y = (x * w).sum()
    modify(w)
    with pytest.raises(InPlaceError, match="modified by an inplace operation"):
        y.backward()


def test_writes_to_unsaved_tensors_do_not_break_backward():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    w = zero.tensor([3.0, 4.0])
    y = (x + w).sum()  # Add saves nothing
    w.add_(1.0)
    y.backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_inplace_dtype_and_device_rules():
    i = zero.tensor([1, 2])
    with pytest.raises(zero.errors.DTypeError, match=r"add_.*float32.*int64\[2\]"):
        i.add_(zero.ones(2))
    with pytest.raises(zero.errors.DTypeError, match=r"add_.*1\.5.*int64\[2\]"):
        i.add_(1.5)
    with pytest.raises(zero.errors.DTypeError, match=r"div_.*int64\[2\]"):
        i.div_(2)
    assert i.add_(2).tolist() == [3, 4] and i.mul_(zero.tensor([2], dtype=zero.int32)).tolist() == [6, 8]
    f = zero.ones(2)
    assert f.add_(zero.tensor([1, 2])).tolist() == [2.0, 3.0]  # int into float is fine
    with pytest.raises(zero.errors.ShapeError, match="add_"):
        f.add_(zero.ones(2, 2))  # would need to grow the target
