"""Elementwise ops through the harness: every layout, float32 and float64, gradcheck."""
from __future__ import annotations

import math

import numpy as np
import pytest
from op_harness import check_op, on_device_of

import zero
from zero.ops.elementwise import Gelu, Silu

SHAPE = (3, 4)
SHAPE3 = (2, 3, 4)
_erf = np.vectorize(math.erf)


def _gelu_exact(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# name: (zero function, numpy reference, keyword arguments for check_op)
UNARY = {
    "neg": (lambda a: -a, np.negative, {}),
    "neg_method": (lambda a: a.neg(), np.negative, {}),
    "abs": (lambda a: a.abs(), np.abs, {}),
    "abs_builtin": (lambda a: abs(a), np.abs, {}),
    "exp": (lambda a: a.exp(), np.exp, {}),
    "log": (lambda a: a.log(), np.log, dict(low=0.2, high=3.0)),
    "sqrt": (lambda a: a.sqrt(), np.sqrt, dict(low=0.2, high=3.0)),
    "rsqrt": (lambda a: a.rsqrt(), lambda a: 1 / np.sqrt(a), dict(low=0.2, high=3.0)),
    "sin": (lambda a: a.sin(), np.sin, {}),
    "cos": (lambda a: a.cos(), np.cos, {}),
    "tanh": (lambda a: a.tanh(), np.tanh, {}),
    "sigmoid": (lambda a: a.sigmoid(), _sigmoid, {}),
    "sigmoid_large": (lambda a: a.sigmoid(), _sigmoid, dict(low=-30.0, high=30.0)),
    "relu": (lambda a: a.relu(), lambda a: np.maximum(a, 0), {}),
    "gelu": (lambda a: Gelu.apply(a), _gelu_exact, dict(low=-4.0, high=4.0)),
    "gelu_tanh": (lambda a: Gelu.apply(a, approximate="tanh"), _gelu_tanh, dict(low=-4.0, high=4.0)),
    "silu": (lambda a: Silu.apply(a), lambda a: a * _sigmoid(a), dict(low=-4.0, high=4.0)),
    "square": (lambda a: a.square(), np.square, {}),
    "zero_functional_exp": (lambda a: zero.exp(a), np.exp, {}),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, ref, kwargs = UNARY[name]
    check_op(fn, ref, [SHAPE], **kwargs)


@pytest.mark.parametrize("name", ["exp", "tanh", "gelu", "sigmoid"])
def test_unary_three_dims(name):
    fn, ref, kwargs = UNARY[name]
    check_op(fn, ref, [SHAPE3], **kwargs)


def test_unary_zero_dim():
    check_op(lambda a: a.exp() * a.sin(), lambda a: np.exp(a) * np.sin(a), [()])


BINARY = {
    "add": (lambda a, b: a + b, np.add, {}),
    "sub": (lambda a, b: a - b, np.subtract, {}),
    "mul": (lambda a, b: a * b, np.multiply, {}),
    "div": (lambda a, b: a / b, np.divide, dict(low=0.5, high=2.0)),
    "pow": (lambda a, b: a ** b, np.power, dict(low=0.5, high=2.0)),
    "maximum": (lambda a, b: a.maximum(b), np.maximum, {}),
    "minimum": (lambda a, b: a.minimum(b), np.minimum, {}),
    "add_method": (lambda a, b: a.add(b), np.add, {}),
    "zero_maximum": (lambda a, b: zero.maximum(a, b), np.maximum, {}),
    "max_of_tensor": (lambda a, b: a.max(b), np.maximum, {}),
    "min_of_tensor": (lambda a, b: a.min(b), np.minimum, {}),
    "clamp_tensors": (lambda a, b: a.clamp(min=b), np.maximum, {}),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    fn, ref, kwargs = BINARY[name]
    check_op(fn, ref, [SHAPE, SHAPE], **kwargs)


def test_binary_three_dims_and_the_same_tensor_twice():
    check_op(lambda a, b: a * b - b / (a * a + 1), lambda a, b: a * b - b / (a * a + 1), [SHAPE3, SHAPE3])
    check_op(lambda a: a * a + a, lambda a: a * a + a, [SHAPE])


SCALAR = {
    "add_right": (lambda a: a + 2.5, lambda a: a + 2.5, {}),
    "add_left": (lambda a: 2.5 + a, lambda a: 2.5 + a, {}),
    "add_int": (lambda a: a + 3, lambda a: a + 3, {}),
    "sub_right": (lambda a: a - 1.5, lambda a: a - 1.5, {}),
    "sub_left": (lambda a: 1.5 - a, lambda a: 1.5 - a, {}),
    "mul_right": (lambda a: a * 3.0, lambda a: a * 3.0, {}),
    "mul_left": (lambda a: -2 * a, lambda a: -2 * a, {}),
    "div_right": (lambda a: a / 4.0, lambda a: a / 4.0, {}),
    "div_left": (lambda a: 2.0 / a, lambda a: 2.0 / a, dict(low=0.5, high=2.0)),
    "pow_int": (lambda a: a ** 2, lambda a: a ** 2, {}),
    "pow_three": (lambda a: a ** 3, lambda a: a ** 3, {}),
    "pow_float": (lambda a: a ** 2.5, lambda a: a ** 2.5, dict(low=0.5, high=2.0)),
    "pow_negative": (lambda a: a ** -1.5, lambda a: a ** -1.5, dict(low=0.5, high=2.0)),
    "pow_left": (lambda a: 2.0 ** a, lambda a: 2.0 ** a, {}),
    "pow_left_int": (lambda a: 3 ** a, lambda a: 3.0 ** a, {}),
    "maximum_scalar": (lambda a: a.maximum(0.5), lambda a: np.maximum(a, 0.5), {}),
    "minimum_scalar": (lambda a: a.minimum(-0.5), lambda a: np.minimum(a, -0.5), {}),
    "clamp_both": (lambda a: a.clamp(-0.5, 0.7), lambda a: np.clip(a, -0.5, 0.7), {}),
    "clamp_min": (lambda a: a.clamp(min=0.1), lambda a: np.maximum(a, 0.1), {}),
    "clamp_max": (lambda a: zero.clamp(a, max=0.1), lambda a: np.minimum(a, 0.1), {}),
    "clip": (lambda a: a.clip(-1, 1), lambda a: np.clip(a, -1, 1), {}),
}


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_python_scalar_operands(name):
    fn, ref, kwargs = SCALAR[name]
    check_op(fn, ref, [SHAPE], **kwargs)


MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])


def test_where_with_a_computed_condition():
    check_op(lambda c, a, b: zero.where(c > 0, a, b), lambda c, a, b: np.where(c > 0, a, b),
             [SHAPE, SHAPE, SHAPE])


def test_where_with_a_fixed_mask_and_scalars():
    check_op(lambda a, b: zero.where(on_device_of(a, MASK), a, b), lambda a, b: np.where(MASK, a, b), [SHAPE, SHAPE])
    check_op(lambda a: zero.where(on_device_of(a, MASK), a, 0.0), lambda a: np.where(MASK, a, 0.0), [SHAPE])
    check_op(lambda a: zero.where(on_device_of(a, MASK), -1.0, a), lambda a: np.where(MASK, -1.0, a), [SHAPE])
    check_op(lambda a: a.where(on_device_of(a, MASK), 2.0), lambda a: np.where(MASK, a, 2.0), [SHAPE])


def test_masked_fill():
    check_op(lambda a: a.masked_fill(on_device_of(a, MASK), -7.0), lambda a: np.where(MASK, -7.0, a), [SHAPE])
    # A computed mask, and a mask that broadcasts over rows.
    check_op(lambda a, m: a.masked_fill(m > 0, 0.5), lambda a, m: np.where(m > 0, 0.5, a), [SHAPE, SHAPE],
             broadcast=False)
    check_op(lambda a: a.masked_fill(on_device_of(a, MASK[0]), 3.0), lambda a: np.where(MASK[0], 3.0, a), [SHAPE])
    check_op(lambda a: zero.masked_fill(a, on_device_of(a, MASK), zero.tensor(1.5)),
             lambda a: np.where(MASK, 1.5, a), [SHAPE])


COMPARE = {
    "eq": (lambda a, b: a == b, np.equal),
    "ne": (lambda a, b: a != b, np.not_equal),
    "lt": (lambda a, b: a < b, np.less),
    "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater),
    "ge": (lambda a, b: a >= b, np.greater_equal),
    "logical_and": (lambda a, b: (a > 0).logical_and(b > 0), lambda a, b: np.logical_and(a > 0, b > 0)),
    "logical_or": (lambda a, b: (a > 0) | (b > 0), lambda a, b: np.logical_or(a > 0, b > 0)),
    "logical_xor": (lambda a, b: zero.logical_xor(a > 0, b > 0), lambda a, b: np.logical_xor(a > 0, b > 0)),
    "logical_not": (lambda a, b: ~(a > b), lambda a, b: ~(a > b)),
    "zero_logical_not": (lambda a, b: zero.logical_not(a > b), lambda a, b: ~(a > b)),
}


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons_and_logic(name):
    fn, ref = COMPARE[name]
    check_op(fn, ref, [SHAPE, SHAPE], grad=False)


def test_comparisons_with_scalars_and_ties():
    check_op(lambda a: a > 0.25, lambda a: a > 0.25, [SHAPE], grad=False)
    check_op(lambda a: 0.25 >= a, lambda a: 0.25 >= a, [SHAPE], grad=False)
    x = zero.tensor([1.0, 2.0, 3.0])
    assert (x == 2).tolist() == [False, True, False]
    assert (x == zero.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True]
    assert (x <= 2.0).tolist() == [True, True, False]


def test_comparison_results_are_bool_and_never_require_grad():
    x = zero.tensor([1.0, -2.0], requires_grad=True)
    for result in (x > 0, x == x, (x > 0) & (x < 1), ~(x > 0)):
        assert result.dtype is zero.bool
        assert not result.requires_grad and result.grad_fn is None


# -- gradients with special values ---------------------------------------------------------


def test_maximum_minimum_ties_split_the_gradient_evenly():
    a = zero.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = zero.tensor([1.0, 5.0, 3.0], requires_grad=True)
    a.maximum(b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 0.5]
    assert b.grad.tolist() == [0.5, 1.0, 0.5]
    a.grad = b.grad = None
    a.minimum(b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.5]
    assert b.grad.tolist() == [0.5, 0.0, 0.5]


def test_maximum_with_a_python_scalar_tie():
    a = zero.tensor([0.0, 1.0, -1.0], requires_grad=True)
    a.maximum(0.0).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0]


def test_relu_gradient_at_zero_is_zero():
    x = zero.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_abs_gradient_at_zero_is_zero():
    x = zero.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.abs().sum().backward()
    assert x.grad.tolist() == [-1.0, 0.0, 1.0]


def test_clamp_gradient_passes_only_inside_the_bounds():
    x = zero.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
    x.clamp(-1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_pow_gradient_of_a_zero_base():
    # d(0 ** b)/db is 0 for b >= 0 (not 0 * log 0 = nan), as in PyTorch.
    base = zero.tensor([0.0, 2.0], dtype=zero.float64, requires_grad=True)
    exponent = zero.tensor([2.0, 3.0], dtype=zero.float64, requires_grad=True)
    (base ** exponent).sum().backward()
    assert exponent.grad.tolist() == pytest.approx([0.0, 8.0 * math.log(2.0)])
    assert base.grad.tolist() == pytest.approx([0.0, 12.0])


def test_masked_fill_gradient_is_zero_where_filled():
    x = zero.ones(3, 4, requires_grad=True)
    x.masked_fill(zero.tensor(MASK), 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (~MASK).astype(np.float32))


def test_where_gradient_goes_to_the_picked_side():
    a = zero.ones(3, 4, requires_grad=True)
    b = zero.ones(4, requires_grad=True)  # broadcast: its gradient sums over rows
    zero.where(on_device_of(a, MASK), a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), MASK.astype(np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), (~MASK).sum(0).astype(np.float32))


def test_gelu_matches_torch_when_available():
    torch = pytest.importorskip("torch")
    values = np.linspace(-5, 5, 41)
    for approximate in ("none", "tanh"):
        x = zero.tensor(values, dtype=zero.float64, requires_grad=True)
        Gelu.apply(x, approximate=approximate).sum().backward()
        tx = torch.tensor(values, requires_grad=True)
        torch.nn.functional.gelu(tx, approximate=approximate).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_a_cpu_scalar_tensor_joins_tensors_on_another_device(second_device):
    # PyTorch's rule: a 0-dim CPU tensor acts as a scalar beside tensors of any device;
    # its gradient comes back to the CPU. Any other CPU tensor is refused.
    x = zero.ones(2, 3, device=second_device, requires_grad=True)
    scale = zero.tensor(2.0, requires_grad=True)
    for y in (x * scale, scale * x):
        assert y.device == second_device and y.cpu().tolist() == [[2.0] * 3] * 2
    (x * scale + scale * x).sum().backward()
    assert scale.grad.device == zero.device("cpu") and scale.grad.item() == 12.0
    filled = x.detach().masked_fill(zero.tensor([True, False, True], device=second_device), zero.tensor(-1.0))
    assert filled.cpu().tolist() == [[-1.0, 1.0, -1.0]] * 2
    with pytest.raises(zero.errors.DeviceError, match=r"Mul: all tensors must be on one device.*float32\[3\] on cpu"):
        x * zero.ones(3)
    y = zero.ones(2, 3, device=second_device)
    y.mul_(zero.tensor(3.0)).add_(zero.tensor(1.0))   # in place too
    assert y.cpu().tolist() == [[4.0] * 3] * 2
    with pytest.raises(zero.errors.DeviceError, match=r"add_: operand on cpu for a tensor on cuda:0"):
        y.add_(zero.ones(3))
