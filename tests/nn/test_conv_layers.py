"""nn.Conv1d/Conv2d and the pooling modules: PyTorch's parameter names, shapes, initialisation,
reprs and padding modes; a PyTorch state dict loads and gives PyTorch's outputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

import zero
import zero.nn as nn
import zero.nn.functional as F
from zero.errors import ShapeError


def test_parameters_have_pytorch_s_names_and_shapes():
    conv = nn.Conv2d(6, 8, (3, 5), groups=2)
    assert {k: v.shape for k, v in conv.state_dict().items()} == {"weight": (8, 3, 3, 5), "bias": (8,)}
    assert [name for name, _ in conv.named_parameters()] == ["weight", "bias"]
    assert nn.Conv1d(4, 2, 3, bias=False).weight.shape == (2, 4, 3) and nn.Conv1d(4, 2, 3, bias=False).bias is None


def test_initialisation_is_pytorch_s():
    """kaiming_uniform(a=√5) is uniform on ±1/√fan_in, as is the bias; fan_in = 16/2 · 3 · 3 = 72."""
    zero.manual_seed(0)
    conv = nn.Conv2d(16, 256, 3, groups=2)
    bound = 1 / math.sqrt(72)
    weight, bias = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
    assert abs(weight.std() - bound / math.sqrt(3)) < 0.01 * bound     # a uniform's standard deviation
    assert np.abs(weight).max() > 0.99 * bound and np.abs(bias).max() > 0.9 * bound


@pytest.mark.parametrize("module, text", [
    (nn.Conv2d(1, 32, 3, 1), "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))"),
    (nn.Conv2d(3, 4, 3, padding=1, bias=False, padding_mode="reflect"),
     "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False, padding_mode=reflect)"),
    (nn.Conv2d(4, 4, 3, padding="same", dilation=2, groups=4),
     "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, dilation=(2, 2), groups=4)"),
    (nn.Conv1d(2, 4, 3), "Conv1d(2, 4, kernel_size=(3,), stride=(1,))"),
    (nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (nn.MaxPool1d(3, 2), "MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    (nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (nn.Flatten(0, 2), "Flatten(start_dim=0, end_dim=2)"),
    (nn.Identity(), "Identity()"),
    (nn.ReLU(), "ReLU()"),
    (nn.Softmax(dim=1), "Softmax(dim=1)"),
])
def test_reprs_are_pytorch_s(module, text):
    assert repr(module) == text


@pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_padding_modes_match_pytorch_with_the_same_weights(padding_mode, padding):
    torch = pytest.importorskip("torch")
    ours = nn.Conv2d(3, 4, (3, 4), padding=padding, padding_mode=padding_mode, dtype=zero.float64)
    theirs = torch.nn.Conv2d(3, 4, (3, 4), padding=padding, padding_mode=padding_mode, dtype=torch.float64)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    np.testing.assert_allclose(ours(zero.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


def test_a_pytorch_state_dict_loads_and_gives_pytorch_s_outputs():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Conv1d(2, 5, 3, stride=2), torch.nn.ReLU(), torch.nn.MaxPool1d(2),
                                 torch.nn.AdaptiveAvgPool1d(3))
    ours = nn.Sequential(nn.Conv1d(2, 5, 3, stride=2), nn.ReLU(), nn.MaxPool1d(2), nn.AdaptiveAvgPool1d(3))
    ours.load_state_dict({k: zero.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((4, 2, 21)).astype(np.float32)
    np.testing.assert_allclose(ours(zero.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_a_cnn_of_pytorch_s_modules_gives_pytorch_s_outputs_and_gradients():
    """Every module a small CNN is built of, in PyTorch's idiom, with PyTorch's weights: the
    outputs in eval mode and every parameter's gradient agree (float64)."""
    torch = pytest.importorskip("torch")

    def build(nn):
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding="same"), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, padding=1, groups=4, bias=False), nn.GELU(), nn.Dropout2d(0.25),
            nn.Conv2d(8, 12, (2, 3), stride=(1, 2), dilation=(2, 1)), nn.SiLU(), nn.AvgPool2d(2, ceil_mode=True),
            nn.Identity(), nn.Tanh(), nn.AdaptiveAvgPool2d((2, 1)), nn.Flatten(), nn.Linear(24, 5), nn.Sigmoid(),
            nn.Linear(5, 4), nn.Softmax(dim=1))

    zero.manual_seed(0)
    ours, theirs = build(nn).to(dtype=zero.float64).eval(), build(torch.nn).double().eval()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((3, 3, 14, 13))
    out, expected = ours(zero.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    cotangent = np.random.default_rng(5).standard_normal(tuple(expected.shape))
    out.backward(zero.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    grads = {name: p.grad for name, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].numpy(), rtol=1e-8, atol=1e-12, err_msg=name)


def test_pooling_modules_apply_their_functions():
    x = zero.randn(2, 3, 9, 8)
    values, indices = nn.MaxPool2d(3, 2, 1, return_indices=True)(x)
    expected, expected_indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert np.array_equal(values.numpy(), expected.numpy()) and np.array_equal(indices.numpy(),
                                                                               expected_indices.numpy())
    np.testing.assert_array_equal(nn.AvgPool2d(2, count_include_pad=False, padding=1)(x).numpy(),
                                  F.avg_pool2d(x, 2, padding=1, count_include_pad=False).numpy())
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d(1)(x).numpy()[..., 0, 0], x.numpy().mean(axis=(2, 3)),
                               rtol=1e-6, atol=1e-7)
    assert nn.AvgPool1d(2)(zero.randn(2, 3, 9)).shape == (2, 3, 4)
    assert nn.MaxPool1d(2)(zero.randn(3, 9)).shape == (3, 4)


@pytest.mark.parametrize("make, error, words", [
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ShapeError, "groups=2 must divide in_channels=3"),
    (lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), ValueError, "padding_mode must be one of"),
    (lambda: nn.Conv2d(3, 4, 3, stride=2, padding="same"), ShapeError, "not supported for strided"),
    (lambda: nn.Conv1d(3, 4, (3, 3)), ShapeError, "kernel_size must be an int or 1 ints"),
])
def test_bad_layers_are_refused_at_construction(make, error, words):
    with pytest.raises(error, match="Conv") as caught:
        make()
    assert words in str(caught.value)
