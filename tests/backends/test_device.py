"""Devices: parsing, identity, and refusing a device that is not there."""
from __future__ import annotations

import importlib.util
import os
import pickle

import pytest

import zero
from zero import Device
from zero.errors import DeviceError


def _cuda_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def test_parsing():
    cpu = Device("cpu")
    assert cpu.type == "cpu" and cpu.index is None and str(cpu) == "cpu"
    assert repr(cpu) == "device(type='cpu')"
    cuda1 = Device("cuda:1")
    assert (cuda1.type, cuda1.index, str(cuda1)) == ("cuda", 1, "cuda:1")
    assert repr(cuda1) == "device(type='cuda', index=1)"
    assert Device("cuda").index == 0
    assert Device(" CUDA:2 ").index == 2


def test_equal_devices_are_one_object():
    assert Device("cuda", 1) is Device("cuda:1")
    assert Device("cpu") is Device("cpu", 0) is zero.device("cpu")
    assert Device(Device("cuda:3")) is Device("cuda:3")
    assert Device("cuda:0") == "cuda:0" and Device("cpu") != "cuda"
    assert Device("cpu") != "not a device"
    assert len({Device("cuda:1"), Device("cuda", 1)}) == 1
    assert pickle.loads(pickle.dumps(Device("cuda:2"))) is Device("cuda:2")


@pytest.mark.parametrize("spec,index,message", [
    ("tpu", None, "unknown device 'tpu'"),
    ("cuda:x", None, "must be a non-negative integer"),
    ("cuda:-1", None, "must be a non-negative integer"),
    ("cuda:1", 2, "already has an index"),
    ("cpu", 1, "only one cpu device"),
    ("cuda", -1, "non-negative integer"),
    (3, None, "string like 'cpu' or 'cuda:0'"),
])
def test_bad_devices_raise_device_errors(spec, index, message):
    with pytest.raises(DeviceError, match=message):
        Device(spec, index)
    assert issubclass(DeviceError, RuntimeError)


def test_tensors_live_on_the_cpu():
    t = zero.ones(2)
    assert t.device is Device("cpu") and not t.is_cuda
    assert t.to("cpu") is t and t.cpu() is t
    assert zero.zeros(2, device="cpu").device is t.device


@pytest.mark.skipif(_cuda_available() or os.environ.get("ZERO_TEST_PLAY_CUDA") == "1",
                    reason="a CUDA device is present (or played by the CPU)")
def test_creating_a_tensor_on_cuda_without_cuda_raises():
    with pytest.raises(DeviceError, match="cuda:0 is not available"):
        zero.ones(2, device="cuda")
    with pytest.raises(DeviceError, match="cuda:1 is not available"):
        zero.tensor([1.0], device="cuda:1")
    with pytest.raises(DeviceError, match="cuda"):
        zero.ones(2).to("cuda")
    with pytest.raises(DeviceError, match="cuda"):
        zero.ones(2).cuda()
