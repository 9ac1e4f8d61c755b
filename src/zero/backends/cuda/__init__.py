"""The CUDA backend: device memory from a caching allocator, CuPy/cuBLAS/Triton kernels.

The same interface as the CPU backend (``zero.backends.cpu``):

    allocator                  the book's CUDA caching allocator (``memory``)
    lease(nbytes)              the memory of one storage: a ``cupy.cuda.UnownedMemory``
                               whose block returns to the pool when it and every array on
                               it are gone
    kernels                    the CPU kernels' names and signatures, on CuPy arrays
    array_view(handle, meta)   a CuPy array over a storage, read through the metadata
    address_of(handle)         the device address of a storage
    to_numpy(array)            device -> host copy (the host waits for the GPU here)
    from_numpy(array)          host -> device copy
    check_device(device)       DeviceError unless CuPy and a GPU are there
    synchronize()              wait for every queued kernel

Importing this package needs neither CuPy nor a GPU (``kernels`` is imported on
first use, and CuPy inside functions); ``Device("cuda").backend`` calls
``check_device``, which refuses clearly when either is missing.
"""
from __future__ import annotations

from .memory import address_of, allocator, lease
from .runtime import cupy, initialise, synchronize, unavailable_reason

__all__ = ["allocator", "lease", "kernels", "array_view", "address_of", "to_numpy", "from_numpy", "check_device",
           "synchronize", "logits_chunk_bytes"]

# Linear + cross-entropy works on chunks of rows; on a GPU a larger chunk means larger GEMMs
# (the CPU's 8 MiB, sized for its cache, would give ~20-row products at a 50k vocabulary).
logits_chunk_bytes = 256 << 20


def check_device(device) -> None:
    """Raise DeviceError when ``device`` cannot be used; set the backend up on first success."""
    from ...errors import DeviceError  # noqa: PLC0415

    reason = unavailable_reason(device.index)
    if reason is not None:
        raise DeviceError(f"device {device} is not available: {reason}")
    initialise()


def array_view(handle, meta):
    """The CuPy array a kernel sees: the storage's bytes read with the tensor's shape,
    strides and offset (CuPy counts strides and offsets in bytes)."""
    cp = cupy()
    itemsize = meta.dtype.itemsize
    pointer = cp.cuda.MemoryPointer(handle, meta.offset * itemsize)
    return cp.ndarray(meta.shape, meta.dtype.numpy, memptr=pointer,
                      strides=tuple(s * itemsize for s in meta.strides))


def to_numpy(array):
    """A NumPy copy of a CuPy array (waits for the kernels that write it)."""
    return cupy().asnumpy(array)


def from_numpy(array):
    """A CuPy copy of host data; Zero's copy kernel then writes it into a tensor."""
    return cupy().asarray(array)


def __getattr__(name: str):
    # ``kernels`` imports CuPy and Triton: only when a CUDA op first runs.
    if name == "kernels":
        from . import kernels  # noqa: PLC0415

        return kernels
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
