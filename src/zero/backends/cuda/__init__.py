"""The CUDA backend: device memory from a caching allocator, CuPy/cuBLAS/Triton kernels.

The same interface as the CPU backend (``zero.backends.cpu``):

    allocator                  the book's CUDA caching allocator (``memory``)
    lease(nbytes)              the memory of one storage: a ``cupy.cuda.UnownedMemory``
                               whose block returns to the pool when it and every array on
                               it are gone
    array_view(handle, meta)   a CuPy array over a storage, read through the metadata
    new_array(handle, shape, dtype)  the same for a new contiguous tensor from offset 0
    address_of(handle)         the device address of a storage
    to_numpy(array)            device -> host copy (the host waits for the GPU here)
    from_numpy(array)          host -> device copy
    check_device(device)       DeviceError unless CuPy and a GPU are there; sets the backend
                               up on first success
    synchronize()              wait for every queued kernel
    logits_chunk_bytes         how large a chunk of logits linear + cross-entropy makes
    kernels                    the kernel table (the contract's names and signatures, on CuPy
                               arrays); an attribute once ``check_device`` has succeeded
    lender(pool)               ``lease`` from another allocator (a CUDA graph's pool)
    begin_capture(capture)     capture the stream's work as a CUDA graph (``graphs``)

Importing this package needs neither CuPy nor a GPU: ``kernels`` (which imports CuPy
and Triton) is imported by ``check_device``, and the other modules import CuPy inside
functions. The modules below import one way only:

    __init__ (check_device: the one-time set-up) -> memory, triton_driver, kernels -> runtime
"""
from __future__ import annotations

from types import ModuleType

from ...errors import DeviceError
from . import matmul, triton_driver  # matmul: PyTorch's allow_tf32 switch, zero.backends.cuda.matmul
from .memory import address_of, allocator, install_cupy_allocator, lease, lease_from
from .runtime import cupy, unavailable_reason

# the backend interface (matmul and is_built are PyTorch's)
__all__ = ["address_of", "allocator", "array_view", "begin_capture", "check_device", "from_numpy", "kernels",
           "lease", "lender", "logits_chunk_bytes", "new_array", "synchronize", "to_numpy"]

# Linear + cross-entropy works on chunks of rows; on a GPU a larger chunk means larger GEMMs
# (the CPU's 8 MiB, sized for its cache, would give ~20-row products at a 50k vocabulary).
logits_chunk_bytes = 256 << 20

kernels: ModuleType  # zero.backends.cuda.kernels, bound by check_device
_set_up = False       # whether check_device has set the backend up in this process


def check_device(device) -> None:
    """Raise DeviceError when ``device`` cannot be used. On the first success, set the backend
    up: cuda:0 current, CuPy allocating through Zero's pool, Triton launching on CuPy's stream
    with its compiled kernels cached beside Zero's code, and ``kernels`` imported."""
    reason = unavailable_reason(device.index)
    if reason is not None:
        raise DeviceError(f"device {device} is not available: {reason}")
    global kernels, _set_up
    if _set_up:
        return
    cupy().cuda.Device(0).use()
    install_cupy_allocator()
    triton_driver.keep_cache_with_zero()
    triton_driver.install()
    from . import kernels
    _set_up = True


def synchronize() -> None:
    """Wait until every kernel queued on the GPU has finished (a no-op before CUDA is used)."""
    if _set_up:
        cupy().cuda.runtime.deviceSynchronize()


def array_view(handle, meta):
    """The CuPy array a kernel sees: the storage's bytes read with the tensor's shape,
    strides and offset (CuPy counts strides and offsets in bytes)."""
    cp = cupy()
    itemsize = meta.dtype.itemsize
    pointer = cp.cuda.MemoryPointer(handle, meta.offset * itemsize)
    return cp.ndarray(meta.shape, meta.dtype.numpy, memptr=pointer,
                      strides=tuple([s * itemsize for s in meta.strides]))


def new_array(handle, shape: tuple, dtype):
    """``array_view`` of a new contiguous tensor (CuPy's default strides)."""
    cp = cupy()
    return cp.ndarray(shape, dtype, memptr=cp.cuda.MemoryPointer(handle, 0))


def to_numpy(array):
    """A NumPy copy of a CuPy array (waits for the kernels that write it)."""
    return cupy().asnumpy(array)


def from_numpy(array):
    """A CuPy copy of host data; Zero's copy kernel then writes it into a tensor."""
    return cupy().asarray(array)


def is_built() -> bool:
    """PyTorch's ``torch.backends.cuda.is_built()``: whether this install can use a GPU at
    all (CuPy and Triton importable), not whether one is there (``zero.cuda.is_available()``)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("cupy", "triton"))


def lender(pool):
    """``lease`` drawing on ``pool`` instead of the device's allocator (a CUDA graph's pool)."""
    return lambda nbytes: lease_from(pool, nbytes)


def begin_capture(capture):
    """Capture the work queued from now on as a CUDA graph (``graphs.StreamCapture``)."""
    from .graphs import StreamCapture

    return StreamCapture(capture)
