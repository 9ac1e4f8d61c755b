"""A CUDA device on a machine without one, for tests that go through Zero's CUDA set-up.

``fake_gpu(setattr)`` makes ``Device("cuda")`` usable as far as nothing launches: CuPy's
``cudaMalloc``/``cudaFree`` hand out and take back made-up addresses (counted), cuda:0 is
reported present, ``cupy.cuda.Device(0).use()`` does nothing and Triton's driver is left
alone (it needs libcuda). Tensors can then be made with ``zero.empty(..., device="cuda")``
and viewed, CuPy arrays built on them, CuPy temporaries allocated, and Triton launches
recorded (``kernels._launch.recorder``); a CuPy kernel or a copy would fail, as there is
no GPU to run it.

``setattr`` is ``monkeypatch.setattr`` in a test (undone afterwards) or the builtin in a
fresh process (``tests/backends/cuda/test_fresh_process.py``).
"""
from __future__ import annotations

import cupy

from zero.backends import cuda as backend
from zero.backends.cuda import memory


class FakeRuntime:
    """Stands in for cudaMalloc/cudaFree: made-up addresses 4 KiB apart, every call counted."""

    def __init__(self, fail_first: int = 0):
        self.next_address = 1 << 40
        self.allocated: dict[int, int] = {}  # address -> bytes, while not freed
        self.mallocs = 0
        self.freed: list[int] = []
        self.fail_first = fail_first

    def malloc(self, nbytes: int) -> int:
        if self.fail_first:
            self.fail_first -= 1
            raise cupy.cuda.runtime.CUDARuntimeError(memory.CUDA_ERROR_MEMORY_ALLOCATION)
        address = self.next_address
        self.next_address += max(nbytes, 1) + 4096
        self.allocated[address] = nbytes
        self.mallocs += 1
        return address

    def free(self, address: int) -> None:
        assert self.allocated.pop(address, None) is not None, f"cudaFree of {address:#x}: not allocated"
        self.freed.append(address)


class FakeDevice:
    """``cupy.cuda.Device(0).use()`` without a GPU."""

    def __init__(self, index: int = 0):
        self.id = index

    def use(self) -> None:
        pass


def fake_runtime(setattr, fail_first: int = 0) -> FakeRuntime:  # noqa: A002  (monkeypatch.setattr or the builtin)
    """Only cudaMalloc and cudaFree faked (for the raw source and the pool)."""
    runtime = FakeRuntime(fail_first)
    setattr(cupy.cuda.runtime, "malloc", runtime.malloc)
    setattr(cupy.cuda.runtime, "free", runtime.free)
    return runtime


def fake_gpu(setattr) -> FakeRuntime:  # noqa: A002
    """Zero's CUDA backend set up on made-up memory, with a pool of its own (see the module docstring)."""
    runtime = fake_runtime(setattr)
    pool = memory.make_allocator(memory.DeviceMemory())
    setattr(memory, "allocator", pool)
    setattr(backend, "allocator", pool)
    setattr(backend, "unavailable_reason", lambda index: None if index == 0 else "the fake GPU is cuda:0 only")
    setattr(backend, "_set_up", False)
    setattr(backend.triton_driver, "install", lambda: False)
    setattr(cupy.cuda, "Device", FakeDevice)
    return runtime
