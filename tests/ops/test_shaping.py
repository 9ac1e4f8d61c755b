"""Reshapes, stacks and splits (ops/shaping.py): through the harness, against PyTorch
(values, dtypes, gradients), views where PyTorch gives views, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op
from torch_oracle import check_against_torch

import zero
from zero.errors import DTypeError, ShapeError

CASES = {  # name: (zero function, NumPy reference, shapes)
    "narrow": (lambda a: a.narrow(1, 1, 2), lambda a: a[:, 1:3], [(3, 4)]),
    "narrow_negative": (lambda a: zero.narrow(a, 0, -2, 2), lambda a: a[-2:], [(3, 4)]),
    "tile": (lambda a: zero.tile(a, (2, 1, 3)), lambda a: np.tile(a, (2, 1, 3)), [(2, 3)]),
    "tile_short": (lambda a: a.tile(2), lambda a: np.tile(a, (1, 2)), [(2, 3)]),
    "movedim": (lambda a: zero.movedim(a, (0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0)), [(2, 3, 4)]),
    "moveaxis": (lambda a: a.moveaxis(-1, 0), lambda a: np.moveaxis(a, -1, 0), [(2, 3, 4)]),
    "swapaxes": (lambda a: zero.swapaxes(a, 0, 2), lambda a: np.swapaxes(a, 0, 2), [(2, 3, 4)]),
    "swapdims": (lambda a: a.swapdims(1, 0), lambda a: np.swapaxes(a, 1, 0), [(2, 3, 4)]),
    "unflatten": (lambda a: a.unflatten(1, (2, -1)), lambda a: a.reshape(3, 2, 2), [(3, 4)]),
    "hstack": (lambda a, b: zero.hstack([a, b]), lambda a, b: np.hstack([a, b]), [(2, 3), (2, 1)]),
    "hstack_vectors": (lambda a, b: zero.hstack((a, b)), lambda a, b: np.hstack([a, b]), [(3,), (2,)]),
    "vstack": (lambda a, b: zero.vstack([a, b]), lambda a, b: np.vstack([a, b]), [(3,), (2, 3)]),
    "row_stack": (lambda a, b: zero.row_stack([a, b]), lambda a, b: np.vstack([a, b]), [(1, 3), (2, 3)]),
    "dstack": (lambda a, b: zero.dstack([a, b]), lambda a, b: np.dstack([a, b]), [(2, 3), (2, 3)]),
    "column_stack": (lambda a, b: zero.column_stack([a, b]), lambda a, b: np.column_stack([a, b]), [(3,), (3, 2)]),
    "concat": (lambda a, b: zero.concat([a, b], dim=1), lambda a, b: np.concatenate([a, b], 1), [(2, 3), (2, 2)]),
    "concatenate": (lambda a, b: zero.concatenate([a, b], axis=0), lambda a, b: np.concatenate([a, b]),
                    [(1, 3), (2, 3)]),
    "tensor_split": (lambda a: zero.tensor_split(a, 3, dim=1), lambda a: np.array_split(a, 3, axis=1), [(2, 7)]),
    "tensor_split_indices": (lambda a: a.tensor_split([1, 4], 1), lambda a: np.split(a, [1, 4], axis=1), [(2, 6)]),
    "hsplit": (lambda a: zero.hsplit(a, 2), lambda a: np.hsplit(a, 2), [(3, 4)]),
    "vsplit": (lambda a: a.vsplit([1]), lambda a: np.vsplit(a, [1]), [(3, 4)]),
    "dsplit": (lambda a: zero.dsplit(a, 2), lambda a: np.dsplit(a, 2), [(2, 3, 4)]),
    "rot90": (lambda a: zero.rot90(a), lambda a: np.rot90(a), [(2, 3)]),
    "rot90_k": (lambda a: a.rot90(-3, (2, 0)), lambda a: np.rot90(a, -3, (2, 0)), [(2, 3, 4)]),
    "rot90_twice": (lambda a: a.rot90(2, (1, 2)), lambda a: np.rot90(a, 2, (1, 2)), [(2, 3, 4)]),
    "fliplr": (lambda a: zero.fliplr(a), np.fliplr, [(2, 3)]),
    "flipud": (lambda a: a.flipud(), np.flipud, [(2, 3)]),
    "meshgrid_ij": (lambda a, b: zero.meshgrid(a, b, indexing="ij"), lambda a, b: np.meshgrid(a, b, indexing="ij"),
                    [(3,), (4,)]),
    "meshgrid_xy": (lambda a, b, c: zero.meshgrid([a, b, c], indexing="xy"),
                    lambda a, b, c: np.meshgrid(a, b, c, indexing="xy"), [(2,), (3,), (4,)]),
    "cartesian_prod": (lambda a, b: zero.cartesian_prod(a, b),
                       lambda a, b: np.stack(np.meshgrid(a, b, indexing="ij"), -1).reshape(-1, 2), [(2,), (3,)]),
    "block_diag": (lambda a, b: zero.block_diag(a, b), lambda a, b: np.block([[a, np.zeros((2, 2))],
                                                                             [np.zeros((1, 3)), b]]),
                   [(2, 3), (1, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_through_the_harness(name):
    fn, ref, shapes = CASES[name]
    check_op(fn, ref, shapes, broadcast=False)


def test_against_torch():
    x = np.arange(24.0).reshape(2, 3, 4)
    v = np.arange(3.0)
    calls = [
        lambda lib, a: (lib.narrow(a, 2, 1, 2), a.narrow(0, -1, 1), lib.tile(a, (2,)), a.tile(1, 2, 1, 1)),
        lambda lib, a: (lib.movedim(a, 0, -1), a.moveaxis((2, 0), (0, 1)), lib.swapaxes(a, 0, 1), a.swapdims(2, 1)),
        lambda lib, a: (lib.unflatten(a, -1, (2, 2)), a.unflatten(0, (1, 2, 1))),
        lambda lib, a: (lib.hstack([a, a]), lib.vstack([a, a]), lib.dstack([a, a]), lib.column_stack([a[0], a[0]])),
        lambda lib, a: (*lib.tensor_split(a, 2, 2), *lib.tensor_split(a, [1, 9], 1), *lib.tensor_split(a, 5)),
        lambda lib, a: (*lib.hsplit(a, 3), *lib.vsplit(a, [1]), *lib.dsplit(a, [1, 3])),
        lambda lib, a: (lib.rot90(a), lib.rot90(a, 3, [2, 1]), lib.rot90(a, 0), lib.fliplr(a), lib.flipud(a)),
    ]
    for k, call in enumerate(calls):
        check_against_torch(call, [x], context=f"call {k}")
    check_against_torch(lambda lib, a, b: (lib.hstack([a, b]), lib.column_stack([a, b]), lib.row_stack([a, b]),
                                           *lib.meshgrid(a, b, indexing="xy"), *lib.meshgrid(a, b, indexing="ij"),
                                           lib.cartesian_prod(a, b, a), lib.cartesian_prod(a)), [v, v + 1])
    ints = np.arange(4).reshape(2, 2)
    check_against_torch(lambda lib, a, b: lib.block_diag(a, b, lib.tensor(7)),
                        [ints, np.ones((1, 3), dtype=np.float32)])
    check_against_torch(lambda lib, a: (lib.block_diag(a, a[0]), lib.block_diag()), [ints.astype(np.int32)])
    check_against_torch(lambda lib, a, b: (lib.hstack([a, b]), lib.vstack([b, a])),
                        [np.array(1.0), np.array([2.0, 3.0])])
    check_against_torch(lambda lib, a: lib.cartesian_prod(a, a.float()), [ints[0]])  # both refuse


def test_views_stay_views():
    x = zero.arange(12.0).reshape(3, 4)
    for view in (x.narrow(1, 1, 2), x.movedim(0, 1), x.swapaxes(0, 1), x.unflatten(1, (2, 2)),
                 *x.tensor_split(2, 1), *zero.meshgrid(x[0], x[:, 0])):
        assert view._storage is x._storage
    x.narrow(0, 1, 1).fill_(-1.0)
    assert x[1].tolist() == [-1.0] * 4


def test_bad_input_names_the_problem():
    x = zero.ones(2, 3)
    with pytest.raises(ShapeError, match=r"narrow: start \(2\) \+ length \(2\) exceeds the size \(3\) of dimension 1 "
                                         r"of float32\[2, 3\]"):
        x.narrow(1, 2, 2)
    with pytest.raises(ShapeError, match=r"hsplit: dimension 1 of float32\[2, 3\] on cpu \(size 3\) is not divisible "
                                         r"into 2 equal sections"):
        x.hsplit(2)
    with pytest.raises(ShapeError, match=r"vsplit: needs a tensor with at least 2 dimensions, got float32\[3\]"):
        zero.vsplit(zero.ones(3), 1)
    with pytest.raises(ShapeError, match=r"rot90: the two dims must differ, got \[1, 1\]"):
        x.rot90(1, (1, 1))
    with pytest.raises(DTypeError, match=r"meshgrid: all tensors must have one dtype, got int64\[2\] on cpu, "
                                         r"float32\[2\]"):
        zero.meshgrid(zero.arange(2), zero.ones(2))
    with pytest.raises(ShapeError, match=r"movedim: 2 source dims for 1 destinations"):
        x.movedim((0, 1), 0)
    with pytest.raises(ShapeError, match=r"block_diag: takes tensors of at most 2 dimensions, got float32\[1, 1, 1\]"):
        zero.block_diag(zero.ones(1, 1, 1))
    with pytest.raises(ShapeError, match=r"fliplr: needs at least 2 dimensions, got float32\[3\]"):
        zero.fliplr(zero.ones(3))
