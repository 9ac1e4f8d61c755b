"""The CUDA backend's tests, with or without a GPU.

Without a GPU (CI, and ``pytest`` anywhere by default) the Triton kernels run under
Triton's interpreter on NumPy arrays: ``TRITON_INTERPRET=1`` is set here, before any
kernel module is imported (pytest loads this file before the test modules beside it).
The kernels are compared with the CPU kernels; the allocator runs against fake
memory; the kernels are compiled ahead of time for sm_90 in a subprocess.

On a machine with a GPU, ``ZERO_TEST_DEVICE=cuda pytest tests`` (what
scripts/gpu-check.sh runs) leaves the interpreter off: the same kernel tests then run
the compiled kernels on CuPy arrays, and the tests marked ``gpu`` run too.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

ON_GPU = os.environ.get("ZERO_TEST_DEVICE", "cpu").startswith("cuda")
if not ON_GPU:
    os.environ["TRITON_INTERPRET"] = "1"

# Without the CUDA extra (CuPy and Triton) only the tests of the refusals run; CI installs both
# (.ci/run) and must not skip the rest silently.
HAVE_CUDA_STACK = all(importlib.util.find_spec(name) is not None for name in ("cupy", "triton"))
if not HAVE_CUDA_STACK:
    if os.environ.get("CI") == "true":
        raise RuntimeError("tests/backends/cuda: CI must install triton and cupy-cuda13x (see .ci/run)")
    collect_ignore = ["test_triton_kernels.py", "test_fused_kernels.py", "test_matmul_plan.py",
                      "test_cuda_memory.py", "test_compile_sm90.py", "test_gpu.py", "test_fresh_process.py",
                      "test_kernel_tables.py"]


def gpu_available() -> bool:
    import zero.cuda

    return ON_GPU and zero.cuda.is_available()


needs_gpu = pytest.mark.skipif(not ON_GPU, reason="needs a GPU: run with ZERO_TEST_DEVICE=cuda on a GPU machine")


class Arrays:
    """Where kernel tests put their arrays: NumPy under the interpreter, CuPy on a GPU."""

    def __init__(self, on_gpu: bool):
        self.on_gpu = on_gpu
        if on_gpu:
            import cupy

            import zero

            zero.zeros(1, device="cuda")  # sets the backend up (allocator, Triton driver)
            self.cupy = cupy

    def put(self, array):
        """A device copy of a host array (the array itself under the interpreter)."""
        if array is None or not isinstance(array, np.ndarray):
            return array
        return self.cupy.asarray(array) if self.on_gpu else array.copy()

    def get(self, array) -> np.ndarray:
        return self.cupy.asnumpy(array) if self.on_gpu else np.asarray(array)


@pytest.fixture(scope="session")
def arrays() -> Arrays:
    if ON_GPU and not gpu_available():
        pytest.fail("ZERO_TEST_DEVICE=cuda but zero.cuda.is_available() is False: is CuPy installed and a GPU "
                    "visible?")
    return Arrays(ON_GPU)


@pytest.fixture
def fake_gpu(monkeypatch):
    """Zero's CUDA backend set up on made-up device memory in this process (``fake_gpu.py``);
    yields the fake runtime, which counts cudaMalloc and cudaFree. Everything is put back
    afterwards: the device's cached backend, CuPy's allocator, the patched functions."""
    if ON_GPU:
        pytest.skip("fakes, without a GPU, what a GPU run has for real")
    import cupy
    from fake_gpu import fake_gpu as install

    from zero.backends.device import Device

    monkeypatch.setattr(Device("cuda"), "_backend", None)
    allocator_before = cupy.cuda.get_allocator()
    runtime = install(monkeypatch.setattr)
    yield runtime
    cupy.cuda.set_allocator(allocator_before)
