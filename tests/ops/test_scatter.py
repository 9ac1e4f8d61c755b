"""Scatters, index_add/copy/fill, take, take_along_dim, masked_select, nonzero (ops/scatter.py):
through the harness with fixed indices, against PyTorch (values, dtypes, gradients to the
input and to the written values, in-place forms), and bad indices."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op, on_device_of
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError, ZeroIndexError

INDEX = np.array([[0, 2, 1, 2], [1, 0, 2, 2]])          # (2, 4) into a dim of size 3, with repeats
UNIQUE_ROWS = np.array([[2, 0, 1, 1], [0, 1, 2, 0]])     # no repeat along dim 0 within a column


def _np_scatter(x, dim, index, src, add=False):
    out = x.copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[dim] = index[position]
        if add:
            out[tuple(target)] += src[position]
        else:
            out[tuple(target)] = src[position]
    return out


def test_scatter_family_through_the_harness():
    check_op(lambda x, s: zero.scatter_add(x, 0, on_device_of(x, INDEX), s),
             lambda x, s: _np_scatter(x, 0, INDEX, s, add=True), [(3, 4), (2, 4)], broadcast=False)
    # src larger than the index: only its leading window is read (and gets a gradient)
    check_op(lambda x, s: x.scatter(0, on_device_of(x, UNIQUE_ROWS), s),
             lambda x, s: _np_scatter(x, 0, UNIQUE_ROWS, s), [(3, 4), (2, 5)], broadcast=False)
    check_op(lambda x: zero.scatter(x, 0, on_device_of(x, UNIQUE_ROWS), value=1.5),
             lambda x: _np_scatter(x, 0, UNIQUE_ROWS, np.full(UNIQUE_ROWS.shape, 1.5)), [(3, 4)])


def test_index_family_through_the_harness():
    index = np.array([2, 0, 2])
    def np_index_add(x, s, alpha=1.0):
        out = x.copy()
        np.add.at(out, (slice(None), index), alpha * s)
        return out
    check_op(lambda x, s: x.index_add(1, on_device_of(x, index), s, alpha=2),
             lambda x, s: np_index_add(x, s, 2.0), [(2, 4), (2, 3)], broadcast=False)
    distinct = np.array([3, 0])
    def np_index_copy(x, s):
        out = x.copy()
        out[distinct] = s
        return out
    check_op(lambda x, s: zero.index_copy(x, 0, on_device_of(x, distinct), s), np_index_copy, [(4, 3), (2, 3)],
             broadcast=False)
    def np_index_fill(x):
        out = x.copy()
        out[:, index] = -1.0
        return out
    check_op(lambda x: x.index_fill(1, on_device_of(x, index), -1.0), np_index_fill, [(2, 4)])


def test_picks_through_the_harness():
    flat = np.array([[0, -1], [5, 3]])
    check_op(lambda x: zero.take(x, on_device_of(x, flat)), lambda x: x.reshape(-1)[flat], [(2, 3)])
    along = np.array([[2, 0, 0], [1, 1, 2]])
    check_op(lambda x: x.take_along_dim(on_device_of(x, along), 1), lambda x: np.take_along_axis(x, along, 1),
             [(2, 3)])
    row = np.array([[2, 0, 1, 1]])  # broadcast against the input's rows
    check_op(lambda x: zero.take_along_dim(x, on_device_of(x, row), 1),
             lambda x: np.take_along_axis(x, np.broadcast_to(row, (3, 4)), 1), [(3, 3)])
    mask = np.array([True, False, True, True])
    check_op(lambda x: zero.masked_select(x, on_device_of(x, mask)), lambda x: x[np.broadcast_to(mask, x.shape)],
             [(3, 4)])
    check_op(lambda x, m: x.masked_select(m > 0), lambda x, m: x[m > 0], [(3, 4), (3, 4)], broadcast=False)


RNG = np.random.default_rng(0)


def test_against_torch():
    x, src = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 5))
    check_against_torch(lambda lib, a, s: lib.scatter(a, 0, lib.tensor(UNIQUE_ROWS), s), [x, src],
                        grad=False)  # (PyTorch's backward fails for a src larger than the index)
    calls = [
        (lambda lib, a, s: lib.scatter(a, 0, lib.tensor(UNIQUE_ROWS), s), [x, src[:, :4]]),
        (lambda lib, a, s: a.scatter(1, lib.tensor([[3, 0], [1, 2]]), s), [x, src[:, :2]]),
        (lambda lib, a: lib.scatter(a, 0, lib.tensor(UNIQUE_ROWS), 2.5), [x]),
        (lambda lib, a: a.scatter(1, lib.tensor(INDEX[:, :2]), value=-1.0), [x]),
        (lambda lib, a, s: (lib.scatter_add(a, 0, lib.tensor(INDEX), s), a.scatter(0, lib.tensor(INDEX), s,
                                                                                 reduce="add")), [x, src[:, :4]]),
        (lambda lib, a, s: lib.index_add(a, 1, lib.tensor([3, 3, 0]), s, alpha=-2), [x, RNG.standard_normal((3, 3))]),
        (lambda lib, a, s: lib.index_copy(a, 0, lib.tensor([2, 0]), s), [x, RNG.standard_normal((2, 4))]),
        (lambda lib, a: (lib.index_fill(a, 1, lib.tensor([1, 1, 3]), 7.0), a.index_fill(0, lib.tensor(2), -3)), [x]),
        (lambda lib, a: (lib.take(a, lib.tensor([[0, -1], [11, 4]])), lib.take_along_dim(a, lib.tensor([5, 0, 11]))),
         [x]),
        (lambda lib, a: lib.take_along_dim(a, lib.tensor([[2], [0], [1]]), dim=1), [x]),
        (lambda lib, a: lib.take_along_dim(a, lib.tensor([[2, 0, 1, 1]]), dim=0), [x]),
        (lambda lib, a: (lib.masked_select(a, a > 0), a.masked_select(lib.tensor([True, False, False, True]))), [x]),
        (lambda lib, a: (lib.nonzero(a > 0), a.nonzero(as_tuple=True), lib.argwhere(a < 0)), [x]),
        (lambda lib, a: (lib.nonzero(a), lib.nonzero(a, as_tuple=True)), [np.array(3.0)]),
        (lambda lib, a: (lib.nonzero(a), lib.nonzero(a, as_tuple=True)), [np.zeros((0, 2))]),
        (lambda lib, a, s: a.clone().scatter_(0, lib.tensor(UNIQUE_ROWS), s), [x, src[:, :4]]),
        (lambda lib, a, s: (a * 1).scatter_add_(0, lib.tensor(INDEX), s), [x, src[:, :4]]),
        (lambda lib, a, s: (a * 1).index_add_(0, lib.tensor([1, 1]), s, alpha=3), [x, RNG.standard_normal((2, 4))]),
        (lambda lib, a, s: (a * 1).index_copy_(1, lib.tensor([3, 1]), s), [x, RNG.standard_normal((3, 2))]),
        (lambda lib, a: (a * 1).index_fill_(1, lib.tensor([0]), 0.5), [x]),
    ]
    for k, (call, inputs) in enumerate(calls):
        check_against_torch(call, inputs, context=f"call {k}")
    ints = np.arange(12).reshape(3, 4)
    check_against_torch(lambda lib, a: (lib.scatter(a, 0, lib.tensor(UNIQUE_ROWS), 9),
                                        lib.index_fill(a, 0, lib.tensor([1]), -1),
                                        lib.scatter_add(a, 1, lib.tensor(INDEX[:, :3]), a[:2, :3]),
                                        lib.index_add(a, 0, lib.tensor([0, 2]), a[:2]), lib.nonzero(a % 3)), [ints])


def test_bad_indices_are_refused():
    x = zero.zeros(3, 4)
    with pytest.raises(ZeroIndexError, match=r"scatter: index out of range: values must lie in \[0, 2\], got "
                                             r"\[0, 3\]"):
        x.scatter(0, zero.tensor([[3, 0, 0, 0]]), 1.0)
    with pytest.raises(DTypeError, match=r"scatter_add: index must be an int64 or int32 tensor, got float32\[1, 1\]"):
        x.scatter_add(0, zero.zeros(1, 1), zero.ones(1, 1))
    with pytest.raises(ShapeError, match=r"scatter: index int64\[4\] on cpu must have as many dimensions as the "
                                         r"input float32\[3, 4\]"):
        x.scatter(0, zero.tensor([0, 1, 2, 0]), 1.0)
    with pytest.raises(ShapeError, match=r"index_copy: source float32\[3, 4\] on cpu must have the input's shape "
                                         r"with 2 \(the index's length\) in dim 0, i.e. \[2, 4\]"):
        x.index_copy(0, zero.tensor([0, 1]), zero.ones(3, 4))
    with pytest.raises(ZeroIndexError, match="take: index out of range"):
        zero.take(x, zero.tensor([12]))
    with pytest.raises(DTypeError, match=r"masked_select: mask must be a bool tensor, got float32\[3, 4\]"):
        x.masked_select(x)
    with pytest.raises(TypeError, match="scatter: give either src"):
        x.scatter(0, zero.tensor(UNIQUE_ROWS))
