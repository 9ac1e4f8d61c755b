"""The cuda device without a GPU: clear refusals, mixed-device errors before any kernel,
``zero.cuda``'s API, and a CPU-only ``import zero`` that never loads CuPy, Triton or PyTorch.
(The kernel table of both devices is compared in test_fresh_process.py.)"""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ON_GPU  # (tests/backends/cuda/conftest.py)

import zero
import zero.cuda
from zero import Device
from zero.errors import DeviceError
from zero.tensors.meta import TensorMeta, contiguous_strides
from zero.tensors.tensor import Tensor


class _NoKernelMayTouchThis:
    """Stands for a device array that does not exist: any use fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"a kernel touched the fake CUDA tensor's array (.{name}) before the device check")

    def __array__(self, *args, **kwargs):
        raise AssertionError("a kernel read the fake CUDA tensor")


def fake_cuda_tensor(shape, dtype=zero.float32, requires_grad=False) -> Tensor:
    """A tensor whose metadata says cuda:0 but which has no storage (no GPU needed)."""
    t = object.__new__(Tensor)
    t._meta = TensorMeta(tuple(shape), contiguous_strides(tuple(shape)), 0, dtype, Device("cuda:0"))
    t._array = _NoKernelMayTouchThis()
    t._storage = None
    t.grad_fn = None
    t.grad = None
    t._requires_grad = requires_grad
    t._retains_grad = False
    t._grad_accumulator = t._view_of = None
    t._history_stamp = 0
    return t


MIXED = {
    "add": lambda c, g: c + g,
    "mul reversed": lambda c, g: g * c,
    "matmul": lambda c, g: c @ g,
    "where": lambda c, g: zero.where(c > 0, c, g),
    "cat": lambda c, g: zero.cat([c, g]),
    "maximum": lambda c, g: zero.maximum(c, g),
    "layer_norm weight": lambda c, g: zero.nn.functional.layer_norm(c, (3,), weight=fake_cuda_tensor((3,))),
    "linear": lambda c, g: zero.nn.functional.linear(c, g),
}


@pytest.mark.parametrize("name", sorted(MIXED))
def test_mixing_cpu_and_cuda_tensors_raises_before_any_kernel(name):
    cpu = zero.ones(3, 3, requires_grad=True)
    gpu = fake_cuda_tensor((3, 3))
    with pytest.raises(DeviceError) as error:
        MIXED[name](cpu, gpu)
    message = str(error.value)
    assert "cpu" in message and "cuda:0" in message, message


def test_in_place_update_from_another_device_raises():
    target = zero.zeros(3)
    with pytest.raises(DeviceError, match="cuda:0"):
        target.add_(fake_cuda_tensor((3,)))


def test_cross_entropy_with_targets_on_another_device_raises():
    logits = zero.randn(4, 5, requires_grad=True)
    with pytest.raises(DeviceError, match="cuda:0"):
        zero.nn.functional.cross_entropy(logits, fake_cuda_tensor((4,), dtype=zero.int64))


@pytest.mark.skipif(ON_GPU, reason="checks the refusal on a machine without a GPU")
def test_without_a_gpu_cuda_is_refused_clearly():
    assert not zero.cuda.is_available() and zero.cuda.device_count() == 0
    with pytest.raises(DeviceError, match=r"cuda:0 is not available: .*(no CUDA GPU|CuPy is not installed)"):
        zero.ones(2, device="cuda")
    with pytest.raises(DeviceError, match="cuda:0 is not available"):
        zero.ones(2).cuda()
    zero.cuda.synchronize()  # nothing queued: a no-op


def test_memory_api_works_without_a_gpu():
    stats = zero.cuda.memory_stats()
    assert {"live_bytes", "peak_bytes", "cached_bytes", "reserved_bytes", "hits", "misses"} <= set(stats)
    assert isinstance(zero.cuda.trim_free_pool(), int)
    zero.cuda.reset_peak_memory_stats()
    assert zero.cuda.max_memory_allocated() == zero.cuda.memory_stats()["live_bytes"]


def test_as_cupy_refuses_cpu_tensors():
    with pytest.raises(DeviceError, match="on cpu"):
        zero.cuda.as_cupy(zero.ones(2))


def test_the_cpu_never_loads_cupy_triton_or_torch():
    code = ("import sys, zero\n"
            "x = zero.randn(4, 4, requires_grad=True)\n"
            "(x @ x).relu().sum().backward()\n"
            "zero.nn.functional.cross_entropy(x, zero.tensor([0, 1, 2, 3])).item()\n"
            "import zero.cuda; zero.cuda.memory_stats()\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'cupy', 'triton', 'torch'}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
