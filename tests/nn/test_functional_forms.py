"""Functional forms and layers that the layer tests reach only through another name: each
called directly, against PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zero
import zero.nn as nn
import zero.nn.functional as F
from zero.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")
rng = np.random.default_rng(0)


def _pair(shape):
    values = rng.standard_normal(shape)
    return zero.tensor(values), torch.tensor(values)


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["instance_norm", "local_response_norm"])
def test_normalisations(name):
    ours, theirs = _pair((2, 6, 5, 4))
    args = {"local_response_norm": (3,), "instance_norm": ()}[name]
    _close(getattr(F, name)(ours, *args), getattr(torch.nn.functional, name)(theirs, *args))


@pytest.mark.parametrize("layer", ["InstanceNorm2d", "InstanceNorm3d"])
def test_instance_norm_layers(layer):
    shape = (2, 3, 4, 5) if layer.endswith("2d") else (2, 3, 4, 5, 3)
    ours, theirs = _pair(shape)
    kwargs = dict(affine=True, track_running_stats=True)
    mine, reference = getattr(nn, layer)(3, **kwargs).double(), getattr(torch.nn, layer)(3, **kwargs).double()
    _close(mine(ours), reference(theirs))
    _close(mine.running_var, reference.running_var)


@pytest.mark.parametrize("dims, function, layer", [(1, "max_unpool1d", "MaxUnpool1d"),
                                                  (2, "max_unpool2d", "MaxUnpool2d")])
def test_max_unpool(dims, function, layer):
    shape = (2, 3, 8) if dims == 1 else (2, 3, 6, 8)
    ours, theirs = _pair(shape)
    pool = getattr(torch.nn.functional, f"max_pool{dims}d")
    pooled, indices = pool(theirs, 2, return_indices=True)
    expected = getattr(torch.nn.functional, f"max_unpool{dims}d")(pooled, indices, 2)
    got = getattr(F, function)(zero.tensor(pooled.numpy()), zero.tensor(indices.numpy()), 2)
    _close(got, expected)
    module = getattr(nn, layer)(2)
    _close(module(zero.tensor(pooled.numpy()), zero.tensor(indices.numpy())), expected)


@pytest.mark.parametrize("name, kwargs", [("upsample", dict(scale_factor=2, mode="nearest")),
                                          ("upsample_nearest", dict(scale_factor=2)),
                                          ("upsample_bilinear", dict(size=(7, 5)))])
def test_the_older_names_of_interpolate(name, kwargs):
    ours, theirs = _pair((1, 2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # PyTorch's deprecation warnings
        _close(getattr(F, name)(ours, **kwargs), getattr(torch.nn.functional, name)(theirs, **kwargs))


def test_celu_in_place():
    ours, theirs = _pair((4, 5))
    result = F.celu_(ours, 0.7)
    assert result is ours
    _close(ours, torch.nn.functional.celu_(theirs, 0.7))


@pytest.mark.parametrize("name, shape", [("dropout1d", (4, 6, 5)), ("dropout3d", (2, 6, 3, 2, 2)),
                                         ("alpha_dropout", (50, 40)), ("feature_alpha_dropout", (4, 6, 5))])
def test_dropouts_are_the_identity_in_eval_and_drop_in_training(name, shape):
    ours, _ = _pair(shape)
    function = getattr(F, name)
    assert np.array_equal(function(ours, 0.5, training=False).numpy(), ours.numpy())
    dropped = function(ours, 0.5, training=True).numpy()
    assert not np.array_equal(dropped, ours.numpy())
    if name in ("dropout1d", "dropout3d"):                # whole channels: zero, or scaled by 2
        channels = dropped.reshape(shape[0], shape[1], -1)
        original = ours.numpy().reshape(shape[0], shape[1], -1)
        for got, was in zip(channels.reshape(-1, channels.shape[-1]), original.reshape(-1, original.shape[-1])):
            assert np.all(got == 0) or np.allclose(got, 2 * was)


def test_invert_permutation():
    permutation = torch.randperm(7)
    ours = rnn_utils.invert_permutation(zero.tensor(permutation.numpy()))
    assert ours.tolist() == torch.nn.utils.rnn.invert_permutation(permutation).tolist()
    assert rnn_utils.invert_permutation(None) is None


def test_rnn_base_classes_built_as_pytorch_s():
    layer, reference = nn.RNNBase("GRU", 3, 4, 2), torch.nn.RNNBase("GRU", 3, 4, 2)
    assert list(layer.state_dict()) == list(reference.state_dict())
    assert all(tuple(reference.state_dict()[k].shape) == v.shape for k, v in layer.state_dict().items())
    cell, reference_cell = nn.RNNCellBase(3, 4, True, num_chunks=4), torch.nn.RNNCellBase(3, 4, True, num_chunks=4)
    assert {k: v.shape for k, v in cell.state_dict().items()} == {
        k: tuple(v.shape) for k, v in reference_cell.state_dict().items()}
