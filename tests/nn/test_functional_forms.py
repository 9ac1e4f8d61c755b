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


# -- the smaller compositions (ops/extra/nn_compositions.py) -------------------------------------


def _pair_grad(shape, positive=False):
    values = rng.standard_normal(shape)
    values = np.abs(values) + 0.1 if positive else values
    return zero.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)


def _same_forward_and_backward(ours_in, theirs_in, ours_out, theirs_out, tol=1e-9):
    _close(ours_out, theirs_out, tol)
    upstream = rng.standard_normal(tuple(theirs_out.shape))
    ours_out.backward(zero.tensor(upstream))
    theirs_out.backward(torch.tensor(upstream))
    _close(ours_in.grad, theirs_in.grad, tol)


@pytest.mark.parametrize("groups", [1, 2, 3])
def test_channel_shuffle(groups):
    ours, theirs = _pair_grad((2, 6, 3, 2))
    _same_forward_and_backward(ours, theirs, F.channel_shuffle(ours, groups),
                               torch.nn.functional.channel_shuffle(theirs, groups))
    layer, reference = nn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups)
    assert repr(layer) == repr(reference)
    _close(layer(ours), reference(theirs))
    assert F.native_channel_shuffle(ours, groups).shape == ours.shape


@pytest.mark.parametrize("layer, function, shape, kernel, stride", [
    ("LPPool1d", "lp_pool1d", (2, 3, 9), 3, 2), ("LPPool2d", "lp_pool2d", (2, 3, 6, 7), (2, 3), None),
    ("LPPool3d", "lp_pool3d", (1, 2, 4, 5, 6), 2, 2)])
@pytest.mark.parametrize("norm_type", [1, 2, 3.5])
def test_power_average_pooling(layer, function, shape, kernel, stride, norm_type):
    ours, theirs = _pair_grad(shape, positive=True)
    _same_forward_and_backward(ours, theirs, getattr(F, function)(ours, norm_type, kernel, stride),
                               getattr(torch.nn.functional, function)(theirs, norm_type, kernel, stride))
    mine, reference = getattr(nn, layer)(norm_type, kernel, stride), getattr(torch.nn, layer)(norm_type, kernel, stride)
    assert repr(mine) == repr(reference)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_pdist(p):
    ours, theirs = _pair_grad((5, 4))
    _same_forward_and_backward(ours, theirs, F.pdist(ours, p), torch.nn.functional.pdist(theirs, p))


def test_gumbel_softmax_samples_and_its_hard_form_passes_the_soft_gradient():
    logits = zero.tensor(rng.standard_normal((4, 6)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0)
    hard = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(hard.detach().numpy())) <= {0.0, 1.0} and (hard.sum(-1).detach().numpy() == 1).all()
    (hard * zero.arange(6.0)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    zero.manual_seed(0)
    counts = F.gumbel_softmax(zero.tensor([[0.0, np.log(3.0)]]).expand(4000, 2), hard=True).sum(0).numpy()
    assert abs(counts[1] / 4000 - 0.75) < 0.03                         # P(class) = softmax(logits)


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss(swap, reduction):
    tensors = [_pair_grad((6, 4)) for _ in range(3)]
    ours = F.triplet_margin_with_distance_loss(*(a for a, _ in tensors), swap=swap, reduction=reduction, margin=0.5)
    theirs = torch.nn.functional.triplet_margin_with_distance_loss(*(b for _, b in tensors), swap=swap,
                                                                    reduction=reduction, margin=0.5)
    _same_forward_and_backward(tensors[0][0], tensors[0][1], ours, theirs)
    cosine = nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: 1 - F.cosine_similarity(a, b))
    reference = torch.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1 - torch.nn.functional.cosine_similarity(a, b))
    _close(cosine(*(a for a, _ in tensors)), reference(*(b for _, b in tensors)))


@pytest.mark.parametrize("name, args", [("max_pool1d_with_indices", ((2, 3, 8), 2)),
                                        ("max_pool2d_with_indices", ((2, 3, 6, 8), 2)),
                                        ("max_pool3d_with_indices", ((1, 2, 4, 4, 4), 2)),
                                        ("adaptive_max_pool1d_with_indices", ((2, 3, 8), 3)),
                                        ("adaptive_max_pool2d_with_indices", ((2, 3, 6, 8), (2, 3)))])
def test_the_pools_with_indices(name, args):
    shape, size = args
    ours, theirs = _pair(shape)
    (values, indices), (expected, expected_indices) = getattr(F, name)(ours, size), \
        getattr(torch.nn.functional, name)(theirs, size)
    _close(values, expected)
    assert indices.tolist() == expected_indices.tolist()
