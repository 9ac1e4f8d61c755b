"""CachingAllocator's bookkeeping against a fake raw source (the backends' memory and
leases are tested in tests/backends/cpu and tests/backends/cuda)."""
from __future__ import annotations

from zero.backends.caching_allocator import CachingAllocator


class FakeRaw:
    """Hands out numbered handles and remembers what was freed."""

    def __init__(self):
        self.next_handle = 0
        self.live = {}  # handle -> size
        self.freed = []

    def malloc(self, nbytes):
        self.next_handle += 1
        self.live[self.next_handle] = nbytes
        return self.next_handle

    def free(self, handle):
        assert handle in self.live, "freed twice or never allocated"
        del self.live[handle]
        self.freed.append(handle)


def make(granularity=256, ratio=1.0, oversize_bytes=0, cap=1 << 20):
    raw = FakeRaw()
    return CachingAllocator(raw, granularity, ratio, oversize_bytes, cap), raw


def test_requests_are_rounded_up_to_the_granularity():
    allocator, raw = make(granularity=512)
    assert [allocator.round_size(n) for n in (0, 1, 511, 512, 513, 1024, 1500)] == [512, 512, 512, 512, 1024,
                                                                                     1024, 1536]
    block = allocator.allocate(700)
    assert block.size == 1024 and raw.live[block.handle] == 1024
    assert allocator.memory_stats()["live_bytes"] == 1024


def test_a_released_block_is_reused_and_counted_as_a_hit():
    allocator, raw = make()
    first = allocator.allocate(1000)
    allocator.release(first)
    stats = allocator.memory_stats()
    assert stats["live_bytes"] == 0 and stats["cached_bytes"] == 1024 and stats["reserved_bytes"] == 1024
    second = allocator.allocate(900)  # rounds to the same bucket
    assert second.handle == first.handle
    stats = allocator.memory_stats()
    assert (stats["hits"], stats["misses"]) == (1, 1)
    assert stats["live_bytes"] == 1024 and stats["cached_bytes"] == 0
    third = allocator.allocate(1000)  # the pool is empty again: a miss
    assert third.handle != first.handle and allocator.misses == 2
    assert raw.freed == []


def test_best_fit_takes_the_smallest_block_that_is_large_enough():
    allocator, _ = make(ratio=2.0)
    blocks = {size: allocator.allocate(size) for size in (1024, 2048, 4096, 1536)}
    for block in blocks.values():
        allocator.release(block)
    got = allocator.allocate(1300)  # rounds to 1536: that exact block, not 2048 or 4096
    assert got.handle == blocks[1536].handle
    got = allocator.allocate(1100)  # rounds to 1280: 1536 is gone, 2048 is the best fit
    assert got.handle == blocks[2048].handle and got.size == 2048
    assert allocator.memory_stats()["live_bytes"] == 1536 + 2048  # the whole block counts as live


def test_the_oversize_cap_keeps_small_requests_off_big_blocks():
    allocator, _ = make(ratio=1.5, oversize_bytes=0)
    big = allocator.allocate(4096)
    allocator.release(big)
    small = allocator.allocate(1024)  # 4096 > 1.5 * 1024: a new block
    assert small.handle != big.handle and allocator.misses == 2 and allocator.hits == 0
    fits = allocator.allocate(3000)  # rounds to 3072; 4096 <= 1.5 * 3072: reuse
    assert fits.handle == big.handle and allocator.hits == 1


def test_the_oversize_bytes_allowance():
    allocator, _ = make(ratio=1.0, oversize_bytes=1024)
    block = allocator.allocate(1280)
    allocator.release(block)
    assert allocator.allocate(256).handle == block.handle  # 1280 <= 256 + 1024
    allocator.release(allocator.allocate(2048))
    assert allocator.allocate(512).handle != block.handle  # 2048 > 512 + 1024


def test_exact_size_buckets_with_ratio_one_and_no_allowance():
    allocator, _ = make(ratio=1.0, oversize_bytes=0)
    block = allocator.allocate(1024)
    allocator.release(block)
    assert allocator.allocate(768).handle != block.handle
    assert allocator.allocate(1024).handle == block.handle


def test_peak_bytes_and_reset():
    allocator, _ = make()
    a = allocator.allocate(1024)
    b = allocator.allocate(2048)
    allocator.release(a)
    allocator.release(b)
    assert allocator.memory_stats()["peak_bytes"] == 3072
    allocator.reset_peak()
    assert allocator.memory_stats()["peak_bytes"] == 0
    allocator.allocate(512)
    assert allocator.memory_stats()["peak_bytes"] == 512
    allocator.reset_stats()
    stats = allocator.memory_stats()
    assert (stats["hits"], stats["misses"], stats["peak_bytes"], stats["live_bytes"]) == (0, 0, 512, 512)


def test_the_cached_bytes_cap_returns_the_excess_to_the_raw_source():
    allocator, raw = make(cap=2048)
    blocks = [allocator.allocate(1024) for _ in range(3)]
    for block in blocks:
        allocator.release(block)
    assert raw.freed == [blocks[2].handle]
    stats = allocator.memory_stats()
    assert stats["cached_bytes"] == 2048 and stats["reserved_bytes"] == 2048


def test_empty_cache_returns_every_cached_block():
    allocator, raw = make()
    keep = allocator.allocate(256)
    blocks = [allocator.allocate(n) for n in (256, 512, 512, 4096)]
    for block in blocks:
        allocator.release(block)
    assert allocator.empty_cache() == 256 + 512 + 512 + 4096
    assert sorted(raw.freed) == sorted(b.handle for b in blocks)
    stats = allocator.memory_stats()
    assert stats["cached_bytes"] == 0 and stats["reserved_bytes"] == 256 == stats["live_bytes"]
    assert allocator.allocate(512).handle not in [b.handle for b in blocks]  # nothing left to reuse
    assert keep.handle in raw.live and allocator.empty_cache() == 0
