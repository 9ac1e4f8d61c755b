"""Device memory for the CUDA allocator (the book's ``CUDATensorContext``), lent out as leases.

``cudaMalloc`` is slow and synchronises with the driver, so device memory goes
through the shared ``CachingAllocator`` policy with the book's CUDA settings:
every request is rounded up to 512 bytes and a free block serves only a
request of exactly its rounded size (per-size buckets, no oversize). Cached
blocks stay reserved until ``trim_free_pool()`` (the book's ``TrimFreePool``)
hands them back with ``cudaFree``, as sampling does between training phases.

Leases. A storage's memory is a lease on a block: ``lease(nbytes)`` returns a
``cupy.cuda.UnownedMemory`` over the block whose ``owner`` is a ``_Lease``. Every CuPy
array built on the storage (``array_view``: a ``MemoryPointer`` into that memory object)
holds the memory object, which holds the ``_Lease``; when the storage and the last of
those arrays are gone, the ``_Lease`` is collected and puts the block back in its
bucket. So a block that a CuPy array still uses -- a tensor view, one the user took with
``zero.cuda.as_cupy``, a temporary's array a kernel still reads -- is never handed out
again under it, and ``live_bytes`` counts it for as long as it lives.

The same leases serve CuPy's own allocations: ``install_cupy_allocator`` makes the
temporaries of CuPy's routines (reductions, indexing, cuBLAS outputs) leases from the
same pool, so they are counted in the statistics and reuse the same buckets.

A released block may be handed out again at once, before the GPU has run the kernels
queued on it: every kernel runs on one stream, which keeps them in order.

Nothing here imports CuPy at import time: tests run the policy against a fake
source, and ``zero.cuda.memory_stats()`` works on machines without CUDA.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ...errors import DeviceError
from ..caching_allocator import Block, CachingAllocator
from .runtime import cupy

GRANULARITY = 512  # the book: requests rounded up to 512 bytes, one bucket per rounded size
CUDA_ERROR_MEMORY_ALLOCATION = 2  # cudaErrorMemoryAllocation


class DeviceMemory:
    """The raw source: ``malloc`` gives a device address from ``cudaMalloc``, ``free`` calls ``cudaFree``.

    When ``cudaMalloc`` finds no memory, ``malloc`` raises MemoryError: the pool then returns
    its cached blocks and tries once more before it reports (``CachingAllocator``).
    """

    def malloc(self, nbytes: int) -> int:
        runtime = cupy().cuda.runtime
        try:
            return runtime.malloc(nbytes)
        except runtime.CUDARuntimeError as e:
            if getattr(e, "status", None) == CUDA_ERROR_MEMORY_ALLOCATION:
                raise MemoryError(f"cudaMalloc of {nbytes} bytes: {e}") from None
            raise DeviceError(f"cudaMalloc of {nbytes} bytes failed: {e}") from None

    def free(self, address: int) -> None:
        cupy().cuda.runtime.free(address)


def _env_bytes(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def make_allocator(raw) -> CachingAllocator:
    """The book's CUDA policy over any raw source (tests pass a fake one)."""
    return CachingAllocator(
        raw,
        granularity=GRANULARITY,
        max_oversize_ratio=1.0,  # exact-size buckets: a block serves only its own rounded size
        max_oversize_bytes=0,
        # Kept until trim_free_pool(), as in the book; ZERO_CUDA_CACHE_BYTES caps it.
        max_cached_bytes=_env_bytes("ZERO_CUDA_CACHE_BYTES", 1 << 62),
        name="CUDA",
    )


raw_memory = DeviceMemory()
allocator = make_allocator(raw_memory)


# -- leases -------------------------------------------------------------------------------------


class _Lease:
    """The owner of a lent block: puts it back in the pool when CuPy drops the memory object holding it."""

    __slots__ = ("block", "pool")

    def __init__(self, pool: CachingAllocator, block: Block):
        self.pool = pool
        self.block = block

    def __del__(self, _finalizing=sys.is_finalizing) -> None:
        if not _finalizing():  # at interpreter shutdown the pool may be gone, and it no longer matters
            self.pool.release(self.block)


def lease_from(pool: CachingAllocator, nbytes: int, device_id: int = 0):
    """A ``cupy.cuda.UnownedMemory`` of ``nbytes`` over a block of ``pool``, lent until the
    memory object and every array on it are gone."""
    block = pool.allocate(nbytes)
    return cupy().cuda.UnownedMemory(block.handle, nbytes, _Lease(pool, block), device_id)


def lease(nbytes: int):
    """The memory of one storage, from the CUDA pool (see the module docstring)."""
    return lease_from(allocator, nbytes)


def cupy_malloc_from(pool: CachingAllocator, device_id: int = 0) -> Callable[[int], object]:
    """A function for ``cupy.cuda.set_allocator``: CuPy's memory as leases from ``pool``."""
    memory_pointer = cupy().cuda.MemoryPointer

    def malloc(nbytes: int):
        return memory_pointer(lease_from(pool, nbytes, device_id), 0)

    return malloc


def install_cupy_allocator() -> None:
    cupy().cuda.set_allocator(cupy_malloc_from(allocator))


def address_of(handle) -> int:
    return handle.ptr
