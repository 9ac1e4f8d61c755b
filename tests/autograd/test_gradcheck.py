"""gradcheck must pass right gradients and catch wrong ones (including NaN)."""
from __future__ import annotations

import math

import pytest

import zero
from zero.autograd import GradcheckError, Op, gradcheck


class Cube(Op):
    """x ** 3 with a backward that can be made wrong on purpose."""

    factor = 3.0

    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, grad):
        (x,) = self.saved_tensors
        return (grad * self.factor * x * x,)


class WrongCube(Cube):
    factor = 2.0


class NanBackward(Cube):
    def backward(self, grad):
        return (grad * float("nan"),)


class ScaleSecond(Op):
    """a + 2b, whose backward forgets the 2."""

    def forward(self, a, b):
        return a + b * 2.0

    def backward(self, grad):
        return grad, grad


def _input(*shape):
    return zero.randn(*shape, dtype=zero.float64, requires_grad=True)


def test_gradcheck_passes_a_right_backward():
    assert gradcheck(Cube.apply, [_input(3, 2)]) is True


def test_gradcheck_catches_a_wrong_backward():
    with pytest.raises(GradcheckError, match=r"input 0 \(float64\[3, 2\]\).*analytic.*numeric"):
        gradcheck(WrongCube.apply, [_input(3, 2)])
    assert gradcheck(WrongCube.apply, [_input(3, 2)], raise_exception=False) is False


def test_gradcheck_treats_nan_as_a_mismatch():
    with pytest.raises(GradcheckError, match="analytic nan"):
        gradcheck(NanBackward.apply, [_input(4)])


def test_gradcheck_treats_a_nan_numeric_gradient_as_a_mismatch():
    # log of a negative number: the forward is nan, so the numeric gradient is nan too.
    x = zero.tensor([-1.0, 2.0], dtype=zero.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="numeric nan"):
        gradcheck(lambda t: t.log(), [x])


def test_gradcheck_names_the_input_whose_gradient_is_wrong():
    with pytest.raises(GradcheckError, match=r"input 1 \(float64\[2, 3\]\)"):
        gradcheck(ScaleSecond.apply, [_input(2, 3), _input(2, 3)])


def test_gradcheck_with_several_outputs_and_a_non_tensor_argument():
    def fn(x, scale):
        return x.sin() * scale, x.sum(0)

    assert gradcheck(fn, [_input(2, 3), 2.5])


def test_gradcheck_needs_float64_inputs_that_require_grad():
    with pytest.raises(GradcheckError, match="float64.*float32"):
        gradcheck(Cube.apply, [zero.randn(3, requires_grad=True)])
    with pytest.raises(GradcheckError, match="no input requires grad"):
        gradcheck(Cube.apply, [zero.randn(3, dtype=zero.float64)])
    expanded = zero.randn(1, 3, dtype=zero.float64, requires_grad=True).expand(4, 3)
    with pytest.raises(GradcheckError, match="stride 0"):
        gradcheck(Cube.apply, [expanded])


def test_gradcheck_tolerances():
    # An error of 0.01 in the slope: caught with the defaults, passed with a looser atol.
    class SlightlyOff(Cube):
        def backward(self, grad):
            (x,) = self.saved_tensors
            return (grad * 3.0 * x * x + grad * 1e-2,)

    with pytest.raises(GradcheckError):
        gradcheck(SlightlyOff.apply, [_input(3)])
    assert gradcheck(SlightlyOff.apply, [_input(3)], atol=0.1)


def test_gradcheck_agrees_with_a_hand_derivative():
    x = zero.tensor([0.3, 1.7], dtype=zero.float64, requires_grad=True)
    (x.sin() * x).sum().backward()
    expected = [math.cos(v) * v + math.sin(v) for v in (0.3, 1.7)]
    assert x.grad.tolist() == pytest.approx(expected, rel=1e-12)
