"""Module forward hooks and their handles, as PyTorch defines them."""
from __future__ import annotations

import zero
from zero import nn


def test_forward_hooks_see_inputs_and_output_and_may_replace_them():
    layer = nn.Linear(2, 1)
    seen = []
    layer.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    handle = layer.register_forward_hook(lambda m, args, out: seen.append((m, args[0].tolist(), out.shape)))
    out = layer(zero.ones(3, 2))
    assert seen == [(layer, [[0.0, 0.0]] * 3, (3, 1))]
    assert out.tolist() == [[layer.bias.item()]] * 3
    handle.remove()
    layer(zero.ones(1, 2))
    assert len(seen) == 1


def test_a_forward_hook_records_features_of_a_submodule():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    features = {}
    with model[1].register_forward_hook(lambda m, args, out: features.setdefault("relu", out.detach())):
        model(zero.randn(5, 4))
    assert features["relu"].shape == (5, 3) and (features["relu"] >= 0).all().item()
    features.clear()
    model(zero.randn(5, 4))          # the context manager removed the hook
    assert features == {}


def test_a_forward_hook_may_replace_the_output():
    layer = nn.ReLU()
    layer.register_forward_hook(lambda m, args, out: out + 1)
    assert layer(zero.tensor([-1.0, 2.0])).tolist() == [1.0, 3.0]


def test_the_handle_type_is_pytorchs_name():
    handle = nn.ReLU().register_forward_hook(lambda *a: None)
    assert isinstance(handle, zero.utils.hooks.RemovableHandle)
