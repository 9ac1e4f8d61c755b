"""The CUDA caching allocator and the CuPy wiring, without a GPU.

The policy (512-byte rounding, exact-size buckets, statistics, trim) runs against a fake
raw source. The real raw source (``DeviceMemory``) runs against a fake ``cudaMalloc``:
CuPy's memory objects, pointers and array views work on made-up addresses as long as
nothing launches, so the ownership rules (freed when the last array goes, never reused
under an array outside Zero, CuPy's temporaries lent from the pool) are checked for real.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

cupy = pytest.importorskip("cupy")

from zero import dtypes  # noqa: E402
from zero.backends import cuda as backend  # noqa: E402
from zero.backends.cuda import memory  # noqa: E402
from zero.device import Device  # noqa: E402
from zero.tensor.meta import TensorMeta, contiguous_strides  # noqa: E402


class FakeRaw:
    def __init__(self):
        self.next_handle, self.live, self.freed = 0, {}, []

    def malloc(self, nbytes):
        self.next_handle += 1
        self.live[self.next_handle] = nbytes
        return self.next_handle

    def free(self, handle):
        assert handle in self.live, "freed twice"
        self.freed.append(self.live.pop(handle))

    def is_exported(self, handle):
        return False


def test_requests_round_up_to_512_bytes():
    pool = memory.make_allocator(FakeRaw())
    assert [pool.round_size(n) for n in (0, 1, 511, 512, 513, 1000, 1025)] == [512, 512, 512, 512, 1024, 1024, 1536]


def test_buckets_hold_exact_sizes():
    raw = FakeRaw()
    pool = memory.make_allocator(raw)
    big = pool.allocate(1024)
    pool.release(big)
    small = pool.allocate(512)           # a free 1024-byte block does not serve 512 bytes ...
    assert small.handle != big.handle
    again = pool.allocate(700)           # ... but serves anything that rounds to 1024
    assert again.handle == big.handle
    stats = pool.memory_stats()
    assert (stats["hits"], stats["misses"]) == (1, 2)
    assert stats["live_bytes"] == 1536 and stats["reserved_bytes"] == 1536 and stats["cached_bytes"] == 0


def test_statistics_peak_and_trim():
    raw = FakeRaw()
    pool = memory.make_allocator(raw)
    blocks = [pool.allocate(n) for n in (100, 2000, 5000)]   # 512 + 2048 + 5120
    assert pool.memory_stats()["peak_bytes"] == 7680
    for block in blocks:
        pool.release(block)
    stats = pool.memory_stats()
    assert stats["live_bytes"] == 0 and stats["cached_bytes"] == 7680 and stats["reserved_bytes"] == 7680
    assert stats["peak_bytes"] == 7680 and raw.freed == []          # cached, not given back
    assert pool.empty_cache() == 7680                                # TrimFreePool
    assert sorted(raw.freed) == [512, 2048, 5120]
    assert pool.memory_stats()["reserved_bytes"] == 0
    pool.reset_peak()
    assert pool.memory_stats()["peak_bytes"] == 0


# -- the real raw source on a fake cudaMalloc ------------------------------------------------


class FakeRuntime:
    """Stands in for cudaMalloc/cudaFree: hands out made-up addresses, records frees."""

    def __init__(self, monkeypatch, fail_first: int = 0):
        self.next_address = 1 << 40
        self.freed = []
        self.fail_first = fail_first
        monkeypatch.setattr(cupy.cuda.runtime, "malloc", self.malloc)
        monkeypatch.setattr(cupy.cuda.runtime, "free", self.free)

    def malloc(self, nbytes):
        if self.fail_first:
            self.fail_first -= 1
            raise cupy.cuda.runtime.CUDARuntimeError(memory.CUDA_ERROR_MEMORY_ALLOCATION)
        address = self.next_address
        self.next_address += max(nbytes, 1) + 4096
        return address

    def free(self, address):
        self.freed.append(address)


def test_device_memory_is_freed_when_the_last_array_goes(monkeypatch):
    runtime = FakeRuntime(monkeypatch)
    raw = memory.DeviceMemory()
    handle = raw.malloc(1024)
    address = handle.ptr
    meta = TensorMeta((4, 8), contiguous_strides((4, 8)), 2, dtypes.float32, Device("cuda"))
    view = backend.array_view(handle, meta)
    raw.free(handle)                     # the pool lets go ...
    del handle
    gc.collect()
    assert runtime.freed == []           # ... but an array still uses the memory
    del view
    gc.collect()
    assert runtime.freed == [address]


def test_a_block_used_by_an_outside_array_is_not_reused(monkeypatch):
    runtime = FakeRuntime(monkeypatch)
    pool = memory.make_allocator(memory.DeviceMemory())
    block = pool.allocate(2048)
    meta = TensorMeta((512,), (1,), 0, dtypes.float32, Device("cuda"))
    outside = backend.array_view(block.handle, meta)   # what zero.cuda.as_cupy hands out
    address = block.handle.ptr
    pool.release(block)
    del block
    assert pool.memory_stats()["cached_bytes"] == 0, "an exported block went back into the pool"
    other = pool.allocate(2048)
    assert other.handle.ptr != address
    assert address not in runtime.freed
    del outside
    gc.collect()
    assert runtime.freed == [address]


def test_an_unshared_block_goes_back_to_its_bucket(monkeypatch):
    FakeRuntime(monkeypatch)
    pool = memory.make_allocator(memory.DeviceMemory())
    block = pool.allocate(3000)
    view = backend.array_view(block.handle, TensorMeta((750,), (1,), 0, dtypes.float32, Device("cuda")))
    del view                              # Zero's own views are gone when a storage is released
    address = block.handle.ptr
    pool.release(block)
    del block
    assert pool.memory_stats()["cached_bytes"] == 3072
    assert pool.allocate(3000).handle.ptr == address


def test_out_of_memory_trims_the_pool_and_retries(monkeypatch):
    runtime = FakeRuntime(monkeypatch, fail_first=1)
    raw = memory.DeviceMemory()
    trims = []
    raw.on_out_of_memory = lambda: trims.append(1)
    handle = raw.malloc(4096)
    assert trims == [1] and handle.ptr
    runtime.fail_first = 2
    with pytest.raises(Exception, match="out of memory"):
        raw.malloc(4096)


def test_cupy_temporaries_are_lent_from_the_pool(monkeypatch):
    FakeRuntime(monkeypatch)
    pool = memory.make_allocator(memory.DeviceMemory())
    malloc = memory.cupy_malloc_from(pool)
    pointer = malloc(1000)
    assert pool.memory_stats()["live_bytes"] == 1024
    array = cupy.ndarray((250,), cupy.float32, memptr=pointer)
    del pointer
    assert pool.memory_stats()["live_bytes"] == 1024     # the array keeps it
    del array
    gc.collect()
    stats = pool.memory_stats()
    assert stats["live_bytes"] == 0 and stats["cached_bytes"] == 1024
    malloc(1000)                                          # and the next temporary reuses it
    assert pool.memory_stats()["hits"] == 1


def test_cupy_allocates_through_the_pool_once_installed(monkeypatch):
    FakeRuntime(monkeypatch)
    pool = memory.make_allocator(memory.DeviceMemory())
    cupy.cuda.set_allocator(memory.cupy_malloc_from(pool))
    try:
        temporary = cupy.empty((100,), cupy.float64)      # no kernel runs: works without a GPU
        assert pool.memory_stats()["live_bytes"] == 1024
        del temporary
        gc.collect()
        assert pool.memory_stats()["cached_bytes"] == 1024
    finally:
        cupy.cuda.set_allocator(None)


def test_array_views_follow_shape_strides_and_offset():
    handle = cupy.cuda.UnownedMemory(1 << 40, 4096, None, 0)
    meta = TensorMeta((3, 4), (1, 6), 5, dtypes.float64, Device("cuda"))   # a transposed view at offset 5
    view = backend.array_view(handle, meta)
    assert view.shape == (3, 4) and view.strides == (8, 48) and view.dtype == np.float64
    assert view.data.ptr == (1 << 40) + 5 * 8 == backend.address_of(handle) + 40
