"""Device memory for the CUDA allocator (the book's ``CUDATensorContext``).

``cudaMalloc`` is slow and synchronises with the driver, so device memory goes
through the shared ``CachingAllocator`` policy with the book's CUDA settings:
every request is rounded up to 512 bytes and a free block serves only a
request of exactly its rounded size (per-size buckets, no oversize). Cached
blocks stay reserved until ``trim_free_pool()`` (the book's ``TrimFreePool``)
hands them back, as sampling does between training phases.

The raw source below allocates with ``cudaMalloc`` through CuPy's runtime API.
A handle is a ``cupy.cuda.UnownedMemory`` over the allocation: CuPy arrays
(tensor views) built on it keep it alive, and ``cudaFree`` runs when the last
of them goes, so a block that a CuPy array outside Zero still uses (one the
user took with ``zero.cuda.as_cupy``) is never freed or handed out again under
it: ``is_exported`` sees the extra reference and the pool lets the block go.

The same allocator is installed as CuPy's allocator, so the temporaries that
CuPy's own routines make (reductions, indexing, cuBLAS outputs) are counted in
the statistics and reuse the same buckets; such a block returns to the pool
when CuPy drops its last array on it.

Nothing here imports CuPy at import time: tests run the policy against a fake
source, and ``zero.cuda.memory_stats()`` works on machines without CUDA.
"""
from __future__ import annotations

import os
import sys

from ...errors import DeviceError
from ..caching_allocator import Block, CachingAllocator
from .runtime import cupy

GRANULARITY = 512  # the book: requests rounded up to 512 bytes, one bucket per rounded size
CUDA_ERROR_MEMORY_ALLOCATION = 2  # cudaErrorMemoryAllocation

# References to a handle when only its Block holds it, counted inside is_exported:
# the Block's attribute, is_exported's parameter and getrefcount's own argument.
_UNSHARED_REFERENCES = 3


class _Allocation:
    """Bytes from ``cudaMalloc``, given back with ``cudaFree`` when the last reference goes."""

    __slots__ = ("ptr", "free")

    def __init__(self, ptr: int, free):
        self.ptr = ptr
        self.free = free

    def __del__(self):
        try:
            self.free(self.ptr)
        except Exception:  # interpreter shutdown, or the context is already gone
            pass


class DeviceMemory:
    """The raw source: ``malloc`` gives a ``cupy.cuda.UnownedMemory`` handle.

    ``on_out_of_memory`` (set to the pool's trim) is called once when ``cudaMalloc``
    fails, before a second try: cached blocks of other sizes may be all that is in the way.
    """

    def __init__(self, device_id: int = 0):
        self.device_id = device_id
        self.on_out_of_memory = None

    def malloc(self, nbytes: int):
        cp = cupy()
        runtime = cp.cuda.runtime
        try:
            ptr = runtime.malloc(nbytes)
        except runtime.CUDARuntimeError as e:
            if getattr(e, "status", None) != CUDA_ERROR_MEMORY_ALLOCATION or self.on_out_of_memory is None:
                raise DeviceError(f"cudaMalloc of {nbytes} bytes failed: {e}") from None
            self.on_out_of_memory()
            try:
                ptr = runtime.malloc(nbytes)
            except runtime.CUDARuntimeError:
                stats = allocator.memory_stats()
                raise DeviceError(
                    f"CUDA out of memory: could not allocate {_mib(nbytes)} even after returning the "
                    f"free pool to the device; tensors hold {_mib(stats['live_bytes'])} "
                    f"(peak {_mib(stats['peak_bytes'])}). Use a smaller batch or model.") from None
        return cp.cuda.UnownedMemory(ptr, nbytes, _Allocation(ptr, runtime.free), self.device_id)

    def free(self, handle) -> None:
        """Nothing to do: ``cudaFree`` runs when the last array on the handle goes."""

    def is_exported(self, handle) -> bool:
        return sys.getrefcount(handle) > _UNSHARED_REFERENCES


def _mib(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):.1f} MiB"


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
    )


raw_memory = DeviceMemory()
allocator = make_allocator(raw_memory)
raw_memory.on_out_of_memory = allocator.empty_cache


# -- CuPy's allocator ---------------------------------------------------------------------------


class _Lease:
    """A block lent to CuPy: back to the pool when CuPy frees the memory object holding this."""

    __slots__ = ("pool", "block")

    def __init__(self, pool: CachingAllocator, block: Block):
        self.pool = pool
        self.block = block

    def __del__(self):
        try:
            self.pool.release(self.block)
        except Exception:  # interpreter shutdown
            pass


def cupy_malloc_from(pool: CachingAllocator, device_id: int = 0):
    """A function for ``cupy.cuda.set_allocator`` that takes CuPy's memory from ``pool``."""
    cp = cupy()

    def malloc(nbytes: int):
        block = pool.allocate(nbytes)
        memory = cp.cuda.UnownedMemory(address_of(block.handle), block.size, _Lease(pool, block), device_id)
        return cp.cuda.MemoryPointer(memory, 0)

    return malloc


def install_cupy_allocator() -> None:
    cupy().cuda.set_allocator(cupy_malloc_from(allocator))


def address_of(handle) -> int:
    return handle.ptr
