"""The activation ops (ops/extra/activations.py) through the op harness: every layout
(contiguous, transposed, sliced, expanded), float32 and float64 against a NumPy reference,
and gradcheck of the one backward kernel each (tests/nn/test_activations.py compares them
with PyTorch)."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import check_op

import zero.nn.functional as F

SHAPE = (3, 4)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


# name: (zero function, NumPy reference, keyword arguments for check_op); the random values
# lie in [-4, 4] so that every piece of each function is met
ACTIVATIONS = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": (lambda x: F.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x))),
    "selu": (F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    "celu": (lambda x: F.celu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0), lambda x: _softplus(x, 2.0, 3.0)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardtanh": (lambda x: F.hardtanh(x, -1.5, 2.0), lambda x: np.clip(x, -1.5, 2.0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "logsigmoid": (F.logsigmoid, lambda x: -np.log1p(np.exp(-x))),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0), lambda x: np.where(x > 0.5, x, -2.0)),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "softshrink": (lambda x: F.softshrink(x, 0.7), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.7, 0)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.7), lambda x: np.where(np.abs(x) > 0.7, x, 0)),
    "rrelu_eval": (F.rrelu, lambda x: np.where(x > 0, x, x * (1 / 8 + 1 / 3) / 2)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_through_the_harness(name):
    fn, reference = ACTIVATIONS[name]
    assert check_op(fn, reference, [SHAPE], low=-4.0, high=4.0) > 0


def test_prelu_through_the_harness():
    def reference(x, weight):
        return np.where(x > 0, x, x * weight.reshape(1, -1))
    assert check_op(F.prelu, reference, [(3, 4), (4,)], broadcast=False, low=-2.0, high=2.0) > 0
