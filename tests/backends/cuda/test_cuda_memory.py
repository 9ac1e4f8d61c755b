"""The CUDA caching allocator, its leases and the CuPy wiring, without a GPU.

The policy (512-byte rounding, exact-size buckets, statistics, trim) runs against a fake
raw source. The real raw source (``DeviceMemory``) and the leases run against a fake
``cudaMalloc``: CuPy's memory objects, pointers and array views work on made-up addresses
as long as nothing launches, so the ownership rules (a block back in its bucket only when
the last array on it goes, never ``cudaFree``'d or handed out under a live array, CuPy's
temporaries lent from the same pool) are checked for real.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

cupy = pytest.importorskip("cupy")

from fake_gpu import fake_runtime

import zero
import zero.cuda
from zero import dtypes
from zero.backends import cuda as backend
from zero.backends.cuda import memory
from zero.backends.device import Device
from zero.tensors.meta import TensorMeta, contiguous_strides


@pytest.fixture(autouse=True)
def cupy_allocator_left_as_found():
    """Each test here leaves CuPy's allocator as it found it: on a GPU that is Zero's pool,
    which the rest of the test worker relies on."""
    before = cupy.cuda.get_allocator()
    yield
    assert cupy.cuda.get_allocator() is before, "the test replaced CuPy's allocator and did not put it back"


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


# -- the real raw source and leases on a fake cudaMalloc --------------------------------------


def _meta(shape, dtype=dtypes.float32, offset=0, strides=None):
    return TensorMeta(tuple(shape), strides or contiguous_strides(tuple(shape)), offset, dtype, Device("cuda"))


def test_device_memory_is_cudamalloc_and_cudafree(monkeypatch):
    runtime = fake_runtime(monkeypatch.setattr)
    raw = memory.DeviceMemory()
    address = raw.malloc(1024)
    assert runtime.allocated == {address: 1024}
    raw.free(address)
    assert runtime.freed == [address] and runtime.allocated == {}


HOLDERS = {
    "a transposed view": lambda array: array.T,
    "a reshaped view": lambda array: array.reshape(50, 15),
    "a slice": lambda array: array[100:200],
    "an outside array (zero.cuda.as_cupy)": lambda array: array,
    "an array built on the memory": lambda array: cupy.ndarray((10,), cupy.float32, memptr=array.data),
}


@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_a_leased_block_returns_to_its_bucket_only_when_the_last_array_on_it_goes(monkeypatch, holder):
    runtime = fake_runtime(monkeypatch.setattr)
    pool = memory.make_allocator(memory.DeviceMemory())
    handle = memory.lease_from(pool, 3000)
    address = memory.address_of(handle)
    array = backend.array_view(handle, _meta((750,)))
    held = HOLDERS[holder](array)
    del handle, array                    # the storage and its tensor are gone ...
    gc.collect()
    stats = pool.memory_stats()
    assert stats["live_bytes"] == 3072 and stats["cached_bytes"] == 0, "back in the pool under a live array"
    other = memory.lease_from(pool, 3000)
    assert memory.address_of(other) != address, "handed out again under a live array"
    del held                             # ... and now the last array on the block
    gc.collect()
    assert pool.memory_stats()["cached_bytes"] == 3072
    again = memory.lease_from(pool, 3000)
    assert memory.address_of(again) == address and pool.memory_stats()["hits"] == 1
    assert runtime.freed == [], "a block in use was given to cudaFree"


def test_trim_frees_only_cached_blocks(monkeypatch):
    runtime = fake_runtime(monkeypatch.setattr)
    pool = memory.make_allocator(memory.DeviceMemory())
    kept = memory.lease_from(pool, 1000)
    returned = memory.lease_from(pool, 5000)
    address = memory.address_of(returned)
    del returned
    assert pool.empty_cache() == 5120
    assert runtime.freed == [address] and memory.address_of(kept) in runtime.allocated


def test_out_of_memory_trims_the_pool_and_retries(monkeypatch):
    runtime = fake_runtime(monkeypatch.setattr)
    pool = memory.make_allocator(memory.DeviceMemory())
    cached = memory.lease_from(pool, 8192)
    cached_address = memory.address_of(cached)
    del cached
    gc.collect()
    runtime.fail_first = 1                           # cudaMalloc fails once: the pool gives its block back ...
    kept = memory.lease_from(pool, 4096)             # ... and the second try succeeds
    assert runtime.freed == [cached_address] and memory.address_of(kept) in runtime.allocated
    assert pool.memory_stats()["cached_bytes"] == 0
    runtime.fail_first = 2
    with pytest.raises(zero.errors.OutOfMemoryError,
                       match=r"CUDA out of memory: cannot allocate 4.0 KiB \(4,096 bytes\).*tensors hold 4.0 KiB") as e:
        memory.lease_from(pool, 4096)
    assert isinstance(e.value, MemoryError) and isinstance(e.value, RuntimeError)
    assert e.value.requested == 4096 and e.value.live == 4096


def test_cupy_temporaries_are_lent_from_the_pool(monkeypatch):
    fake_runtime(monkeypatch.setattr)
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
    fake_runtime(monkeypatch.setattr)
    pool = memory.make_allocator(memory.DeviceMemory())
    previous = cupy.cuda.get_allocator()
    cupy.cuda.set_allocator(memory.cupy_malloc_from(pool))
    try:
        temporary = cupy.empty((100,), cupy.float64)      # no kernel runs: works without a GPU
        assert pool.memory_stats()["live_bytes"] == 1024
        del temporary
        gc.collect()
        assert pool.memory_stats()["cached_bytes"] == 1024
    finally:
        cupy.cuda.set_allocator(previous)


def test_array_views_follow_shape_strides_and_offset():
    handle = cupy.cuda.UnownedMemory(1 << 40, 4096, None, 0)
    meta = _meta((3, 4), dtypes.float64, offset=5, strides=(1, 6))   # a transposed view at offset 5
    view = backend.array_view(handle, meta)
    assert view.shape == (3, 4) and view.strides == (8, 48) and view.dtype == np.float64
    assert view.data.ptr == (1 << 40) + 5 * 8 == backend.address_of(handle) + 40


# -- Zero's own tensors on a fake GPU ----------------------------------------------------------


def _step(parameters, held: dict) -> None:
    """The memory pattern of a training step, with what runs on a GPU replaced by views:
    activations and their views, a temporary whose array outlives the tensor (what a kernel
    reading it sees), CuPy's own temporaries, an array handed out with as_cupy."""
    x = zero.empty(64, 96, device="cuda")
    hidden = [x.T, x.reshape(96, 64), x[8:40], x.unsqueeze(0).expand(3, 64, 96)]
    scores = zero.empty(4, 64, 64, device="cuda").transpose(1, 2)
    reading = zero.empty(64, 96, device="cuda")._array          # the tensor dies here, the array lives
    temporaries = [cupy.empty((n,), cupy.float32) for n in (100, 5000, 64 * 96)]
    grads = [zero.empty(*p.shape, device="cuda") for p in parameters]
    held["last"] = zero.cuda.as_cupy(grads[0])                   # kept until the next step
    assert reading.data.ptr and hidden and scores.shape and temporaries


def test_steps_on_a_fake_gpu_reuse_the_pool_and_never_call_cudafree(fake_gpu):
    """(Before leases, a block whose CuPy array outlived its tensor left the pool: it was
    cudaFree'd when the array went, and the next step had to cudaMalloc a new one.)"""
    parameters = [zero.empty(96, 96, device="cuda"), zero.empty(96, device="cuda")]
    held: dict = {}
    for _ in range(2):  # warm-up: the kept array of one step lives through the next one
        _step(parameters, held)
    gc.collect()
    mallocs, steady = fake_gpu.mallocs, zero.cuda.memory_stats()["live_bytes"]
    for _ in range(3):
        _step(parameters, held)
        gc.collect()
        assert zero.cuda.memory_stats()["live_bytes"] == steady, "a step left device memory behind"
    assert fake_gpu.freed == [], f"{len(fake_gpu.freed)} cudaFree calls during training"
    assert fake_gpu.mallocs == mallocs, f"{fake_gpu.mallocs - mallocs} cudaMalloc calls after warm-up"
    assert steady == 36864 + 512 + 36864          # the parameters (96x96 and 96, 512-byte buckets), the kept grad
