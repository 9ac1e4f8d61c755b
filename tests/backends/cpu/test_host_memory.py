"""The CPU's memory: aligned pool buffers, and leases that end when the last array over a
block is gone -- a tensor's views, a NumPy array the user took, a temporary's array that a
kernel still reads, a fused kernel's scratch -- and not before."""
from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import zero
from zero.backends.cpu import memory
from zero.backends.cpu.kernels._fused_support import scratch
from zero.backends.cpu.memory import ALIGNMENT, LARGE_BLOCK, HostMemory, allocator, leases


def live() -> int:
    return allocator.memory_stats()["live_bytes"]


class CountingHostMemory(HostMemory):
    """The real raw source, counting what the pool asks of it."""

    def __init__(self):
        self.mallocs = 0
        self.frees = 0

    def malloc(self, nbytes):
        self.mallocs += 1
        return super().malloc(nbytes)

    def free(self, handle):
        self.frees += 1


def test_host_memory_is_64_byte_aligned():
    raw = HostMemory()
    for n in (1, 7, 64, 100, 4096, LARGE_BLOCK, LARGE_BLOCK + 7):
        handle = raw.malloc(n)
        assert handle.ctypes.data % ALIGNMENT == 0 and handle.nbytes == n
        assert isinstance(handle, memory.PoolBuffer)
        handle[-1] = 7  # writable to its last byte
        assert handle[-1] == 7


def _transparent_huge_pages(address: int) -> str:
    """The smaps "THPeligible" entry of the mapping that holds ``address``."""
    with open("/proc/self/smaps") as smaps:
        inside = False
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and ":" not in fields[0]:      # a mapping's header: start-end perms ...
                start, end = (int(part, 16) for part in fields[0].split("-"))
                inside = start <= address < end
            elif inside and fields[0] == "THPeligible:":
                return fields[1]
    raise LookupError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"),
                    reason="transparent huge pages are Linux's")
def test_large_blocks_do_not_ask_for_huge_pages():
    """np.empty asks for huge pages from 4 MiB (madvise); where the system gives them only
    on request, the pool's large blocks stay on small pages (memory.py: "Large blocks")."""
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as setting:
        if "[madvise]" not in setting.read():
            pytest.skip("huge pages are given only on request on this system: nothing to tell apart")
    if not np._core.multiarray._get_madvise_hugepage():
        pytest.skip("this NumPy does not ask for huge pages (NUMPY_MADVISE_HUGEPAGE=0, or an old kernel)")
    middle = LARGE_BLOCK // 2     # NumPy's request starts at the page after malloc's header
    asked = np.empty(LARGE_BLOCK, np.uint8)
    assert _transparent_huge_pages(asked.ctypes.data + middle) == "1"     # what the pool avoids
    block = HostMemory().malloc(LARGE_BLOCK)
    assert _transparent_huge_pages(block.ctypes.data + middle) == "0"


@pytest.mark.parametrize("shape,dtype", [((1,), zero.float32), ((3,), zero.float64), ((5, 7), zero.int32),
                                         ((13,), zero.bool), ((2, 3, 5), zero.int64), ((1000,), zero.float32)])
def test_cpu_tensors_start_64_byte_aligned(shape, dtype):
    tensors = [zero.empty(*shape, dtype=dtype) for _ in range(4)]
    for t in tensors:
        assert t.data_ptr() % 64 == 0
    assert zero.ones(3, 5).T.contiguous().data_ptr() % 64 == 0


@pytest.mark.parametrize("rows", [4, LARGE_BLOCK // 24 + 1], ids=["small block", "large block"])
def test_every_array_over_a_lease_has_the_anchor_as_its_base(rows):
    t = zero.arange(float(rows * 6)).reshape(rows, 6)
    anchor = t.untyped_storage().handle
    arrays = [t._array, t.T._array, t.reshape(6, rows)._array, t[1:3, ::2]._array, t.numpy(),
              t.numpy().T, t.numpy()[::-1], t.numpy().reshape(-1), t.numpy().view(np.int64)]
    assert all(a.base is anchor for a in arrays)


def test_the_anchor_sits_on_its_block_which_the_allocator_counts():
    gc.collect()
    before = live()
    t = zero.empty(1000)
    anchor = t.untyped_storage().handle
    assert isinstance(anchor.base, memory.PoolBuffer) and anchor.base.ctypes.data == anchor.ctypes.data
    assert anchor.nbytes == anchor.base.nbytes == live() - before >= 4000   # the whole block, as counted


def _hold(kind: str, t):
    """Something other than the tensor that keeps using its memory."""
    return {
        "tensor view": lambda: t.T,
        "transposed array": lambda: t._array.T,
        "reshape": lambda: t.reshape(25, 40),
        "slice": lambda: t[10:20],
        "numpy()": lambda: t.numpy(),
        "numpy() of a view": lambda: t[::2].numpy(),
        "a kernel's temporary": lambda: (t * 1.0)._array,  # the tensor dies at once, its array lives
    }[kind]()


@pytest.mark.parametrize("kind", ["tensor view", "transposed array", "reshape", "slice", "numpy()",
                                  "numpy() of a view", "a kernel's temporary"])
def test_a_block_returns_to_the_pool_only_when_the_last_array_over_it_dies(kind):
    gc.collect()
    before = live()
    t = zero.full((1000,), 7.0)
    held = _hold(kind, t)
    address = held.data_ptr() if hasattr(held, "data_ptr") else held.__array_interface__["data"][0]
    del t
    gc.collect()
    assert live() > before, "the block went back to the pool while an array still uses it"
    others = [zero.zeros(1000) for _ in range(8)]  # the same size: the pool would reuse a free block
    assert all(abs(o.data_ptr() - address) >= 4000 for o in others), "handed out again under a live array"
    values = held.numpy() if hasattr(held, "numpy") else held
    assert (np.asarray(values) == 7.0).all()
    del others, values
    gc.collect()
    cached = allocator.memory_stats()["cached_bytes"]
    del held
    assert live() == before and allocator.memory_stats()["cached_bytes"] > cached, "the block was not returned"


def test_a_released_block_is_reused_by_the_next_tensor_of_that_size():
    zero.ones(999)  # make sure a block of this size is in the pool
    before = allocator.memory_stats()["hits"]
    t = zero.ones(1000)
    address = t.data_ptr()
    del t
    u = zero.empty(1000)
    assert u.data_ptr() == address
    assert allocator.memory_stats()["hits"] > before


def test_scratch_is_counted_while_it_lives_and_returns_with_its_last_view():
    gc.collect()
    before = live()
    flat = scratch(10_000, np.float32)
    rows = flat[:9_000].reshape(90, 100)
    assert live() - before >= 40_000
    del flat
    assert live() - before >= 40_000          # the shaped view still reads the block
    rows.fill(1)
    del rows
    assert live() == before


def test_cpu_memory_stats_and_empty_cache():
    stats = zero.cpu.memory_stats()
    assert set(stats) == {"live_bytes", "peak_bytes", "cached_bytes", "reserved_bytes", "hits", "misses"}
    gc.collect()
    before = live()
    t = zero.empty(100_000)
    block = live() - before
    assert block >= 400_000
    del t
    assert live() == before
    assert zero.cpu.memory_stats()["cached_bytes"] >= 400_000
    freed = zero.cpu.empty_cache()
    assert freed >= 400_000 and zero.cpu.memory_stats()["cached_bytes"] == 0
    zero.cpu.reset_peak_memory_stats()
    assert zero.cpu.memory_stats()["peak_bytes"] == zero.cpu.memory_stats()["live_bytes"]


def test_from_numpy_memory_is_not_given_to_the_allocator():
    array = np.arange(1000.0)
    before = live()
    t = zero.from_numpy(array)
    assert live() == before
    del t
    assert live() == before
    assert array[5] == 5.0


def _training_step(model, optimizer, x, y, held: dict) -> None:
    loss = model(x, y)
    optimizer.zero_grad()
    loss.backward()
    zero.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    held["losses"].append(loss.item())
    with zero.no_grad():
        logits = model(x[:1])
    held["logits"] = logits.numpy()   # a NumPy array over a tensor's block, kept after the tensor dies


def test_training_steps_take_nothing_from_the_system_after_warm_up_and_leak_nothing(monkeypatch):
    """Every block a step needs comes from the pool once the first steps have filled it, no
    block goes back to the raw source, and a step leaves no more live bytes than it found
    (fewer is fine: the pool may hand a small tensor a somewhat larger free block, and
    which one it finds settles over the first steps).
    (Before leases, the block under the logits the user kept was 'exported': given back to
    the system when the tensor died, and a new one taken from it in the next step.)"""
    from zero.models import GPT, GPTConfig

    raw = CountingHostMemory()
    monkeypatch.setattr(allocator, "raw", raw)
    zero.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=40, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.1))
    optimizer = zero.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x, y = (zero.tensor(rng.integers(0, 40, (4, 16))) for _ in range(2))
    held: dict = {"losses": []}
    for _ in range(3):  # warm-up: optimizer state, the pool's first blocks
        _training_step(model, optimizer, x, y, held)
    gc.collect()
    mallocs, steady = raw.mallocs, live()
    active = leases.active()
    for _ in range(3):
        _training_step(model, optimizer, x, y, held)
        gc.collect()
        assert live() <= steady, "a step left memory behind"
        assert leases.active() == active
    assert raw.frees == 0, f"{raw.frees} blocks given back to the system during training"
    assert raw.mallocs == mallocs, f"{raw.mallocs - mallocs} blocks taken from the system after warm-up"
    assert np.isfinite(held["losses"]).all() and np.isfinite(held["logits"]).all()
