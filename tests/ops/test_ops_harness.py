"""The harness itself: its layouts really are non-contiguous, and it fails on wrong ops."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import DEVICE, EXPANDED, SLICED, STRIDED_LAYOUTS, TRANSPOSED, broadcast_variants, check_op

import zero
from zero.autograd import Op
from zero.autograd.gradcheck import GradcheckError

# On another device the harness compares an op with the CPU's same op (gradients included),
# and a wrong op written for these tests is as wrong on both: what they test runs on the CPU.
cpu_only = pytest.mark.skipif(DEVICE != "cpu", reason="the harness's CPU checks (gradcheck, host memory)")


def test_layouts_make_the_strides_they_promise():
    shape = (3, 4)
    seen = {}
    for layout in STRIDED_LAYOUTS:
        leaf = zero.zeros(*layout.leaf_shape(shape))
        t = layout.to_zero(leaf, shape)
        assert t.shape == shape
        assert t.untyped_storage() is leaf.untyped_storage()  # views, not copies
        seen[layout.name] = (t.stride(), t.storage_offset(), t.is_contiguous())
    assert seen["contiguous"] == ((4, 1), 0, True)
    assert seen["transposed"] == ((1, 3), 0, False)
    assert seen["sliced"] == ((9, 2), 1, False)
    assert seen["expanded"] == ((0, 1), 0, False)


def test_layouts_that_do_not_apply_are_skipped():
    assert TRANSPOSED.leaf_shape((4,)) is None and TRANSPOSED.leaf_shape((1, 4)) is None
    assert SLICED.leaf_shape(()) is None and EXPANDED.leaf_shape((1, 1)) is None


def test_broadcast_variants():
    variants = broadcast_variants([(3, 4), (3, 4)])
    assert variants["broadcast"] == [(1, 4), (3, 1)]
    assert variants["broadcast_rank"] == [(3, 4), (4,)]
    assert broadcast_variants([(3, 4)]) == {}


def test_every_layout_and_dtype_is_checked():
    # 4 strided layouts + 2 broadcast variants, each in float32 and float64.
    assert check_op(lambda a, b: a + b, np.add, [(3, 4), (3, 4)]) == 12
    # A vector cannot be transposed; a 0-d tensor can only be contiguous.
    assert check_op(lambda a: a * 2, lambda a: a * 2, [(4,)]) == 6
    assert check_op(lambda a: a * 2, lambda a: a * 2, [()]) == 2


def test_harness_catches_a_wrong_forward():
    with pytest.raises(AssertionError):
        check_op(lambda a: a.exp(), lambda a: np.exp(a) + 1e-3, [(3, 4)])


@cpu_only
def test_harness_catches_a_forward_that_ignores_strides():
    # Reading the leaf's memory in row-major order is right only for contiguous inputs.
    def as_if_contiguous(a):
        return zero.from_numpy(np.lib.stride_tricks.as_strided(a.detach().numpy(), a.shape,
                                                               (a.shape[-1] * a.itemsize, a.itemsize)))

    with pytest.raises(AssertionError, match="transposed"):
        check_op(as_if_contiguous, lambda a: a, [(3, 4)], grad=False)


def test_harness_catches_a_wrong_output_dtype():
    with pytest.raises(AssertionError, match="dtype"):
        check_op(lambda a: a.to(zero.float64), lambda a: a, [(3, 4)], grad=False)


class WrongSquare(Op):
    """x * x with a backward that forgets the factor 2."""

    def forward(self, x):
        self.save_for_backward(x)
        out = zero.empty(*x.shape, dtype=x.dtype)
        x.device.kernels.mul(x._array, x._array, out._array)
        return out

    def backward(self, grad):
        (x,) = self.saved_tensors
        return (grad * x,)


class BroadcastBlind(Op):
    """a + b whose backward forgets to sum b's gradient back to b's shape."""

    def forward(self, a, b):
        return a + b

    def backward(self, grad):
        return grad, grad


@cpu_only
def test_harness_catches_a_wrong_backward():
    with pytest.raises(GradcheckError, match="analytic"):
        check_op(WrongSquare.apply, np.square, [(3, 4)])


def test_harness_catches_a_backward_that_mishandles_broadcasting():
    # The contiguous layouts pass; only the broadcast ones expose the bug.
    check_op(BroadcastBlind.apply, np.add, [(3, 4), (3, 4)], broadcast=False)
    with pytest.raises(Exception, match="shape"):
        check_op(BroadcastBlind.apply, np.add, [(3, 4), (3, 4)])
