"""The CUDA capture's bookkeeping on a fake GPU (``fake_gpu``) with fake streams: what
``backends/cuda/graphs.py`` sets up while a graph is captured and puts back afterwards --
CuPy's allocator (the graph's pool), the current stream (the capture stream), Triton's compile
hook (refusing), the garbage collector (off) -- on success, on an error inside the block, and
when the capture cannot even begin. Nothing launches here; the capture of real kernels runs in
tests/cuda_graphs on a GPU (scripts/gpu-check.sh's graphs stage)."""
from __future__ import annotations

import gc

import cupy
import numpy as np
import pytest

import zero
from zero.backends.cuda import graphs
from zero.errors import CaptureError


class FakeGraph:
    def __init__(self):
        self.launches = 0

    def launch(self, stream=None):
        self.launches += 1


class FakeStream:
    """A CuPy stream that records what a capture asks of it."""

    created: list[FakeStream] = []
    current: FakeStream | None = None
    fail_to_begin = False

    def __init__(self, non_blocking: bool = False, null: bool = False):
        self.non_blocking, self.ptr = non_blocking, 0 if null else 1000 + len(FakeStream.created)
        self.capturing, self.mode, self.graph = False, None, None
        if not null:
            FakeStream.created.append(self)

    def use(self):
        FakeStream.current = self
        return self

    def begin_capture(self, mode=None):
        if FakeStream.fail_to_begin:
            raise cupy.cuda.runtime.CUDARuntimeError(900)   # cudaErrorStreamCaptureUnsupported
        self.capturing, self.mode = True, mode

    def end_capture(self):
        assert self.capturing, "end_capture without begin_capture"
        self.capturing, self.graph = False, FakeGraph()
        return self.graph


class Copies:
    def __init__(self):
        self.done: list[tuple] = []

    def memcpy_async(self, destination, source, nbytes, kind, stream):
        self.done.append((destination, source, nbytes, kind, stream))


@pytest.fixture
def fake_streams(fake_gpu, monkeypatch):
    FakeStream.created, FakeStream.fail_to_begin = [], False
    FakeStream.current = FakeStream(null=True)
    copies = Copies()
    monkeypatch.setattr(cupy.cuda, "Stream", FakeStream)
    monkeypatch.setattr(cupy.cuda, "get_current_stream", lambda: FakeStream.current)
    monkeypatch.setattr(cupy.cuda.runtime, "deviceSynchronize", lambda: None)
    monkeypatch.setattr(cupy.cuda.runtime, "memcpyAsync", copies.memcpy_async)
    monkeypatch.setattr(cupy.cuda, "alloc_pinned_memory", lambda nbytes: _Pinned(nbytes))
    yield copies
    assert not zero.cuda.is_current_stream_capturing()


class _Pinned(bytearray):
    """Host memory with an address, as CuPy's pinned memory has."""

    @property
    def ptr(self) -> int:
        return np.frombuffer(self, np.uint8).ctypes.data


def _state():
    from triton import knobs

    return cupy.cuda.get_allocator(), FakeStream.current, knobs.runtime.jit_cache_hook, gc.isenabled()


def test_a_capture_sets_the_device_up_for_a_graph_and_puts_it_back(fake_streams):
    zero.empty(4, device="cuda")   # (the backend set up on the fake GPU)
    before = _state()
    graph = zero.cuda.CUDAGraph()
    graph.capture_begin()
    try:
        allocator, stream, hook, collecting = _state()
        assert stream is FakeStream.created[-1] and stream.capturing and stream.non_blocking
        assert stream.mode == cupy.cuda.runtime.streamCaptureModeRelaxed
        assert allocator is not before[0] and hook is graphs._refuse_compiling and not collecting
        assert graphs.capturing() and zero.cuda.is_current_stream_capturing()
        made = zero.empty(1000, device="cuda")
        assert any(block.handle == made.data_ptr() for block in graph.pool().source.blocks.values())
        with pytest.raises(CaptureError, match="read on the host"):
            made.cpu()
        uploaded = graphs.to_device(np.arange(5, dtype=np.int64))   # (a kernel's table: a graph constant)
        assert isinstance(uploaded, cupy.ndarray)
        destination, _, nbytes, kind, on = fake_streams.done[-1]
        assert (destination, nbytes, kind, on) == (uploaded.data.ptr, 40, cupy.cuda.runtime.memcpyHostToDevice,
                                                    stream.ptr)
    finally:
        graph.capture_end()
    assert _state() == before and not graphs.capturing()
    graph.replay()
    graph.replay()
    assert stream.graph.launches == 2
    pool = graph.pool()
    del made, uploaded
    graph.reset()
    gc.collect()
    assert pool.reserved_bytes() == 0


def test_an_error_inside_the_block_ends_the_capture_and_leaves_no_graph(fake_streams):
    zero.empty(4, device="cuda")
    before = _state()
    graph = zero.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="inside"):
        with zero.cuda.graph(graph):
            raise ValueError("an error inside the captured block")
    assert _state() == before and not FakeStream.created[-1].capturing
    with pytest.raises(CaptureError, match="not been captured"):
        graph.replay()


def test_a_capture_that_cannot_begin_leaves_the_device_as_it_was(fake_streams):
    zero.empty(4, device="cuda")
    before = _state()
    FakeStream.fail_to_begin = True
    with pytest.raises(cupy.cuda.runtime.CUDARuntimeError):
        zero.cuda.CUDAGraph().capture_begin()
    assert _state() == before and not graphs.capturing()
