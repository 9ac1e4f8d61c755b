"""``zero.nn.modules.<name>`` answers to PyTorch's ``torch.nn.modules.<name>``: every layer
PyTorch defines there that Zero has is importable from it, as the same class."""
from __future__ import annotations

import importlib

import pytest

import zero
import zero.nn as nn
from zero.nn.modules import PUBLIC


def test_the_layers_are_zero_s_own_classes():
    from zero.nn.modules.container import Sequential
    from zero.nn.modules.conv import Conv2d, _ConvNd
    from zero.nn.modules.module import Module

    assert Sequential is nn.Sequential and Conv2d is nn.Conv2d and Module is nn.Module
    assert issubclass(Conv2d, _ConvNd)
    from zero.nn.modules.loss import _Loss, _WeightedLoss

    class Mine(_WeightedLoss):        # a loss of one's own, on PyTorch's base classes
        def forward(self, input, target):  # noqa: A002
            return ((input - target) ** 2 * self.weight).sum()

    assert issubclass(Mine, _Loss) and Mine(zero.ones(2)).reduction == "mean"
    assert nn.modules.Linear is nn.Linear and nn.modules.linear.Linear is nn.Linear


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_a_name_zero_lacks_is_absent_not_a_stand_in(name):
    ours = importlib.import_module(f"zero.nn.modules.{name}")
    for layer in PUBLIC[name]:
        assert hasattr(ours, layer) == hasattr(nn, layer), f"zero.nn.modules.{name}.{layer}"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_layer_zero_has_is_where_pytorch_keeps_it(name):
    pytest.importorskip("torch")
    torch_module = importlib.import_module(f"torch.nn.modules.{name}")
    ours = importlib.import_module(f"zero.nn.modules.{name}")
    for layer in getattr(torch_module, "__all__", []):
        if isinstance(getattr(nn, layer, None), type):
            assert getattr(ours, layer, None) is getattr(nn, layer), f"zero.nn.modules.{name}.{layer}"
