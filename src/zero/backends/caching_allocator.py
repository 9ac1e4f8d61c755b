"""The caching allocator behind every device (the book's ``TensorContext``).

A training step allocates and frees the same sizes over and over; asking the
system (or ``cudaMalloc``) each time costs more than many small ops. So a
released block is kept in a free pool and handed out again:

    allocate(n) -> round n up to the granularity -> best fitting free block?
                       yes, and not too much larger: reuse it (a hit)
                       no: ask the raw source (a miss)
    release(b)  -> back into the free pool, unless the pool would exceed its cap

The policy lives here, once; the raw source of memory is a small object with
``malloc(nbytes) -> handle`` and ``free(handle)`` (``RawMemory``). The CPU uses
NumPy byte buffers (``CPUTensorContext`` in the book: 64-byte aligned, best fit
with a cap on oversize); CUDA uses device pointers (``CUDATensorContext``:
512-byte rounding, exact-size buckets); tests use a fake source.

Who calls ``release``: each backend lends blocks out as *leases* (``lease(nbytes)``
in ``zero.backends.cpu`` and ``zero.backends.cuda``) and releases a block when the
lease and every array built on it are gone. So a block in the free pool is never
read by anyone, and ``live_bytes`` counts exactly the memory some array can still
reach; the policy here needs no way to ask whether a block is still in use.

Running out. A raw source says it has no memory by raising ``MemoryError``. The pool may
be holding free blocks of other sizes that are all that stands in the way (a 1.6 GB
block cached, a 2 GB one asked for), and tensors that only a reference cycle still holds
free their blocks only when Python's garbage collector runs: so the allocator collects,
returns every cached block to the raw source, and tries once more. Only then does it
report, with ``zero.errors.OutOfMemoryError`` (a MemoryError): the size asked for, what
tensors hold, and what the pool had cached.
"""
from __future__ import annotations

import bisect
import gc
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import OutOfMemoryError, human_bytes


class RawMemory(Protocol):
    """Where the pool's blocks come from and go back to (``cudaMalloc``/``cudaFree``, NumPy buffers).
    ``malloc`` raises MemoryError when there is no memory to give."""

    def malloc(self, nbytes: int) -> Any: ...

    def free(self, handle: Any) -> None: ...


@dataclass(eq=False)
class Block:
    """A piece of raw memory of ``size`` bytes; ``handle`` is what the raw source gave."""

    handle: Any  # a PoolBuffer on the CPU, a device address on CUDA, anything in tests
    size: int


class CachingAllocator:
    def __init__(self, raw: RawMemory, granularity: int, max_oversize_ratio: float, max_oversize_bytes: int,
                 max_cached_bytes: int, name: str = "memory"):
        """``granularity``: every request is rounded up to a multiple of it.
        A free block of size s serves a request of n bytes only if
        ``s <= max(n * max_oversize_ratio, n + max_oversize_bytes)``; a ratio of 1 and
        0 bytes gives the exact-size buckets of the book's CUDA allocator.
        ``max_cached_bytes`` caps how much released memory the pool keeps. ``name`` says
        whose memory it is in errors ("CPU", "CUDA")."""
        self.raw = raw
        self.name = name
        self.granularity = granularity
        self.max_oversize_ratio = max_oversize_ratio
        self.max_oversize_bytes = max_oversize_bytes
        self.max_cached_bytes = max_cached_bytes
        self._free: dict[int, list[Block]] = {}  # size -> free blocks of exactly that size (maybe none)
        self._free_sizes: list[int] = []  # sorted sizes that have a bucket (empty or not)
        self.live_bytes = 0  # handed out and not yet released
        self.cached_bytes = 0  # released and kept in the pool
        self.reserved_bytes = 0  # taken from the raw source: live + cached
        self.peak_bytes = self.hits = self.misses = 0
        self.reset_stats()

    # -- the two operations ---------------------------------------------------------------
    def allocate(self, nbytes: int) -> Block:
        granularity = self.granularity
        size = -(-nbytes // granularity) * granularity or granularity   # round_size, inline: the hot path
        blocks = self._free.get(size)
        if blocks:  # an exact fit is the best, and the hot path: no search, no sorted list
            block = blocks.pop()
            self.cached_bytes -= size
            self.hits += 1
        else:
            found = self._take_best_fit(size)
            if found is None:
                self.misses += 1
                found = Block(self._malloc(size), size)
                self.reserved_bytes += size
            else:
                self.hits += 1
            block = found
        live = self.live_bytes = self.live_bytes + block.size
        if live > self.peak_bytes:
            self.peak_bytes = live
        return block

    def release(self, block: Block) -> None:
        """Take back a block nobody reads any more (its lease has ended)."""
        size = block.size
        self.live_bytes -= size
        cached = self.cached_bytes + size
        if cached > self.max_cached_bytes:
            self._return_to_raw(block)  # the pool is full: give this one back
            return
        blocks = self._free.get(size)
        if blocks is None:
            self._free[size] = [block]
            bisect.insort(self._free_sizes, size)
        else:
            blocks.append(block)
        self.cached_bytes = cached

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
        return -(-nbytes // g) * g or g

    def memory_stats(self) -> dict[str, int]:
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
    def _malloc(self, size: int) -> Any:
        """A new block from the raw source; when it has no memory, collect garbage, return the
        cached blocks and try once more before reporting (module docstring)."""
        try:
            return self.raw.malloc(size)
        except (MemoryError, OverflowError):
            pass
        gc.collect()  # tensors only a reference cycle held give their blocks back to the pool ...
        cached = self.empty_cache()  # ... and the pool gives every cached block back
        try:
            return self.raw.malloc(size)
        except (MemoryError, OverflowError):
            pass
        returned = (f", and the {human_bytes(cached)} the pool had cached went back before a second try"
                    if cached else "")
        raise OutOfMemoryError(
            f"{self.name} out of memory: cannot allocate {human_bytes(size)} ({size:,} bytes); tensors hold "
            f"{human_bytes(self.live_bytes)}{returned}: free some, or use smaller batches or a smaller model",
            requested=size, live=self.live_bytes, cached=cached) from None

    def _take_best_fit(self, size: int) -> Block | None:
        """The smallest free block larger than ``size`` that is not too large, if any (the
        buckets between may be empty: a bucket stays, for the next release of its size)."""
        sizes, limit = self._free_sizes, max(size * self.max_oversize_ratio, size + self.max_oversize_bytes)
        for i in range(bisect.bisect_right(sizes, size), len(sizes)):
            best = sizes[i]
            if best > limit:
                return None  # too large: a small tensor must not pin a big block
            blocks = self._free[best]
            if blocks:
                self.cached_bytes -= best
                return blocks.pop()
        return None

    def _return_to_raw(self, block: Block) -> None:
        self.reserved_bytes -= block.size
        self.raw.free(block.handle)
