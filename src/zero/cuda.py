"""The CUDA device seen from user code: ``zero.cuda.is_available()``, memory statistics.

    import zero
    if zero.cuda.is_available():
        x = zero.randn(1024, 1024, device="cuda")
        y = (x @ x).sum()            # queued on the GPU; the host does not wait ...
        print(y.item())              # ... until it reads a value
        print(zero.cuda.memory_stats()["peak_bytes"])

Nothing here needs CuPy or a GPU to import: on a machine without them
``is_available()`` is False, ``device_count()`` 0, and the statistics are zeros.
CUDA tensors use the book's caching allocator (``zero.backends.cuda.memory``):
requests rounded up to 512 bytes, freed blocks kept in per-size buckets, and
``trim_free_pool()`` (the book's ``TrimFreePool``) to give the cached blocks back to
the device when the shapes change (from training to sampling, say).
"""
from __future__ import annotations

from .backends import cuda as _backend
from .backends.cuda import memory as _memory
from .backends.cuda import runtime as _runtime
from .backends.device import Device as _Device
from .cuda_graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing
from .errors import AutogradError, CaptureError, DeviceError
from .graphed_callables import make_graphed_callables
from .ops.index_checks import set_eager_checks
from .random import manual_seed as _seed_default_generator

__all__ = ["is_available", "device_count", "is_bf16_supported", "synchronize", "Event", "memory_stats",
           "trim_free_pool", "empty_cache", "reset_peak_memory_stats", "max_memory_allocated", "as_cupy",
           "set_eager_checks", "manual_seed", "manual_seed_all", "current_device", "CUDAGraph", "graph",
           "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]


def is_available() -> bool:
    """Whether CuPy is installed and sees at least one GPU."""
    return _runtime.is_available()


def device_count() -> int:
    return _runtime.device_count()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the GPU computes in bfloat16 (PyTorch's name): natively from compute capability
    8.0 (Ampere); on an older GPU CuPy's bfloat16 computes through float32, which counts only
    with ``including_emulation``. False without a GPU."""
    if not is_available():
        return False
    return _runtime.cupy().cuda.runtime.getDeviceProperties(0)["major"] >= 8 or including_emulation


def manual_seed(seed: int) -> None:
    """Seed the random numbers of CUDA tensors. Zero draws every random number from one
    generator on the host (so a seed gives the same numbers on every device): this seeds
    it, as ``zero.manual_seed`` does."""
    _seed_default_generator(seed)


manual_seed_all = manual_seed  # one generator serves every GPU


def current_device() -> int:
    """The index of the GPU Zero uses (its CUDA backend uses one: cuda:0)."""
    return 0


def synchronize() -> None:
    """Wait for every kernel queued on the GPU (for timing; values are read without it)."""
    if is_current_stream_capturing():
        raise CaptureError("zero.cuda.synchronize() while a CUDA graph is being captured: a graph cannot wait "
                           "for itself; synchronize after the capture")
    _backend.synchronize()


class Event:
    """A marker in the GPU's queue of work (PyTorch's ``torch.cuda.Event``).

    ``record()`` puts it in the queue behind the kernels launched so far; it completes when
    they have run. ``start.elapsed_time(end)`` is the GPU's time between two recorded events,
    in milliseconds, what the host's clock cannot see while kernels run asynchronously:

        start, end = zero.cuda.Event(enable_timing=True), zero.cuda.Event(enable_timing=True)
        start.record(); y = x @ x; end.record()
        end.synchronize(); print(start.elapsed_time(end))
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        _backend.check_device(_Device("cuda"))
        self.enable_timing = enable_timing
        self._event = _runtime.cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                                 interprocess=interprocess)
        self._recorded = False

    def record(self) -> None:
        """Queue the event on the stream Zero's kernels run on."""
        self._event.record()
        self._recorded = True

    def query(self) -> bool:
        """Whether the work queued before ``record()`` has finished."""
        return self._event.done

    def synchronize(self) -> None:
        """Wait until the work queued before ``record()`` has finished."""
        self._event.synchronize()

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds of GPU time from this event to ``end`` (both recorded, with timing)."""
        for name, event in (("this event", self), ("end", end)):
            if not event.enable_timing:
                raise DeviceError(f"Event.elapsed_time: {name} was created without enable_timing=True")
            if not event._recorded:
                raise DeviceError(f"Event.elapsed_time: {name} was never recorded; call record() first")
        end.synchronize()
        return _runtime.cupy().cuda.get_elapsed_time(self._event, end._event)


def memory_stats() -> dict:
    """Bytes held by tensors and CuPy temporaries (``live_bytes``) and their high-water mark
    (``peak_bytes``), bytes cached for reuse (``cached_bytes``), bytes taken from the device
    (``reserved_bytes`` = live + cached), and the pool's ``hits`` and ``misses``."""
    return _memory.allocator.memory_stats()


def trim_free_pool() -> int:
    """Return every cached block to the device (the book's ``TrimFreePool``); gives the
    number of bytes returned. Blocks in use are untouched."""
    return _memory.allocator.empty_cache()


empty_cache = trim_free_pool  # PyTorch's name


def reset_peak_memory_stats() -> None:
    """Start the peak over from what is live now."""
    _memory.allocator.reset_peak()


def max_memory_allocated() -> int:
    """The peak of ``live_bytes`` since start-up or the last reset (PyTorch's name)."""
    return _memory.allocator.memory_stats()["peak_bytes"]


def as_cupy(tensor):
    """A CuPy array sharing ``tensor``'s device memory (PyTorch's ``__cuda_array_interface__``
    use). While the array lives, the memory is not reused for another tensor."""
    if tensor.device.type != "cuda":
        raise DeviceError(f"as_cupy: the tensor is on {tensor.device}; move it with .to('cuda') first")
    if tensor.requires_grad:
        raise AutogradError("as_cupy() of a tensor that requires grad; use zero.cuda.as_cupy(tensor.detach())")
    return tensor._array
