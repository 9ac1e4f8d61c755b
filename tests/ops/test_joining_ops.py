"""cat, stack, split, chunk, unbind, gather, index_select, embedding, tril, triu."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op

import zero
from zero.ops.joining import embedding

GATHER_INDEX = np.array([[0, 3, 3], [2, 2, 0], [1, 0, 1]])


def test_cat():
    check_op(lambda a, b: zero.cat([a, b], dim=1), lambda a, b: np.concatenate([a, b], 1), [(3, 2), (3, 4)],
             broadcast=False)
    check_op(lambda a, b, c: zero.cat((a, b, c)), lambda a, b, c: np.concatenate([a, b, c]),
             [(2, 3), (1, 3), (3, 3)], broadcast=False)
    check_op(lambda a, b: zero.cat([a, b], dim=-1), lambda a, b: np.concatenate([a, b], -1),
             [(2, 2, 3), (2, 2, 2)], broadcast=False)


def test_stack():
    check_op(lambda a, b: zero.stack([a, b]), lambda a, b: np.stack([a, b]), [(3, 4), (3, 4)], broadcast=False)
    check_op(lambda a, b: zero.stack([a, b], dim=-1), lambda a, b: np.stack([a, b], -1), [(3, 4), (3, 4)],
             broadcast=False)
    check_op(lambda a, b, c: zero.stack([a, b, c], dim=1), lambda a, b, c: np.stack([a, b, c], 1),
             [(3, 4), (3, 4), (3, 4)], broadcast=False)


def test_split_chunk_unbind():
    check_op(lambda a: a.split(2, dim=1), lambda a: np.split(a, [2, 4], 1), [(3, 5)])
    check_op(lambda a: zero.split(a, [1, 3], dim=-1), lambda a: np.split(a, [1], -1), [(3, 4)])
    check_op(lambda a: a.split(2), lambda a: np.split(a, [2], 0), [(3, 4)])
    check_op(lambda a: a.chunk(3, 1), lambda a: np.split(a, [2, 4], 1), [(3, 5)])
    check_op(lambda a: zero.chunk(a, 2), lambda a: np.split(a, [2], 0), [(4, 3)])
    check_op(lambda a: a.unbind(1), lambda a: [a[:, i] for i in range(4)], [(3, 4)])
    check_op(lambda a: zero.unbind(a), lambda a: list(a), [(3, 4)])


def test_using_only_some_split_pieces_gives_zero_gradient_elsewhere():
    x = zero.ones(2, 6, requires_grad=True)
    first, _, third = x.split(2, dim=1)
    (first * 2 + third).sum().backward()
    assert x.grad.tolist() == [[2, 2, 0, 0, 1, 1]] * 2


def test_gather():
    check_op(lambda a, i: a.gather(1, i), lambda a, i: np.take_along_axis(a, i, 1), [(3, 4), GATHER_INDEX])
    index = np.array([[2, 0, 1, 1], [0, 0, 2, 1]])
    check_op(lambda a, i: zero.gather(a, 0, i), lambda a, i: np.take_along_axis(a, i, 0), [(3, 4), index])
    # An index smaller than the input outside the gathered dim.
    small = np.array([[1], [0]])
    check_op(lambda a, i: a.gather(-1, i), lambda a, i: np.take_along_axis(a[:2, :], i, -1), [(3, 4), small])


def test_gather_repeated_indices_accumulate_gradient():
    x = zero.zeros(2, 3, requires_grad=True)
    x.gather(1, zero.tensor([[2, 2, 2, 0], [1, 1, 0, 0]])).sum().backward()
    assert x.grad.tolist() == [[1, 0, 3], [2, 2, 0]]


def test_index_select():
    index = np.array([2, 0, 2])
    check_op(lambda a, i: a.index_select(0, i), lambda a, i: a[i], [(3, 4), index])
    check_op(lambda a, i: zero.index_select(a, -1, i), lambda a, i: a[..., i], [(2, 3, 4), index])
    check_op(lambda a, i: a.index_select(1, i), lambda a, i: a[:, i], [(2, 3, 4), np.array(1)])


def test_embedding():
    tokens = np.array([[1, 3, 1], [0, 1, 3]])
    check_op(lambda w, t: embedding(t, w), lambda w, t: w[t], [(4, 5), tokens])


def test_embedding_repeated_indices_accumulate():
    weight = zero.zeros(4, 2, requires_grad=True)
    tokens = zero.tensor([[1, 3, 1], [1, 0, 3]])
    out = embedding(tokens, weight)
    assert out.shape == (2, 3, 2)
    (out * zero.tensor([1.0, 10.0])).sum().backward()
    assert weight.grad.tolist() == [[1, 10], [3, 30], [0, 0], [2, 20]]


@pytest.mark.parametrize("diagonal", [0, 1, -1, 5])
def test_tril_triu(diagonal):
    check_op(lambda a: a.tril(diagonal), lambda a: np.tril(a, diagonal), [(3, 4)])
    check_op(lambda a: zero.triu(a, diagonal), lambda a: np.triu(a, diagonal), [(2, 3, 4)])


def test_joining_errors_name_the_operands():
    with pytest.raises(zero.errors.ShapeError, match=r"cat: sizes must match except in dimension 1.*"
                                                    r"float32\[2, 3\].*float32\[3, 3\]"):
        zero.cat([zero.zeros(2, 3), zero.zeros(3, 3)], dim=1)
    with pytest.raises(zero.errors.ShapeError, match=r"stack.*\[2, 3\].*\[2, 4\]"):
        zero.stack([zero.zeros(2, 3), zero.zeros(2, 4)])
    with pytest.raises(zero.errors.ShapeError, match=r"split: sections \[1, 1\] sum to 2.*size 3"):
        zero.zeros(3).split([1, 1])
    with pytest.raises(zero.errors.ZeroIndexError, match=r"gather: index out of range.*\[0, 2\]"):
        zero.zeros(2, 3).gather(1, zero.tensor([[0, 3]]))
    with pytest.raises(zero.errors.DTypeError, match="gather: index must be an int64 or int32 tensor.*float32"):
        zero.zeros(2, 3).gather(1, zero.zeros(2, 3))
    with pytest.raises(zero.errors.ZeroIndexError, match="index_select: index out of range"):
        zero.zeros(2, 3).index_select(0, zero.tensor([2]))
    with pytest.raises(zero.errors.ShapeError, match=r"embedding: weight must be a 2-D.*float32\[4\]"):
        embedding(zero.tensor([0]), zero.zeros(4))
    with pytest.raises(zero.errors.ShapeError, match=r"tril: needs at least 2 dimensions.*float32\[4\]"):
        zero.zeros(4).tril()
