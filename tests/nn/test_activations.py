"""PyTorch's activations (ops/extra/activations.py, nn/activation.py) against PyTorch: values and
gradients in float32 and float64 over a range that crosses every kink and reaches the
overflow regions, zero-size inputs, the in-place forms (the input is written, the result is
the input, the gradient is the op's), the modules' reprs and arguments, and the errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import zero
import zero.nn as nn
import zero.nn.functional as F
from zero.errors import DTypeError, InPlaceError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from torch_oracle import check_against_torch

torch = pytest.importorskip("torch")

# values at and around every kink (0, ±0.5, ±1, ±3, 6), and far out (exp overflows in float32)
EDGES = np.array([-1000.0, -100.0, -30.0, -6.0, -3.0, -2.9, -1.0, -0.7, -0.5, -0.3, -1e-8, 0.0, 1e-8, 0.3, 0.5,
                  0.7, 1.0, 2.9, 3.0, 6.0, 6.5, 15.0, 21.0, 30.0, 100.0, 1000.0])

# name: the function of (library, input); the same call in Zero and in PyTorch
ACTIVATIONS = {
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "leaky_relu_default": lambda lib, x: lib.nn.functional.leaky_relu(x),
    "elu": lambda lib, x: lib.nn.functional.elu(x, 1.5),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "celu": lambda lib, x: lib.nn.functional.celu(x, 2.0),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "softplus_beta": lambda lib, x: lib.nn.functional.softplus(x, 2.0, 5.0),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "hardtanh_bounds": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 3.0),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.3, -7.0),
    "tanhshrink": lambda lib, x: lib.nn.functional.tanhshrink(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "softshrink_lambd": lambda lib, x: lib.nn.functional.softshrink(x, 1.0),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "hardshrink_method": lambda lib, x: x.hardshrink(0.3),
    "rrelu_eval": lambda lib, x: lib.nn.functional.rrelu(x),
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "glu": lambda lib, x: lib.nn.functional.glu(x),
    "glu_dim0": lambda lib, x: lib.nn.functional.glu(x.reshape(2, -1), 0),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x.reshape(2, -1), dim=1),
    "softmin_dim0": lambda lib, x: lib.nn.functional.softmin(x.reshape(2, -1), 0),
    "log_softmax_module": lambda lib, x: lib.nn.LogSoftmax(dim=1)(x.reshape(2, -1)),
    "softmax2d": lambda lib, x: lib.nn.Softmax2d()(x.reshape(1, 2, 13, 1)),
    "zero_selu": lambda lib, x: lib.selu(x),
    "zero_celu": lambda lib, x: lib.celu(x, 0.5),
    "zero_threshold": lambda lib, x: lib.threshold(x, 0.0, 2.0),
}

# where values are huge, float32 rounding of the input itself dominates: compare relatively
TOLERANCES = {"float32": dict(rtol=2e-6, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_pytorch_at_the_edges(name, dtype):
    check_against_torch(ACTIVATIONS[name], [EDGES.astype(dtype)], context=name, **TOLERANCES[dtype])


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_pytorch_on_random_values(name):
    values = np.random.default_rng(1).standard_normal(26) * 4
    check_against_torch(ACTIVATIONS[name], [values], context=name, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "softplus", "mish", "hardswish", "logsigmoid", "hardshrink",
                                  "relu6", "threshold", "tanhshrink"])
def test_activation_of_a_zero_size_input(name):
    check_against_torch(lambda lib, x: ACTIVATIONS[name](lib, x.reshape(-1)), [np.zeros((0, 3))], context=name)


def test_nan_passes_through_like_pytorch():
    values = np.array([np.nan, -np.inf, np.inf, 1.0])
    for name in ["leaky_relu", "elu", "softplus", "hardtanh", "softshrink", "hardshrink", "logsigmoid", "threshold"]:
        check_against_torch(ACTIVATIONS[name], [values], context=name, grad=False)


# -- in place --------------------------------------------------------------------------------------------

IN_PLACE = {
    "relu_": (lambda lib, x: lib.nn.functional.relu_(x)),
    "relu(inplace)": (lambda lib, x: lib.nn.functional.relu(x, inplace=True)),
    "zero.relu_": (lambda lib, x: lib.relu_(x)),
    "leaky_relu_": (lambda lib, x: lib.nn.functional.leaky_relu_(x, 0.2)),
    "leaky_relu(inplace)": (lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1, True)),
    "elu_": (lambda lib, x: lib.nn.functional.elu_(x, 0.7)),
    "elu(inplace)": (lambda lib, x: lib.nn.functional.elu(x, inplace=True)),
    "selu_": (lambda lib, x: lib.nn.functional.selu_(x)),
    "celu(inplace)": (lambda lib, x: lib.nn.functional.celu(x, 1.5, inplace=True)),
    "hardtanh_": (lambda lib, x: lib.nn.functional.hardtanh_(x, -0.5, 0.5)),
    "relu6(inplace)": (lambda lib, x: lib.nn.functional.relu6(x, inplace=True)),
    "threshold_": (lambda lib, x: lib.nn.functional.threshold_(x, 0.1, 5.0)),
    "hardswish(inplace)": (lambda lib, x: lib.nn.functional.hardswish(x, inplace=True)),
    "hardsigmoid(inplace)": (lambda lib, x: lib.nn.functional.hardsigmoid(x, inplace=True)),
    "mish(inplace)": (lambda lib, x: lib.nn.functional.mish(x, inplace=True)),
    "silu(inplace)": (lambda lib, x: lib.nn.functional.silu(x, inplace=True)),
    "rrelu_ eval": (lambda lib, x: lib.nn.functional.rrelu_(x)),
    "module ReLU(True)": (lambda lib, x: lib.nn.ReLU(True)(x)),
    "module ELU(inplace)": (lambda lib, x: lib.nn.ELU(inplace=True)(x)),
    "module LeakyReLU": (lambda lib, x: lib.nn.LeakyReLU(0.3, True)(x)),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_writes_the_input_and_returns_it(name):
    fn = IN_PLACE[name]
    values = np.random.default_rng(2).standard_normal((3, 4)) * 3
    x, t = zero.tensor(values), torch.tensor(values)
    result, expected = fn(zero, x), fn(torch, t)
    assert result is x
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_gradient_on_a_non_leaf(name):
    """x = a * 2 written in place: the gradient reaches a through the in-place op."""
    fn = IN_PLACE[name]
    values = np.random.default_rng(3).standard_normal((3, 4)) * 3
    cotangent = np.random.default_rng(4).standard_normal((3, 4))
    a, ta = zero.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    x, tx = a * 2, ta * 2
    y, ty = fn(zero, x), fn(torch, tx)
    assert y is x
    (y * zero.tensor(cotangent)).sum().backward()
    (ty * torch.tensor(cotangent)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_in_place_on_a_view_updates_the_base_and_its_gradient():
    values = np.linspace(-2, 2, 12).reshape(3, 4)
    a, ta = zero.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    base, tbase = a * 1, ta * 1
    F.elu_(base[1:, ::2], 0.5)
    torch.nn.functional.elu_(tbase[1:, ::2], 0.5)
    np.testing.assert_allclose(base.detach().numpy(), tbase.detach().numpy(), rtol=1e-12)
    (base * base).sum().backward()
    (tbase * tbase).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = zero.ones(3, requires_grad=True)
    with pytest.raises(InPlaceError):
        F.leaky_relu_(x)
    with pytest.raises(RuntimeError):
        torch.nn.functional.leaky_relu_(torch.ones(3, requires_grad=True))


def test_in_place_on_a_saved_tensor_is_caught_in_backward():
    a = zero.tensor([-1.0, 2.0], requires_grad=True)
    x = a * 1
    y = F.elu(x)         # saves x
    F.elu_(x)            # ... which this overwrites
    with pytest.raises(RuntimeError, match="inplace"):
        y.sum().backward()


# -- PReLU and RReLU ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,weights", [((4, 3, 5), 3), ((4, 3, 5), 1), ((4, 3), 3), ((6,), 1), ((2, 3, 2, 2), 3)])
def test_prelu_matches_pytorch_for_the_input_and_the_weight(shape, weights):
    rng = np.random.default_rng(5)
    values, weight = rng.standard_normal(shape), rng.standard_normal(weights)
    check_against_torch(lambda lib, x, w: lib.nn.functional.prelu(x, w), [values, weight], rtol=1e-12, atol=1e-12)
    check_against_torch(lambda lib, x, w: x.prelu(w), [values.astype(np.float32), weight.astype(np.float32)])


def test_prelu_module_parameter_and_state_dict_move_both_ways():
    ours, theirs = nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert ours.weight.shape == (3,) and np.allclose(ours.weight.detach().numpy(), 0.1)
    theirs.weight.data = torch.tensor([0.5, -1.0, 2.0])
    ours.load_state_dict({"weight": zero.tensor(theirs.weight.detach().numpy())})
    values = np.random.default_rng(6).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(zero.tensor(values)).detach().numpy(),
                               theirs(torch.tensor(values)).detach().numpy(), rtol=1e-6)
    assert nn.PReLU(dtype=zero.float64).weight.dtype is zero.float64


def test_prelu_refuses_a_weight_that_is_not_per_channel():
    with pytest.raises(RuntimeError, match="channel"):
        F.prelu(zero.ones(2, 3), zero.ones(2))


def test_rrelu_training_draws_slopes_in_the_range_and_backpropagates_them():
    zero.manual_seed(0)
    values = np.linspace(-4, 4, 200)
    x = zero.tensor(values, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    out = y.detach().numpy()
    negative = values < 0
    assert np.array_equal(out[~negative], values[~negative])
    slopes = out[negative] / values[negative]
    assert np.all((slopes >= 0.1) & (slopes <= 0.3)) and slopes.std() > 0.02   # random, not one slope
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[negative], slopes, rtol=1e-12)
    assert np.all(x.grad.numpy()[~negative] == 1)


def test_rrelu_module_is_random_in_training_and_the_mean_slope_in_eval():
    m = nn.RReLU(0.1, 0.3)
    x = zero.full((1000,), -1.0)
    assert float(m(x).std()) > 0.01
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.2, rtol=1e-6)


def test_rrelu_in_place_in_training():
    x = zero.full((100,), -2.0)
    assert F.rrelu_(x, 0.2, 0.4, training=True) is x
    assert np.all((x.numpy() <= -0.4) & (x.numpy() >= -0.8))


# -- modules: arguments and reprs ----------------------------------------------------------------------

MODULES = [
    "ReLU()", "ReLU(True)", "ReLU(inplace=True)", "LeakyReLU()", "LeakyReLU(0.2, True)", "ELU()", "ELU(0.5, True)",
    "SELU()", "SELU(True)", "CELU()", "CELU(2.0, inplace=True)", "GLU()", "GLU(0)", "Softplus()", "Softplus(2, 10)",
    "Softsign()", "Mish()", "Mish(True)", "Hardswish()", "Hardswish(True)", "Hardsigmoid(True)", "Hardtanh()",
    "Hardtanh(-2, 2, True)", "Hardtanh(-2.0, 2.0)", "ReLU6()", "ReLU6(True)", "PReLU()", "PReLU(3, 0.1)",
    "LogSigmoid()", "LogSoftmax(1)", "LogSoftmax()", "Softmin(1)", "Softmin()", "Softmax()", "Softmax(dim=-1)",
    "Softmax2d()", "Threshold(0.1, 20)", "Threshold(0.1, 20.0, True)", "Tanhshrink()", "Softshrink()",
    "Softshrink(1)", "Hardshrink(0.2)", "RReLU()", "RReLU(0.1, 0.3, True)", "SiLU()", "SiLU(True)", "GELU()",
    "GELU('tanh')", "Tanh()", "Sigmoid()",
]


@pytest.mark.parametrize("call", MODULES)
def test_module_repr_is_pytorchs(call):
    assert repr(eval("nn." + call)) == repr(eval("torch.nn." + call))


@pytest.mark.parametrize("call", ["LeakyReLU(0.2)", "ELU(0.5)", "CELU(2.0)", "SELU()", "Softplus(2, 10)", "Mish()",
                                  "Hardswish()", "Hardsigmoid()", "Hardtanh(-2, 2)", "ReLU6()", "LogSigmoid()",
                                  "Threshold(0.1, 20)", "Tanhshrink()", "Softshrink(1)", "Hardshrink(0.2)",
                                  "Softsign()", "GLU(1)", "Softmin(1)", "LogSoftmax(1)", "PReLU(4)", "RReLU()"])
def test_module_forward_matches_pytorch(call):
    values = np.random.default_rng(7).standard_normal((3, 4)) * 3
    ours, theirs = eval("nn." + call), eval("torch.nn." + call)
    ours.eval()
    theirs.eval()
    theirs.double()
    y = ours(zero.tensor(values))
    np.testing.assert_allclose(y.detach().numpy(), theirs(torch.tensor(values)).detach().numpy(), rtol=1e-12,
                               atol=1e-12)


def test_module_paths_are_pytorchs():
    assert nn.ELU.__module__ == "zero.nn.activation" and torch.nn.ELU.__module__ == "torch.nn.modules.activation"
    assert nn.ReLU is zero.nn.activation.ReLU


def test_implicit_softmax_dimension_warns_like_pytorch():
    with pytest.warns(UserWarning, match="Implicit dimension"):
        y = nn.Softmin()(zero.tensor([[1.0, 2.0], [3.0, 5.0]]))
    with pytest.warns(UserWarning):
        want = torch.nn.Softmin()(torch.tensor([[1.0, 2.0], [3.0, 5.0]]))
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6)


# -- errors ----------------------------------------------------------------------------------------------


def test_errors_like_pytorch():
    with pytest.raises(RuntimeError, match="even"):
        F.glu(zero.ones(3))
    with pytest.raises(DTypeError):
        F.elu(zero.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="lambda"):
        F.softshrink(zero.ones(2), -1.0)
    with pytest.raises(TypeError):
        F.leaky_relu([1.0, 2.0])
    with pytest.raises(ValueError):
        nn.Hardtanh(1.0, -1.0)


def test_integer_inputs_where_pytorch_takes_them():
    ints = np.array([-3, 0, 2, 9])
    for fn in [lambda lib, x: lib.nn.functional.hardtanh(x), lambda lib, x: lib.nn.functional.relu6(x),
               lambda lib, x: lib.nn.functional.threshold(x, 1, 7), lambda lib, x: lib.nn.functional.softsign(x),
               lambda lib, x: lib.nn.functional.tanhshrink(x)]:
        check_against_torch(fn, [ints], grad=False)
