"""Regression tests for wrong gradients and values found by differential fuzzing against
PyTorch (issue 13): each case as PyTorch documents it."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import zero
from zero.errors import DTypeError, ShapeError


def grad_of(fn, values, dtype=zero.float32):
    x = zero.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.tolist()


@pytest.mark.parametrize("other", [0.1, 1.5, 2.0])
def test_maximum_with_a_wider_zero_dim_tensor_gives_the_gradient_to_the_larger(other):
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = zero.tensor(other, dtype=zero.float64, requires_grad=True)
    zero.maximum(x, y).sum().backward()
    expected_x = [0.0 if other > 1.0 else 1.0, 0.5 if other == 2.0 else (1.0 if other < 2.0 else 0.0)]
    assert x.grad.tolist() == expected_x
    assert y.grad.item() == sum(1 - g for g in expected_x)  # what x did not get, y got


def test_minimum_with_a_wider_zero_dim_tensor():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = zero.tensor(1.1, dtype=zero.float64, requires_grad=True)
    zero.minimum(x, y).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0] and y.grad.item() == 1.0


@pytest.mark.parametrize("fn", [lambda x: x.clamp(min=0).sqrt(), lambda x: x.relu().sqrt(),
                                lambda x: zero.maximum(x, zero.tensor(0.0)).sqrt()],
                         ids=["clamp", "relu", "maximum"])
def test_a_blocked_gradient_stays_zero_behind_an_infinite_slope(fn):
    grads = grad_of(fn, [-1.0, 4.0])   # sqrt'(0) = inf, blocked by the clamp: 0, not inf * 0 = nan
    assert grads == [0.0, 0.25]


def test_the_slope_of_x_to_the_zero_is_zero_even_at_zero():
    assert grad_of(lambda x: x ** 0, [0.0, 2.0]) == [0.0, 0.0]
    assert grad_of(lambda x: x ** zero.tensor([0.0, 1.0]), [0.0, 2.0]) == [0.0, 1.0]


def test_the_max_of_a_tensor_with_a_nan_sends_the_gradient_to_the_nan():
    assert grad_of(lambda x: x.max(), [float("nan"), 2.0, 3.0]) == [1.0, 0.0, 0.0]
    assert grad_of(lambda x: x.min(), [1.0, float("nan"), float("nan")]) == [0.0, 0.5, 0.5]
    # amax and amin are PyTorch's other rule: a NaN maximum is found nowhere, the gradient is NaN
    assert all(math.isnan(g) for g in grad_of(lambda x: x.amax(), [float("nan"), 2.0]))
    assert grad_of(lambda x: x.amax(), [3.0, 3.0]) == [0.5, 0.5]


@pytest.mark.parametrize("dtype", [zero.bool, zero.uint8, zero.int32, zero.int64])
@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "log", "tanh", "sigmoid", "rsqrt"])
def test_float_functions_of_integers_compute_in_the_default_float_dtype(name, dtype):
    values = [1, 0] if dtype is zero.bool else [1, 2]
    result = getattr(zero.tensor(values, dtype=dtype), name)()
    assert result.dtype is zero.float32
    exact = np.asarray(values, np.float64)
    with np.errstate(divide="ignore"):
        special = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "rsqrt": lambda v: 1 / np.sqrt(v)}
        expected = special[name](exact) if name in special else getattr(np, name)(exact)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)  # exp(True) = 2.7182817, not 2.71875


def test_sigmoid_of_the_smallest_int32_is_zero():
    assert zero.tensor([-2 ** 31, 2 ** 31 - 1], dtype=zero.int32).sigmoid().tolist() == [0.0, 1.0]


def test_sign_of_bool_is_the_bool():
    assert zero.tensor([True, False]).sign().tolist() == [True, False]
    assert zero.tensor([True, False]).sign().dtype is zero.bool


def test_integers_to_negative_integer_powers_are_refused_by_name():
    with pytest.raises(RuntimeError, match=r"pow: integers to negative integer powers are not allowed"):
        zero.tensor(2) ** -1
    assert (zero.tensor(2) ** -1.0).item() == 0.5


@pytest.mark.parametrize("value", [float("-inf"), float("nan"), 2.0 ** 63])
def test_filling_an_integer_tensor_with_what_it_cannot_hold_is_refused(value):
    t = zero.tensor([1, 2])
    with pytest.raises(DTypeError, match="cannot be converted to int64 without overflow"):
        t.masked_fill(zero.tensor([True, False]), value)
    with pytest.raises(DTypeError, match="without overflow"):
        t.fill_(value)
    assert t.masked_fill(zero.tensor([True, False]), 7).tolist() == [7, 2]


def test_empty_tensors_flow_through_reductions_over_their_other_dimensions():
    assert zero.zeros(0, 3).amax(1).shape == (0,)
    assert zero.zeros(0, 3).argmax(1).shape == (0,)
    assert zero.zeros(0, 3).max(1).values.shape == (0,)
    assert zero.zeros(0).softmax(0).shape == (0,)
    assert zero.zeros(2, 0).log_softmax(1).shape == (2, 0)
    with pytest.raises(ShapeError, match="empty dimension"):
        zero.zeros(0, 3).amax(0)


def test_relu_passes_the_gradient_of_a_nan_on():
    assert grad_of(lambda x: x.relu(), [float("nan"), -1.0, 2.0]) == [1.0, 0.0, 1.0]


def test_binary_ops_compute_in_the_promoted_dtype():
    small = zero.tensor([2], dtype=zero.uint8)
    minus_five = zero.tensor(-5, dtype=zero.int32)            # a 0-d tensor: the result stays uint8
    assert zero.minimum(small, minus_five).tolist() == [2]     # min(2, uint8(-5) = 251), as PyTorch
    assert (small < minus_five).tolist() == [True]
    x = zero.tensor([-1.0000000150474662e30, 1.0], requires_grad=True)   # float32
    y = zero.tensor(-1e30, dtype=zero.float64, requires_grad=True)       # equal once rounded to float32
    zero.maximum(x, y).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0] and y.grad.item() == 0.5


@pytest.mark.parametrize("fn", [lambda t: t - t, lambda t: t - 1, lambda t: 1 - t, lambda t: t.relu(),
                                lambda t: t.abs(), lambda t: -t], ids=["sub", "sub_scalar", "rsub", "relu",
                                                                       "abs", "neg"])
def test_ops_pytorch_refuses_on_bool_are_refused_by_name(fn):
    with pytest.raises(DTypeError, match="bool"):
        fn(zero.tensor([True, False]))


def test_var_and_std_keep_their_digits_far_from_zero():
    offset = np.float32(1e8) + np.arange(0, 64, 8, dtype=np.float32)        # exact in float32
    expected = np.var(offset.astype(np.float64), ddof=1)
    assert zero.tensor(offset).var().item() == pytest.approx(expected, rel=1e-6)
    huge = zero.tensor([1e38, -1e38])                                        # the square overflows float32
    assert huge.std().item() == pytest.approx(math.sqrt(2) * 1e38, rel=1e-6)
    x = zero.tensor([1e38, -1e38], requires_grad=True)
    x.std().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 ** -0.5, -(2 ** -0.5)], rtol=1e-6)


def test_logsumexp_of_empty_and_sign_of_nan():
    assert zero.zeros(0, 3).logsumexp(0).tolist() == [float("-inf")] * 3
    assert zero.tensor([float("nan"), -2.0]).sign().tolist() == [0.0, -1.0]   # PyTorch's sign of NaN


# -- log-softmax and cross-entropy at large logits ----------------------------------------------
# (x - max) - log(sum) rather than x - (max + log(sum)), and the saved logsumexp in float64:
# otherwise logits of 1e7 in float32 round the logsumexp by a whole unit and backward's
# exp(x - lse) is off by up to a factor e.


SOFTMAX_012 = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()


@pytest.mark.parametrize("base", [0.0, 1e4, 1e7])
@pytest.mark.parametrize("fused", [False, True], ids=["cross_entropy", "linear_cross_entropy"])
def test_cross_entropy_at_large_logits_keeps_its_value_and_gradient(base, fused):
    target = zero.tensor([0])
    if fused:  # logits = x @ weightᵀ = base + [0, 1, 2]
        x = zero.tensor([[1.0]])
        weight = zero.tensor([[base], [base + 1.0], [base + 2.0]], requires_grad=True)
        loss = zero.nn.functional.linear_cross_entropy(x, weight, target)
    else:
        logits = zero.tensor([[base, base + 1.0, base + 2.0]], requires_grad=True)
        loss = zero.nn.functional.cross_entropy(logits, target)
    loss.backward()
    grad = (weight.grad.reshape(-1) if fused else logits.grad.reshape(-1)).tolist()
    assert loss.item() == pytest.approx(-math.log(SOFTMAX_012[0]), rel=1e-6)
    np.testing.assert_allclose(grad, SOFTMAX_012 - [1.0, 0.0, 0.0], rtol=1e-5, atol=1e-7)


def test_cross_entropy_of_equal_huge_logits_is_log_of_the_class_count():
    logits = zero.full((1, 3), 1e8, requires_grad=True)
    loss = zero.nn.functional.cross_entropy(logits, zero.tensor([1]), label_smoothing=0.1)
    loss.backward()
    assert loss.item() == pytest.approx(math.log(3), rel=1e-6)
    # softmax - ((1 - s) onehot + s / C) with s = 0.1
    np.testing.assert_allclose(logits.grad.tolist(), [[0.3, -0.6, 0.3]], rtol=1e-5)


@pytest.mark.parametrize("dtype", [zero.float32, zero.float64])
def test_log_softmax_of_equal_huge_values_is_minus_log_two(dtype):
    out = zero.log_softmax(zero.tensor([1e20, 1e20], dtype=dtype), dim=0)
    np.testing.assert_allclose(out.tolist(), [-math.log(2)] * 2, rtol=1e-6)


@pytest.mark.parametrize("dtype", [zero.float32, zero.float64])
def test_causal_attention_at_huge_scores_picks_the_largest_score(dtype):
    # Scores near 1e19: the fused kernel's exp(scale * s - max) must be exactly 1 at the
    # maximum (a fused multiply-add there once gave exp(-1000) = 0 for every key and 1 / 0).
    rng = np.random.default_rng(3)
    q, k = (rng.standard_normal((2, 40, 16)) * 2e9 for _ in range(2))
    v = rng.standard_normal((2, 40, 16))
    qt, kt, vt = (zero.tensor(a, dtype=dtype, requires_grad=True) for a in (q, k, v))
    out = zero.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
    out.sum().backward()
    scores = np.einsum("gle,gse->gls", q, k) + np.triu(np.full((40, 40), -np.inf), 1)
    picked = np.take_along_axis(v, scores.argmax(-1)[..., None], axis=1)   # (2, 40, 16)
    np.testing.assert_allclose(out.detach().numpy(), picked, rtol=1e-5, atol=1e-6)
    assert np.isfinite(vt.grad.numpy()).all()


def test_an_empty_view_may_start_past_the_end_of_its_storage():
    x = zero.zeros(0, 100)[:, 50:]   # offset 50 in a storage of no elements, as in PyTorch
    assert x.shape == (0, 50) and x.storage_offset() == 50
    assert (x + 1).shape == (0, 50) and x.contiguous().shape == (0, 50)


@pytest.mark.parametrize("shape,dim,index", [((1, 0), 0, [0, 0]), ((3, 0), 1, []), ((3, 4), 0, [])])
def test_index_select_backward_with_nothing_selected(shape, dim, index):
    x = zero.zeros(*shape, requires_grad=True)
    x.index_select(dim, zero.tensor(index, dtype=zero.int64)).sum().backward()
    assert x.grad.shape == shape and x.grad.sum().item() == 0.0


def test_overflow_and_inf_minus_inf_give_inf_and_nan_silently_as_in_pytorch():
    # A fresh interpreter, so that pytest's own warning filters do not hide what a user sees.
    code = ("import zero\n"
            "x = zero.tensor([3e38, -1.0])\n"
            "big = x * 10 + x\n"
            "print((big - big).tolist(), (x / 0).tolist(), x.exp().tolist(), x.log().tolist(), sep=';')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    values = [eval(part, {"nan": math.nan, "inf": math.inf}) for part in run.stdout.strip().split(";")]
    np.testing.assert_allclose(values, [[math.nan, 0.0], [math.inf, -math.inf], [math.inf, math.exp(-1)],
                                        [math.log(3e38), math.nan]], rtol=1e-6)
    assert "Warning" not in run.stderr, run.stderr
