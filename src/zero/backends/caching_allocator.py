"""The caching allocator behind every device (the book's ``TensorContext``).

A training step allocates and frees the same sizes over and over; asking the
system (or ``cudaMalloc``) each time costs more than many small ops. So a
released block is kept in a free pool and handed out again:

    allocate(n) -> round n up to the granularity -> best fitting free block?
                       yes, and not too much larger: reuse it (a hit)
                       no: ask the raw source (a miss)
    release(b)  -> back into the free pool, unless the pool would exceed its cap

The policy lives here, once; the raw source of memory is a small object with
``malloc(nbytes)``, ``free(handle)`` and ``is_exported(handle)``. The CPU uses
NumPy byte buffers (``CPUTensorContext`` in the book: 64-byte aligned, best fit
with a cap on oversize); CUDA uses device pointers (``CUDATensorContext``:
512-byte rounding, exact-size buckets); tests use a fake source.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(eq=False)
class Block:
    """A piece of raw memory of ``size`` bytes; ``handle`` is what the raw source gave."""

    handle: object
    size: int


class CachingAllocator:
    def __init__(self, raw, granularity: int, max_oversize_ratio: float, max_oversize_bytes: int,
                 max_cached_bytes: int):
        """``granularity``: every request is rounded up to a multiple of it.
        A free block of size s serves a request of n bytes only if
        ``s <= max(n * max_oversize_ratio, n + max_oversize_bytes)``; a ratio of 1 and
        0 bytes gives the exact-size buckets of the book's CUDA allocator.
        ``max_cached_bytes`` caps how much released memory the pool keeps."""
        self.raw = raw
        self.granularity = granularity
        self.max_oversize_ratio = max_oversize_ratio
        self.max_oversize_bytes = max_oversize_bytes
        self.max_cached_bytes = max_cached_bytes
        self._free: dict[int, list[Block]] = {}  # size -> blocks of exactly that size
        self._free_sizes: list[int] = []  # sorted sizes that have at least one free block
        self.live_bytes = 0  # handed out and not yet released
        self.cached_bytes = 0  # released and kept in the pool
        self.reserved_bytes = 0  # taken from the raw source: live + cached
        self.reset_stats()

    # -- the two operations ---------------------------------------------------------------
    def allocate(self, nbytes: int) -> Block:
        size = self.round_size(nbytes)
        block = self._take_free(size)
        if block is None:
            self.misses += 1
            block = Block(self.raw.malloc(size), size)
            self.reserved_bytes += size
        else:
            self.hits += 1
        self.live_bytes += block.size
        if self.live_bytes > self.peak_bytes:
            self.peak_bytes = self.live_bytes
        return block

    def release(self, block: Block) -> None:
        self.live_bytes -= block.size
        if self.cached_bytes + block.size > self.max_cached_bytes or self.raw.is_exported(block.handle):
            # Over the cap, or someone outside Zero still reads this memory (a NumPy array
            # the user took with .numpy()): let it go instead of handing it out again.
            self._return_to_raw(block)
            return
        sizes = self._free.get(block.size)
        if sizes is None:
            self._free[block.size] = [block]
            bisect.insort(self._free_sizes, block.size)
        else:
            sizes.append(block)
        self.cached_bytes += block.size

    # -- pool management --------------------------------------------------------------------
    def empty_cache(self) -> int:
        """Return every cached block to the raw source (the book's ``TrimFreePool``);
        gives the number of bytes returned."""
        freed = 0
        for blocks in self._free.values():
            for block in blocks:
                freed += block.size
                self._return_to_raw(block)
        self._free.clear()
        self._free_sizes.clear()
        self.cached_bytes = 0
        return freed

    def round_size(self, nbytes: int) -> int:
        g = self.granularity
        return max(g, (nbytes + g - 1) // g * g)

    def memory_stats(self) -> dict:
        return {
            "live_bytes": self.live_bytes,
            "peak_bytes": self.peak_bytes,
            "cached_bytes": self.cached_bytes,
            "reserved_bytes": self.reserved_bytes,
            "hits": self.hits,
            "misses": self.misses,
        }

    def reset_stats(self) -> None:
        """Zero the counters; live and reserved bytes keep describing what exists."""
        self.hits = 0
        self.misses = 0
        self.peak_bytes = self.live_bytes

    def reset_peak(self) -> None:
        self.peak_bytes = self.live_bytes

    # -- internals ------------------------------------------------------------------------------
    def _take_free(self, size: int) -> Block | None:
        i = bisect.bisect_left(self._free_sizes, size)
        if i == len(self._free_sizes):
            return None
        best = self._free_sizes[i]
        if best > max(size * self.max_oversize_ratio, size + self.max_oversize_bytes):
            return None  # too large: a small tensor must not pin a big block
        blocks = self._free[best]
        block = blocks.pop()
        if not blocks:
            del self._free[best]
            del self._free_sizes[i]
        self.cached_bytes -= block.size
        return block

    def _return_to_raw(self, block: Block) -> None:
        self.reserved_bytes -= block.size
        self.raw.free(block.handle)
