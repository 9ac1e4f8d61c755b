"""Batch norm: values and gradients against a float64 reference and PyTorch, running
statistics across train() and eval(), PyTorch's buffer names."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero import nn
from zero.autograd import gradcheck
from zero.errors import ShapeError
from zero.nn import functional as F

try:
    import torch
except ImportError:
    torch = None


def test_training_normalises_each_channel_and_gradients_check():
    x = zero.tensor(np.random.default_rng(0).standard_normal((4, 3, 2, 2)) * 3 + 1, requires_grad=True)
    w = zero.tensor([1.0, 2.0, -1.0], dtype=zero.float64, requires_grad=True)
    b = zero.tensor([0.5, 0.0, 1.0], dtype=zero.float64, requires_grad=True)
    out = F.batch_norm(x, None, None, w, b, training=True).detach().numpy()
    normed = (out - b.detach().numpy().reshape(1, 3, 1, 1)) / w.detach().numpy().reshape(1, 3, 1, 1)
    np.testing.assert_allclose(normed.mean(axis=(0, 2, 3)), 0, atol=1e-12)
    np.testing.assert_allclose(normed.var(axis=(0, 2, 3)), 1, rtol=1e-4)  # var/(var + eps)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))


def test_running_statistics_follow_pytorchs_rule():
    rng = np.random.default_rng(1)
    layer = nn.BatchNorm1d(3)
    assert list(layer.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    batches = [rng.standard_normal((5, 3)) * [1.0, 2.0, 3.0] + [0.0, 1.0, -1.0] for _ in range(3)]
    mean, var = np.zeros(3), np.ones(3)
    for batch in batches:
        layer(zero.tensor(batch, dtype=zero.float32))
        mean = 0.9 * mean + 0.1 * batch.mean(0)
        var = 0.9 * var + 0.1 * batch.var(0, ddof=1)   # unbiased, as PyTorch keeps it
    np.testing.assert_allclose(layer.running_mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(layer.running_var.numpy(), var, rtol=1e-5)
    assert layer.num_batches_tracked.item() == 3
    layer.eval()
    x = rng.standard_normal((2, 3))
    expected = (x - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(layer(zero.tensor(x, dtype=zero.float32)).detach().numpy(), expected, rtol=1e-5)
    assert layer.num_batches_tracked.item() == 3   # eval does not count


def test_cumulative_average_and_no_tracking():
    layer = nn.BatchNorm1d(2, momentum=None)
    layer(zero.tensor([[0.0, 0.0], [2.0, 2.0]]))
    layer(zero.tensor([[4.0, 4.0], [6.0, 6.0]]))
    np.testing.assert_allclose(layer.running_mean.numpy(), [3.0, 3.0])   # the average of 1 and 5
    plain = nn.BatchNorm1d(2, affine=False, track_running_stats=False).eval()
    assert list(plain.state_dict()) == [] and plain.running_mean is None
    out = plain(zero.tensor([[0.0, 1.0], [2.0, 3.0]]))
    np.testing.assert_allclose(out.numpy(), [[-1, -1], [1, 1]], rtol=1e-4)  # batch statistics even in eval


def test_errors_name_the_problem():
    with pytest.raises(ShapeError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(zero.ones(1, 3))
    with pytest.raises(ShapeError, match="BatchNorm2d: expected a 4-D input"):
        nn.BatchNorm2d(3)(zero.ones(2, 3))
    with pytest.raises(ShapeError, match=r"BatchNorm1d\(4\): input .* has 3 channels"):
        nn.BatchNorm1d(4)(zero.ones(2, 3))


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("shape, module", [((6, 3), "BatchNorm1d"), ((4, 3, 5), "BatchNorm1d"),
                                           ((2, 3, 4, 4), "BatchNorm2d"), ((2, 3, 2, 3, 4), "BatchNorm3d")])
def test_matches_pytorch_in_train_and_eval(shape, module):
    rng = np.random.default_rng(2)
    ours, theirs = getattr(nn, module)(3, dtype=zero.float64), getattr(torch.nn, module)(3, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor([0.5, 1.5, -2.0]))
        theirs.bias.copy_(torch.tensor([0.1, 0.2, 0.3]))
    ours.load_state_dict({k: zero.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    for step in range(3):
        x = rng.standard_normal(shape) * 2 + step
        results = []
        for lib, layer in ((zero, ours), (torch, theirs)):
            t = lib.tensor(x, requires_grad=True)
            out = layer(t)
            (out * out).sum().backward()
            results.append((np.asarray(out.detach()), np.asarray(t.grad), np.asarray(layer.weight.grad)))
            layer.weight.grad = None
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(np.asarray(ours.state_dict()[key]), value.numpy(), rtol=1e-9, err_msg=key)
    ours.eval(), theirs.eval()
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(ours(zero.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-9)
