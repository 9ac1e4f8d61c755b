"""Where tensors live and how they are computed: one package per device.

    device.py          Device: parses "cpu" / "cuda:0" and finds the device's backend
    kernel_contract    the kernels every device offers, with their signatures (``Kernels``)
    array_kernels/     the kernels written once for NumPy and CuPy: functions of the array module
    caching_allocator  the allocation policy every device shares (the book's TensorContext)
    cpu/, cuda/        a backend each, with the same interface:

        allocator                  a CachingAllocator (statistics, empty_cache)
        lease(nbytes)              the memory of one storage; its block returns to the pool
                                   when it and every array built on it are gone
        array_view(handle, meta)   the array a kernel sees for a tensor
        new_array(handle, shape, dtype)  the same for a new contiguous tensor (the fast path)
        address_of(handle)         the address of a storage
        to_numpy / from_numpy      host copies
        check_device(device)       DeviceError unless usable; sets the device up once
        synchronize()              wait for queued work (a no-op on the CPU)
        kernels                    the device's kernel table: every kernel of the contract, by
                                   name (``cpu/kernels/__init__.py``, ``cuda/kernels/__init__.py``)

    An op calls ``device.kernels.add(a, b, out)``; the table says which function that is
    (a shared one bound to NumPy or CuPy, or the device's own), and on the CPU whether it
    runs on both cores when large (``cpu/parallel.py``, the one place that decides).

    cuda.matmul                PyTorch's ``torch.backends.cuda.matmul`` switch
                               (``zero.backends.cuda.matmul.allow_tf32 = True``); PyTorch's
                               other ``torch.backends`` names (cudnn, mps) are in zero.compat
"""
from . import cuda  # zero.backends.cuda.matmul.allow_tf32 = True
