"""The CUDA backend's capture of a graph: CuPy's stream capture (``zero.cuda.CUDAGraph`` below).

While capturing, the backend's work goes to a side stream in capture mode, where the driver
records each kernel (Triton's, cuBLAS's, CuPy's) instead of running it:

    the stream        CuPy's current stream becomes the capture stream, and Triton launches
                      on CuPy's current stream (``triton_driver``), so every kernel lands there
    the memory        CuPy's own temporaries come from the graph's pool too, like storages
                      (``graph_capture.GraphPool``); a new block may need ``cudaMalloc``,
                      which CUDA allows in the relaxed capture mode only, the mode used here
                      whatever PyTorch's ``capture_error_mode`` asks
    Triton            a kernel compiled during the capture would break it (loading a module is
                      not a stream operation): compiling raises CaptureError instead, naming
                      the kernel -- run the captured code once before capturing
    host data         copied through pinned host memory the graph keeps, so the copy is a node
                      of the graph (a pageable copy cannot be captured)
    the collector     off: a finaliser that frees device memory must not run mid-capture

The graph replays on the current stream, ordered with the kernels around it.
"""
from __future__ import annotations

import gc

import numpy as np

from ...errors import CaptureError
from .memory import cupy_malloc_from
from .runtime import cupy


_active: StreamCapture | None = None   # the capture in progress, if any


def capturing() -> bool:
    return _active is not None


def to_device(host: np.ndarray):
    """A kernel's host-made table on the device: a graph constant while capturing, else a copy."""
    return _active.upload(host) if _active is not None else cupy().asarray(host)


def keep_for_graph(value) -> None:
    """Keep ``value`` (device memory a captured kernel reads) alive as long as the graph."""
    if _active is not None:
        _active.constants.append(value)


class StreamCapture:
    def __init__(self, capture):
        global _active
        cp = cupy()
        self.capture = capture
        self.kernels = None   # the device's own table: the stream records what it launches
        self.constants: list = []   # pinned host buffers the graph's copies read
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.previous_stream = cp.cuda.get_current_stream()
        self.previous_allocator = cp.cuda.get_allocator()
        self.collecting = gc.isenabled()
        self.previous_hook = _triton_hook(_refuse_compiling)
        gc.disable()
        cp.cuda.set_allocator(cupy_malloc_from(capture.pool.allocator))
        self.stream.use()
        try:
            self.stream.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
        except BaseException:
            self._restore()
            raise
        _active = self

    def upload(self, array: np.ndarray):
        """Host data as a constant of the graph: pinned memory it keeps, copied by a graph node."""
        cp = cupy()
        pinned = cp.cuda.alloc_pinned_memory(max(array.nbytes, 1))
        np.frombuffer(pinned, array.dtype, array.size)[...] = array.reshape(-1)
        out = cp.empty(array.shape, array.dtype)
        cp.cuda.runtime.memcpyAsync(out.data.ptr, pinned.ptr, array.nbytes, cp.cuda.runtime.memcpyHostToDevice,
                                    self.stream.ptr)
        self.constants.append(pinned)
        return out

    def end(self) -> Replay:
        try:
            graph = self.stream.end_capture()
        finally:
            self._restore()
        return Replay(graph, self.constants)

    def _restore(self) -> None:
        global _active
        _active = None
        cp = cupy()
        self.previous_stream.use()
        cp.cuda.set_allocator(self.previous_allocator)
        _triton_hook(self.previous_hook)
        if self.collecting:
            gc.enable()


class Replay:
    def __init__(self, graph, constants: list):
        self.graph, self.constants = graph, constants

    def replay(self) -> None:
        self.graph.launch()   # on the current stream


def _refuse_compiling(*, fn=None, **_) -> bool:
    name = getattr(fn, "name", "a Triton kernel")
    raise CaptureError(f"Triton kernel {name} would be compiled inside a CUDA graph capture, which breaks it: run "
                       "the captured code once before capturing (warm-up), so every kernel is compiled first")


def _triton_hook(hook):
    """Set Triton's hook called before it compiles a kernel; returns the one it replaces."""
    from triton import knobs

    previous = knobs.runtime.jit_cache_hook
    knobs.runtime.jit_cache_hook = hook
    return previous
