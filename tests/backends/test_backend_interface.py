"""Both backends offer the interface the Device relies on, with the same names."""
from __future__ import annotations

import importlib

import pytest

from zero.backends import cpu

INTERFACE = {"allocator", "lease", "array_view", "new_array", "address_of", "to_numpy", "from_numpy", "check_device",
             "synchronize", "logits_chunk_bytes", "kernels", "lender", "begin_capture"}


def test_the_cpu_backend_offers_the_interface():
    assert set(cpu.__all__) == INTERFACE
    assert all(hasattr(cpu, name) for name in INTERFACE)
    for method in ("memory_stats", "empty_cache", "reset_peak", "reset_stats"):
        assert callable(getattr(cpu.allocator, method))


def test_the_cuda_backend_offers_the_same_and_kernels_once_set_up():
    pytest.importorskip("cupy")
    cuda = importlib.import_module("zero.backends.cuda")
    assert set(cuda.__all__) == INTERFACE
    assert all(hasattr(cuda, name) for name in INTERFACE - {"kernels"})  # kernels: bound by check_device
    for method in ("memory_stats", "empty_cache", "reset_peak", "reset_stats"):
        assert callable(getattr(cuda.allocator, method))
