"""Max, average and adaptive average pooling (1-D and 2-D): the op harness against NumPy
references written by definition, PyTorch as an oracle (values, indices, gradients) on a
grid of kernel / stride / padding / dilation / ceil_mode cases, NaN, and the errors."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from op_harness import DEVICE, check_op

import zero
import zero.nn.functional as F
from zero.errors import DTypeError, ShapeError


def windows(size, kernel, stride, pad, dilation, ceil_mode):
    """PyTorch's windows along one axis: for each output, the input positions it covers
    (padding included, as positions outside [0, size)), and the padded extent's end."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    count = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (count - 1) * stride >= size + pad:
        count -= 1
    return [[o * stride - pad + k * dilation for k in range(kernel)] for o in range(count)]


def reference_pool(x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False, mode="max",
                   count_include_pad=True, divisor_override=None, return_indices=False):
    """(N, C, *in) float64 by definition, one window at a time; with ``return_indices`` (max
    only) also each maximum's position in its (flattened) input plane, PyTorch's indices."""
    dims = x.ndim - 2

    def per_dim(v):
        return (v,) * dims if isinstance(v, int) else tuple(v)

    kernel, padding, dilation = per_dim(kernel), per_dim(padding), per_dim(dilation)
    stride = kernel if stride is None else per_dim(stride)
    axes = [windows(n, k, s, p, d, ceil_mode) for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation)]
    out = np.zeros(x.shape[:2] + tuple(len(a) for a in axes))
    indices = np.zeros(out.shape, dtype=np.int64)
    for where in itertools.product(*(range(len(a)) for a in axes)):
        positions = [axes[d][where[d]] for d in range(dims)]
        inside = [[p for p in ps if 0 <= p < n] for ps, n in zip(positions, x.shape[2:])]
        block = x[(slice(None), slice(None)) + np.ix_(*inside)].reshape(x.shape[:2] + (-1,))
        if mode == "max":
            out[(slice(None), slice(None)) + where] = block.max(axis=-1)
            grid = np.unravel_index(block.argmax(axis=-1), [len(i) for i in inside])   # per dim, within the window
            at = [np.asarray(i)[g] for i, g in zip(inside, grid)]                     # per dim, in the input
            indices[(slice(None), slice(None)) + where] = np.ravel_multi_index(at, x.shape[2:])
            continue
        padded_extent = [min(ps[-1] + 1, n + p) - ps[0] for ps, n, p in zip(positions, x.shape[2:], padding)]
        divisor = (divisor_override or (math.prod(padded_extent) if count_include_pad else block.shape[-1]))
        out[(slice(None), slice(None)) + where] = block.sum(axis=-1) / divisor
    return (out, indices) if return_indices else out


def reference_adaptive(x, output_size):
    dims = x.ndim - 2
    sizes = (output_size,) * dims if isinstance(output_size, int) else output_size
    sizes = [n if s is None else s for n, s in zip(x.shape[2:], sizes)]
    bounds = [[(i * n // s, -(-(i + 1) * n // s)) for i in range(s)] for n, s in zip(x.shape[2:], sizes)]
    out = np.zeros(x.shape[:2] + tuple(sizes))
    for where in itertools.product(*(range(s) for s in sizes)):
        block = x[(slice(None), slice(None)) + tuple(slice(*bounds[d][where[d]]) for d in range(dims))]
        out[(slice(None), slice(None)) + where] = block.reshape(x.shape[:2] + (-1,)).mean(axis=-1)
    return out


# -- the harness ----------------------------------------------------------------------------

MAX_CASES = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(2, 3), stride=1),
             dict(kernel_size=2, stride=2, ceil_mode=True), dict(kernel_size=3, stride=1, padding=1, dilation=2)]


@pytest.mark.parametrize("kwargs", MAX_CASES, ids=str)
def test_max_pool2d_in_the_harness(kwargs):
    reference = dict(kwargs, kernel=kwargs["kernel_size"])
    del reference["kernel_size"]
    assert check_op(lambda x: F.max_pool2d(x, **kwargs), lambda x: reference_pool(x, **reference), [(2, 3, 7, 6)],
                    broadcast=False)


@pytest.mark.parametrize("kwargs", [MAX_CASES[1], MAX_CASES[3], MAX_CASES[4]], ids=str)
def test_max_pool2d_with_indices_in_the_harness(kwargs):
    """The values and the int64 indices of every layout; the gradient flows through the values."""
    reference = dict(kwargs, kernel=kwargs["kernel_size"], return_indices=True)
    del reference["kernel_size"]
    assert check_op(lambda x: F.max_pool2d(x, **kwargs, return_indices=True),
                    lambda x: reference_pool(x, **reference), [(2, 3, 7, 6)], broadcast=False)


AVG_CASES = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
             dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
             dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), ceil_mode=True),
             dict(kernel_size=2, divisor_override=3)]


@pytest.mark.parametrize("kwargs", AVG_CASES, ids=str)
def test_avg_pool2d_in_the_harness(kwargs):
    reference = dict(kwargs, kernel=kwargs["kernel_size"], mode="avg")
    del reference["kernel_size"]
    assert check_op(lambda x: F.avg_pool2d(x, **kwargs), lambda x: reference_pool(x, **reference), [(2, 3, 7, 6)],
                    broadcast=False)


@pytest.mark.parametrize("output_size", [1, 3, (2, None), (3, 4), (5, 4)], ids=str)
def test_adaptive_avg_pool2d_in_the_harness(output_size):
    # (2, 3, 6, 8): 1, (2, None) and (3, 4) divide the input (average pooling); 3 and (5, 4) do not
    assert check_op(lambda x: F.adaptive_avg_pool2d(x, output_size), lambda x: reference_adaptive(x, output_size),
                    [(2, 3, 6, 8)], broadcast=False)


def test_1d_pooling_in_the_harness():
    assert check_op(lambda x: F.max_pool1d(x, 3, 2, 1), lambda x: reference_pool(x, 3, 2, 1), [(2, 3, 9)],
                    broadcast=False)
    assert check_op(lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                    lambda x: reference_pool(x, 3, 2, 1, ceil_mode=True, mode="avg", count_include_pad=False),
                    [(2, 3, 9)], broadcast=False)
    assert check_op(lambda x: F.adaptive_avg_pool1d(x, 4), lambda x: reference_adaptive(x, 4), [(2, 3, 9)],
                    broadcast=False)
    assert check_op(lambda x: F.max_pool1d(x, 3, 2, 1, 2, return_indices=True),
                    lambda x: reference_pool(x, 3, 2, 1, 2, return_indices=True), [(2, 3, 9)], broadcast=False)


def test_unbatched_inputs():
    assert check_op(lambda x: F.max_pool2d(x, 2), lambda x: reference_pool(x[None], 2)[0], [(3, 6, 4)],
                    broadcast=False)
    assert F.avg_pool1d(zero.randn(3, 10), 2).shape == (3, 5)
    assert F.adaptive_avg_pool2d(zero.randn(3, 7, 7), 2).shape == (3, 2, 2)


# -- PyTorch as an oracle -------------------------------------------------------------------

MAX_GRID = [(k, s, p, d, c) for k, s, p, d, c in
            itertools.product([2, 3, (3, 2)], [None, 1, 2, (2, 3)], [0, 1], [1, 2], [False, True])
            if p <= (d * ((k if isinstance(k, int) else min(k)) - 1) + 1) // 2]


def _torch():
    if DEVICE != "cpu":
        pytest.skip("PyTorch (CPU) is the oracle of the CPU run")
    return pytest.importorskip("torch")


def compare(torch, ours, theirs, shape, seed=0):
    """Forward (and indices) and the gradient of a random cotangent, in float64."""
    x = np.random.default_rng(seed).standard_normal(shape)
    zx, tx = zero.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ours(zx), theirs(tx)
    if isinstance(want, tuple):
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy(), err_msg="indices")
        assert got[1].dtype is zero.int64
        got, want = got[0], want[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    cotangent = np.random.default_rng(seed + 1).standard_normal(tuple(want.shape))
    got.backward(zero.tensor(cotangent))
    want.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(zx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg="gradient")


@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", MAX_GRID, ids=str)
def test_max_pool2d_matches_pytorch(kernel, stride, padding, dilation, ceil_mode):
    torch = _torch()
    args = (kernel, stride, padding, dilation, ceil_mode, True)
    compare(torch, lambda x: F.max_pool2d(x, *args), lambda x: torch.nn.functional.max_pool2d(x, *args),
            (2, 3, 9, 8))


@pytest.mark.parametrize("kernel, stride, padding, ceil_mode, include_pad, divisor", [
    case for case in itertools.product([2, 3, (3, 2)], [None, 1, 2, (2, 3)], [0, 1], [False, True], [True, False],
                                       [None, 5])
    if case[2] <= (case[0] if isinstance(case[0], int) else 2) // 2], ids=str)
def test_avg_pool2d_matches_pytorch(kernel, stride, padding, ceil_mode, include_pad, divisor):
    torch = _torch()
    args = (kernel, stride, padding, ceil_mode, include_pad, divisor)
    compare(torch, lambda x: F.avg_pool2d(x, *args), lambda x: torch.nn.functional.avg_pool2d(x, *args),
            (2, 3, 9, 8))


@pytest.mark.parametrize("output_size", [1, 2, 3, 4, (5, 3), (None, 7), 9, (9, 8), (10, 11)], ids=str)
def test_adaptive_avg_pool2d_matches_pytorch(output_size):
    torch = _torch()
    compare(torch, lambda x: F.adaptive_avg_pool2d(x, output_size),
            lambda x: torch.nn.functional.adaptive_avg_pool2d(x, output_size), (2, 3, 9, 8))


def test_1d_pooling_matches_pytorch():
    torch = _torch()
    tf = torch.nn.functional
    args = (3, 2, 1, 2, True, True)
    compare(torch, lambda x: F.max_pool1d(x, *args), lambda x: tf.max_pool1d(x, *args), (2, 3, 11))
    compare(torch, lambda x: F.avg_pool1d(x, 4, 3, 2, True, False), lambda x: tf.avg_pool1d(x, 4, 3, 2, True, False),
            (2, 3, 11))
    compare(torch, lambda x: F.adaptive_avg_pool1d(x, 4), lambda x: tf.adaptive_avg_pool1d(x, 4), (2, 3, 11))
    compare(torch, lambda x: F.max_pool1d(x, 2), lambda x: tf.max_pool1d(x, 2), (3, 11))


def test_overlapping_windows_add_their_gradients():
    # 1 2 | 9 | 3: windows of 3 with stride 1 all choose the 9
    x = zero.tensor([[[1.0, 2.0, 9.0, 3.0, 0.0]]], requires_grad=True)
    F.max_pool1d(x, 3, 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[0, 0, 3, 0, 0]]])


def test_nan_and_ties_follow_pytorch():
    x = zero.tensor([[[1.0, float("nan"), 5.0, 5.0, float("-inf"), float("-inf")]]])
    values, indices = F.max_pool1d(x, 2, return_indices=True)
    assert np.isnan(values.numpy()[0, 0, 0]) and values.numpy()[0, 0, 1] == 5.0
    assert values.numpy()[0, 0, 2] == -np.inf
    assert indices.tolist() == [[[1, 2, 4]]]   # the NaN; the first of equal values; the first -inf


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.max_pool2d(zero.randn(2, 3, 8, 8), 3, padding=2), ShapeError, "at most half"),
    (lambda: F.avg_pool2d(zero.randn(2, 3, 8, 8), 2, padding=2), ShapeError, "at most half"),
    (lambda: F.max_pool2d(zero.randn(2, 3, 2, 2), 3), ShapeError, "too small"),
    (lambda: F.max_pool2d(zero.randn(8, 8), 2), ShapeError, "3-D (C, ...) or 4-D"),
    (lambda: F.max_pool2d(zero.randn(2, 3, 8, 8), (2, 2, 2)), ShapeError, "kernel_size must be an int or 2 ints"),
    (lambda: F.max_pool2d(zero.randn(2, 3, 8, 8), 0), ShapeError, "at least 1"),
    (lambda: F.avg_pool1d(zero.ones(2, 3, 8, dtype=zero.int64), 2), DTypeError, "floating-point"),
    (lambda: F.avg_pool2d(zero.randn(2, 3, 8, 8), 2, divisor_override=0), ValueError, "non-zero"),
    (lambda: F.adaptive_avg_pool2d(zero.randn(2, 3, 8, 8), (2, 2, 2)), ShapeError, "2 ints"),
    (lambda: F.adaptive_avg_pool2d(zero.randn(8), 2), ShapeError, "3-D or 4-D"),
])
def test_errors_name_the_op(call, error, words):
    with pytest.raises(error) as caught:
        call()
    message = str(caught.value)
    ops = {"max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d"}
    assert message.split(":")[0] in ops, message
    assert words in message and "\n" not in message, message


@pytest.mark.parametrize("pool", [lambda x: F.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2, return_indices=True),
                                  lambda x: F.avg_pool2d(x, 2), lambda x: F.adaptive_avg_pool2d(x, 1)])
def test_pooling_stays_on_its_input_s_device(pool, second_device):
    outputs = pool(zero.randn(1, 2, 4, 4, device=second_device))
    for out in outputs if isinstance(outputs, tuple) else (outputs,):
        assert out.device == second_device
