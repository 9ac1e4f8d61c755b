"""CUDA graphs with PyTorch's names: ``zero.cuda.CUDAGraph``, ``zero.cuda.graph``, ``graph_pool_handle``.

A training step is a few hundred kernels; issuing them one by one from Python costs the host
about as long as the GPU needs to run them. Captured once as a graph, the step is replayed
with one call, the host free after microseconds:

    model, optimizer = ..., zero.optim.AdamW(model.parameters(), lr=zero.tensor(1e-3, device="cuda"),
                                             capturable=True)
    static_x, static_y = zero.zeros(B, T, dtype=zero.long, device="cuda"), ...
    for _ in range(3):                      # warm up: every kernel compiled, every table built
        step(static_x, static_y)
    g = zero.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with zero.cuda.graph(g):                # recorded, not run
        static_loss = step(static_x, static_y)
    for x, y in batches:
        static_x.copy_(x); static_y.copy_(y)   # new data into the addresses the graph reads
        g.replay()                             # the whole step
        print(static_loss.item())              # read after the replay, not inside it

What a graph holds and what it cannot are in ``zero.backends.graph_capture`` (the memory pool,
reads to the host, index checks, dropout's seeds); the recording is the backend's (a CUDA
stream capture; on machines without a GPU, where the CPU plays "cuda" in the tests, a tape of
kernel calls). Differences from PyTorch: Zero runs on one stream, so ``graph(stream=...)`` is
refused, and the capture mode is always CUDA's relaxed one (Zero's pool may call
``cudaMalloc`` during a capture); ``capture_error_mode`` is checked, as PyTorch checks it.
"""
from __future__ import annotations

import gc

from .backends import graph_capture
from .backends.device import Device
from .backends.graph_capture import CapturedGraph, GraphPool
from .errors import CaptureError

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing"]

CAPTURE_ERROR_MODES = ("global", "thread_local", "relaxed")


def _cuda() -> Device:
    """cuda:0, checked to be usable (DeviceError saying why not, otherwise)."""
    device = Device("cuda")
    device.backend  # noqa: B018 (the check)
    return device


def graph_pool_handle() -> GraphPool:
    """A memory pool to share between graphs: ``graph(g, pool=handle)`` for each (PyTorch's name)."""
    return GraphPool(_cuda())


def is_current_stream_capturing() -> bool:
    """Whether a CUDA graph is being captured now."""
    return Device("cuda")._capture is not None


class CUDAGraph:
    """A captured stretch of GPU work (PyTorch's ``torch.cuda.CUDAGraph``):
    ``capture_begin()`` ... ``capture_end()`` records it, ``replay()`` runs it again,
    ``reset()`` lets it and its memory go. Prefer the ``zero.cuda.graph(g)`` block."""

    def __init__(self, keep_graph: bool = False):
        self.keep_graph = keep_graph   # PyTorch's: keep the graph to instantiate later (Zero's is ready at once)
        self._pool: GraphPool | None = None
        self._capture: graph_capture.Capture | None = None
        self._graph: CapturedGraph | None = None

    def capture_begin(self, pool: GraphPool | None = None, capture_error_mode: str = "global") -> None:
        """Start recording the GPU's work into this graph (into ``pool``'s memory when given)."""
        if capture_error_mode not in CAPTURE_ERROR_MODES:
            raise ValueError(f"capture_error_mode must be one of {', '.join(CAPTURE_ERROR_MODES)}, "
                             f"got {capture_error_mode!r}")
        if self._capture is not None or self._graph is not None:
            raise CaptureError("this CUDAGraph has already captured; reset() it before capturing again")
        if pool is not None and not isinstance(pool, GraphPool):
            raise TypeError(f"pool must come from zero.cuda.graph_pool_handle() or another graph's pool(), "
                            f"got {type(pool).__name__}")
        device = _cuda()
        self._pool = pool if pool is not None else GraphPool(device)
        self._capture = graph_capture.begin(device, self._pool)

    def capture_end(self) -> None:
        """Stop recording; the graph is ready to replay."""
        if self._capture is None:
            raise CaptureError("capture_end() without capture_begin()")
        capture, self._capture = self._capture, None
        self._graph = graph_capture.end(capture)

    def _abandon(self) -> None:
        """End a capture an error interrupted, keeping nothing."""
        capture, self._capture = self._capture, None
        if capture is not None:
            graph_capture.abandon(capture)

    def instantiate(self) -> None:
        """PyTorch's step between capture and replay under ``keep_graph=True``; Zero's graph is
        ready when the capture ends, so this only checks there is one."""
        self._captured()

    def replay(self) -> None:
        """Run the recorded work again, on the same memory (queued: the host does not wait)."""
        self._captured().replay()

    def reset(self) -> None:
        """Drop the recording; the pool's memory returns once no graph holds it."""
        if self._graph is not None:
            self._graph.release()
            self._graph = None

    def pool(self) -> GraphPool:
        """This graph's memory pool, to capture another graph into (``capture_begin(pool=...)``)."""
        if self._pool is None:
            raise CaptureError("pool() before capture_begin(): the graph has no pool yet")
        return self._pool

    def _captured(self) -> CapturedGraph:
        if self._graph is None:
            raise CaptureError("replay() of a CUDAGraph that has not been captured (or was reset): "
                               "capture it first, with zero.cuda.graph(g)")
        return self._graph

    def __del__(self) -> None:
        try:
            self.reset()
        except Exception:   # at interpreter shutdown the pool may be gone; nothing is left to return
            pass


class graph:
    """``with zero.cuda.graph(g):`` captures the block's GPU work into ``g`` (PyTorch's
    ``torch.cuda.graph``). The work is recorded, not run: replay it with ``g.replay()``. An
    error inside the block ends the capture and leaves ``g`` empty."""

    def __init__(self, cuda_graph: CUDAGraph, pool: GraphPool | None = None, stream=None,
                 capture_error_mode: str = "global"):
        if stream is not None:
            raise TypeError("zero.cuda.graph(stream=...): Zero's CUDA backend runs on one stream and captures "
                            "on a side stream of its own; leave stream out")
        self.cuda_graph, self.pool, self.capture_error_mode = cuda_graph, pool, capture_error_mode

    def __enter__(self) -> None:
        gc.collect()   # what only reference cycles hold goes back to the pool before the capture asks for memory
        self.cuda_graph.capture_begin(self.pool, self.capture_error_mode)

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is not None:
            self.cuda_graph._abandon()
            return
        self.cuda_graph.capture_end()
