"""flip, roll, repeat, pad and einsum through the op harness (every layout, float32 and
float64, gradcheck), with NumPy as the reference."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op

import zero
from zero.errors import ShapeError
from zero.nn import functional as F

SHAPE = (2, 3, 4)


@pytest.mark.parametrize("dims", [(0,), (2,), (0, 2), (-1, 1)])
def test_flip(dims):
    assert check_op(lambda a: a.flip(dims), lambda a: np.flip(a, dims), [SHAPE], broadcast=False)


@pytest.mark.parametrize("shifts, dims", [(1, None), (-5, None), (1, 0), (2, -1), ((1, 2), (0, 2)), (7, 1)])
def test_roll(shifts, dims):
    assert check_op(lambda a: a.roll(shifts, dims), lambda a: np.roll(a, shifts, dims), [SHAPE], broadcast=False)


@pytest.mark.parametrize("repeats", [(1, 1, 1), (2, 1, 3), (2, 1, 1, 2), (1, 0, 1)])
def test_repeat(repeats):
    assert check_op(lambda a: a.repeat(*repeats), lambda a: np.tile(a, repeats), [SHAPE], broadcast=False)


NUMPY_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", sorted(NUMPY_MODES))
@pytest.mark.parametrize("amounts", [(1, 2), (0, 1, 2, 0), (1, 1, 1, 1, 1, 1), (2, 3)])
def test_pad(mode, amounts):
    def reference(a):
        widths = [(0, 0)] * a.ndim
        for i in range(len(amounts) // 2):
            widths[a.ndim - 1 - i] = (amounts[2 * i], amounts[2 * i + 1])
        return np.pad(a, widths, NUMPY_MODES[mode])
    assert check_op(lambda a: F.pad(a, amounts, mode), reference, [SHAPE], broadcast=False)


def test_constant_pad_with_a_value_and_cropping():
    x = zero.arange(6, dtype=zero.float32).reshape(2, 3)
    assert F.pad(x, (1, -1), value=9.0).tolist() == [[9, 0, 1], [9, 3, 4]]
    assert check_op(lambda a: F.pad(a, (-1, 2, 1, -1), value=2.0), lambda a: np.pad(a[:-1, 1:], ((1, 0), (0, 2)),
                                                                                 constant_values=2.0), [(2, 3)],
                    broadcast=False)


def test_pad_errors_name_the_problem():
    with pytest.raises(ShapeError, match="pairs of ints"):
        F.pad(zero.ones(2), (1, 2, 3))
    with pytest.raises(ShapeError, match="reflect padding of 3 needs a dimension longer"):
        F.pad(zero.ones(2, 3), (3, 0), "reflect")
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(zero.ones(2), (1, 1), "mirror")


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]), ("i,j->ij", [(3,), (2,)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ij,jk", [(2, 3), (3, 4)]), ("...ij,jk->...ik", [(5, 2, 3), (3, 4)]),
    ("ij,j->i", [(2, 3), (3,)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(equation, shapes):
    assert check_op(lambda *t: zero.einsum(equation, *t), lambda *a: np.einsum(equation, *a), shapes,
                    broadcast=False)


def test_einsum_errors():
    with pytest.raises(ShapeError, match="'j' has sizes 3 and 4"):
        zero.einsum("ij,jk->ik", zero.ones(2, 3), zero.ones(4, 2))
    with pytest.raises(ShapeError, match="names 2 operands, 1 were given"):
        zero.einsum("ij,jk->ik", zero.ones(2, 3))
    with pytest.raises(ShapeError, match="a diagonal needs equal sizes"):
        zero.einsum("ii->i", zero.ones(2, 3))
