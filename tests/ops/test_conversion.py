"""Copies, casts and device transfers (ops/conversion.py), across two devices."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero import nn
from zero.errors import DeviceError


def test_copy_between_devices_in_both_directions(second_device):
    cpu = zero.arange(6, dtype=zero.float32).reshape(2, 3)
    there = zero.zeros(2, 3, device=second_device)
    there.copy_(cpu)
    assert there.device is second_device
    assert there.tolist() == cpu.tolist()
    back = zero.zeros(2, 3)
    back.copy_(there * 2)
    assert back.tolist() == (cpu * 2).tolist()
    broadcast = zero.zeros(4, 3, device=second_device).copy_(zero.tensor([1.0, 2.0, 3.0]))
    assert broadcast.tolist() == [[1.0, 2.0, 3.0]] * 4


def test_load_state_dict_of_a_cpu_checkpoint_into_a_model_elsewhere(second_device):
    source = nn.Linear(3, 2)
    model = nn.Linear(3, 2).to(second_device)
    weight = model.weight
    model.load_state_dict(source.state_dict())
    assert model.weight is weight and model.weight.device is second_device  # in place, same Parameter
    np.testing.assert_array_equal(np.asarray(model.weight), source.weight.detach().numpy())
    np.testing.assert_array_equal(np.asarray(model.bias), source.bias.detach().numpy())


def test_the_gradient_of_a_transfer_goes_back_to_the_first_device(second_device):
    x = zero.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.to(second_device)
    assert y.device is second_device and y.grad_fn.name == "ToDeviceBackward"
    (y * y).sum().backward()
    assert x.grad.device is x.device and x.grad.tolist() == [2.0, -4.0, 6.0]


def test_to_changes_only_what_differs(second_device):
    x = zero.ones(2)
    assert x.to("cpu") is x and x.to(zero.float32) is x
    assert x.to("cpu", copy=True) is not x
    y = x.to(second_device, zero.float64)
    assert (y.device, y.dtype) == (second_device, zero.float64)
    assert zero.ones(1).to(y).dtype is zero.float64


def test_ops_refuse_operands_on_two_devices(second_device):
    with pytest.raises(DeviceError, match="one device"):
        zero.ones(2) + zero.ones(2, device=second_device)
