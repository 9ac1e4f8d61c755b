"""Host memory for the CPU: 64-byte aligned NumPy buffers, pooled, lent out as leases.

The pool. ``HostMemory`` is the caching allocator's raw source: a block's handle is a
64-byte aligned slice of a NumPy byte buffer, of type ``PoolBuffer``; a block of 4 MiB
or more is a memory mapping of its own (below, "Large blocks"). The allocator
(``allocator``, the book's ``CPUTensorContext``) keeps released blocks and hands them
out again, best fit within 25 % or 4 KiB of the request.

Leases. A storage's memory is a lease on a block: ``lease(nbytes)`` takes a block and
returns its *anchor*, a plain ``uint8`` array over the whole block. Every array
a kernel or a user sees is made from the anchor (``np.ndarray(..., buffer=anchor)`` in
``array_view``), and NumPy then records the anchor as the ``base`` of that array and of
every view of it -- transposes, reshapes, slices, ``Tensor.numpy()`` -- because NumPy
collapses a chain of bases only through arrays of the same type: the anchor is a plain
ndarray and the buffer below it a ``PoolBuffer``, so the chain stops at the anchor.
The anchor therefore lives exactly as long as the last array over its block, and a weak
reference to it returns the block to the pool when it dies. A NumPy array the user
took with ``.numpy()``, or the array of a temporary that a kernel is still reading,
keeps its block out of the pool for as long as it lives, and ``live_bytes`` counts it;
nothing asks Python how many references something has.

(Arrays made by ``np.lib.stride_tricks.as_strided`` record another base, but hold the
anchor all the same: what matters is that nothing reaches the block without it.)

Large blocks. From 4 MiB, ``np.empty`` asks Linux for transparent huge pages
(``madvise(MADV_HUGEPAGE)``), and where the kernel is set to defragment for such requests
(``/sys/kernel/mm/transparent_hugepage/defrag`` = ``madvise``, a common default) the
first touch of each 2 MiB page may wait while the kernel compacts memory to find one.
That lands in a training run's first step, which touches every block for the first
time. So a large block is an anonymous private mapping of its own (``mmap``), with no
such request: 4 KiB pages, or huge pages where the system gives them unasked
(``enabled`` = ``always``), as PyTorch's allocator leaves it by default: the first step
of a training run is faster so, and the steps after it are unchanged. Measured by
``benchmarks/train_step.py`` and ``investigations/step_ab.py``; figures in benchmarks/journal/.
"""
from __future__ import annotations

import mmap
import os
import sys
import threading
import weakref
from typing import cast

import numpy as np

from ..caching_allocator import Block, CachingAllocator

ALIGNMENT = 64  # a cache line, and what AVX-512 loads like
LARGE_BLOCK = 1 << 22  # from here NumPy would ask for huge pages, and a block is a mapping of its own
_PRIVATE_MAPPING = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)


class PoolBuffer(np.ndarray):
    """The type of the pool's raw buffers. It is a subclass only so that NumPy's collapsing
    of view bases stops at a lease's anchor above it (see the module docstring)."""


class HostMemory:
    """The raw source: a handle is a 64-byte aligned ``PoolBuffer`` slice of a larger buffer,
    or, from LARGE_BLOCK bytes, a page-aligned ``PoolBuffer`` over a mapping of its own."""

    def malloc(self, nbytes: int) -> PoolBuffer:
        """Raises MemoryError when the system has no memory to give (the allocator retries)."""
        if nbytes >= LARGE_BLOCK and hasattr(mmap, "MAP_ANONYMOUS"):
            # Built on the mapping itself, so that no plain array sits below the anchor for
            # NumPy to collapse views onto; unmapped when the last array over it is gone.
            try:
                mapping = mmap.mmap(-1, nbytes, flags=_PRIVATE_MAPPING)
            except OSError as e:  # ENOMEM: the allocator's signal to empty its pool and retry
                raise MemoryError(f"mmap of {nbytes} bytes: {e.strerror}") from None
            return PoolBuffer((nbytes,), np.uint8, mapping)
        raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8).view(PoolBuffer)
        start = (-raw.ctypes.data) % ALIGNMENT
        return cast(PoolBuffer, raw[start:start + nbytes])

    def free(self, handle: PoolBuffer) -> None:
        """Nothing to do: NumPy frees the buffer (or Python unmaps the mapping) once the pool
        has dropped the handle."""


class _Lease(weakref.ref):
    """A weak reference to a lease's anchor, remembering the block behind it. Hashed by
    identity (a weak reference to an array would hash the array, which cannot be hashed)."""

    __slots__ = ("block",)
    block: Block
    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other


class HostLeases:
    """Lends ``pool``'s blocks as anchors and takes each block back when its anchor dies."""

    def __init__(self, pool: CachingAllocator):
        self.pool = pool
        active: set[_Lease] = set()  # the weak references, kept alive until their anchor dies
        allocate, release, plain = pool.allocate, pool.release, np.ndarray
        # Kernels run on the pool's threads (``threads.py``), and an array's last reference
        # may die on any of them. Reentrant: the garbage collector may end a lease inside
        # an allocation on the same thread.
        lock = threading.RLock()

        def ended(reference: _Lease, _finalizing=sys.is_finalizing) -> None:
            if not _finalizing():  # at interpreter shutdown the pool may be half gone, and it no longer matters
                with lock:
                    active.remove(reference)
                    release(reference.block)

        def lease(nbytes: int) -> np.ndarray:
            """The anchor of a new lease of at least ``nbytes`` bytes, 64-byte aligned: a plain
            ``uint8`` array over the whole block; build the storage's arrays on it."""
            with lock:
                block = allocate(nbytes)
            anchor = block.handle.view(plain)  # a view of another type: its base is the PoolBuffer
            reference = _Lease(anchor, ended)
            reference.block = block
            active.add(reference)
            return anchor

        self.lease = lease  # a closure: a storage pays for no attribute lookups
        self._active = active

    def active(self) -> int:
        """How many leases have an array alive."""
        return len(self._active)


def _env_bytes(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


allocator = CachingAllocator(
    HostMemory(),
    granularity=ALIGNMENT,
    max_oversize_ratio=1.25,  # a free block may be at most 25% larger than the request ...
    max_oversize_bytes=4096,  # ... or 4 KiB larger, whichever allows more
    max_cached_bytes=_env_bytes("ZERO_CPU_CACHE_BYTES", 4 << 30),
    name="CPU",
)
leases = HostLeases(allocator)
lease = leases.lease
