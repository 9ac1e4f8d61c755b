"""Capturing a device's work once and replaying it: what every backend shares (CUDA graphs).

A GPT step issues a few hundred kernels, and on a fast GPU the host needs as long to issue
them as the GPU needs to run them. A CUDA graph records the kernels of a stretch of work
once -- with their arguments, the addresses they read and write -- and replays the whole
record with one call. What the record cannot hold is anything the host decides while the
work runs, so while a capture is open on a device (``device._capture``):

    new storages        come from the graph's own pool (``GraphPool``), whose blocks stay the
                        graph's after the capture: a replay writes where the capture wrote,
                        and no tensor made later is handed that memory
    a read to the host  (``.item()``, ``.cpu()``, printing, an index check that waits) raises
                        CaptureError: the graph cannot stop for the host
    index checks        deferred ones (``ops/index_checks.py``) are kept by the graph and queued
                        again after every replay, so each replay's indices are checked at the
                        next read, as an eager step's are
    dropout's seeds     come from slots on the device that the graph refills from the
                        generator before each replay (``before_replay``; ``ops/dropout.py``), so
                        replay n drops what eager step n would
    host data           copied to the device during the capture is a constant of the graph

Recording the kernels is the backend's part (``backend.begin_capture(capture)``): CUDA captures
its stream (``cuda/graphs.py``); the CPU backend, which plays "cuda" in the tests
(``ZERO_TEST_PLAY_CUDA=1``), records each kernel call on a tape and calls them again on replay
(``cpu/graphs.py``), so the rules above are tested on machines without a GPU.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import CaptureError
from .caching_allocator import CachingAllocator

class _Borrowed:
    """A graph pool's raw source: blocks borrowed from the device's own allocator (counted
    there as live), given back when the graph pool lets them go."""

    def __init__(self, allocator: CachingAllocator):
        self.allocator = allocator
        self.blocks: dict[int, Any] = {}  # id(handle) -> the device allocator's block

    def malloc(self, nbytes: int):
        block = self.allocator.allocate(nbytes)
        self.blocks[id(block.handle)] = block
        return block.handle

    def free(self, handle) -> None:
        self.allocator.release(self.blocks.pop(id(handle)))

    def owns(self, handle) -> bool:
        return id(handle) in self.blocks


class GraphPool:
    """The memory of one or more captured graphs (PyTorch's ``graph_pool_handle()``).

    A caching allocator of its own, whose blocks come from the device's pool and stay
    reserved while a graph captured with it lives: a block freed during the capture may
    serve a later request of the same capture (the replay runs in the same order), never a
    tensor outside it. Graphs captured one after another with the same pool share its blocks
    (``make_graphed_callables``' forward and backward). When the last of them is reset, the
    cached blocks go back to the device's pool, and so do the blocks of tensors that outlive
    it (a graph's static outputs) when those are freed."""

    def __init__(self, device):
        backend = device.backend
        main = backend.allocator
        self.source = _Borrowed(main)
        self.allocator = CachingAllocator(self.source, granularity=main.granularity,
                                          max_oversize_ratio=main.max_oversize_ratio,
                                          max_oversize_bytes=main.max_oversize_bytes, max_cached_bytes=1 << 62,
                                          name=f"{main.name} graph pool")
        self.lease = backend.lender(self.allocator)
        self.graphs = 0   # graphs captured with it and not reset

    def hold(self) -> None:
        self.graphs += 1
        self.allocator.max_cached_bytes = 1 << 62

    def let_go(self) -> None:
        self.graphs -= 1
        if self.graphs == 0:
            self.allocator.max_cached_bytes = 0   # a block freed from now on goes straight back
            self.allocator.empty_cache()

    def reserved_bytes(self) -> int:
        return self.allocator.reserved_bytes


class Capture:
    """One capture in progress on ``device``, into ``pool``."""

    def __init__(self, device, pool: GraphPool):
        self.device, self.pool = device, pool
        self.checks: list = []   # deferred index checks made while capturing
        self.before_replay: dict = {}   # what must be refreshed before each replay, by whom (dropout's seeds)
        self.at_end: list = []   # what to undo when the capture ends (the host state it moved)
        self.recorder: Any = None   # the backend's (backend.begin_capture)
        self.saved: tuple = ()   # the device's backend and kernel table before the capture


class _CapturingBackend:
    """The device's backend while a capture is open: the same, except for what a graph cannot
    hold (see the module docstring). Looked up through ``device.backend`` as the backend is."""

    def __init__(self, backend, capture: Capture):
        self._backend, self._capture = backend, capture
        self.lease = capture.pool.lease
        self.kernels = capture.recorder.kernels or backend.kernels

    def __getattr__(self, name: str):
        return getattr(self._backend, name)

    def to_numpy(self, array):
        raise CaptureError(
            f"a value of a {self._capture.device.type} tensor was read on the host (.item(), .tolist(), .cpu(), "
            "printing, or a check waiting for the device) while a CUDA graph was being captured: a graph cannot "
            "stop for the host; read it after capture_end(), after a replay")

    def synchronize(self) -> None:
        raise CaptureError("synchronize() while a CUDA graph is being captured: a graph cannot wait for itself; "
                           "synchronize after capture_end()")

    def from_numpy(self, array):
        return self._capture.recorder.upload(np.ascontiguousarray(array))


def begin(device, pool: GraphPool) -> Capture:
    """Open a capture on ``device`` into ``pool``: from here the device's work is recorded
    (and, on a real GPU, not run) until ``end``."""
    if device._capture is not None:
        raise CaptureError(f"a CUDA graph is already being captured on {device}; end it first (capture_end())")
    backend = device.backend
    device.run_deferred_checks()   # the checks of the work before the capture: now, outside it
    backend.synchronize()
    capture = Capture(device, pool)
    capture.recorder = backend.begin_capture(capture)
    capture.saved = (device._backend, device._kernels)
    capturing = _CapturingBackend(backend, capture)
    device._backend, device._kernels, device._capture = capturing, capturing.kernels, capture
    pool.hold()
    return capture


def end(capture: Capture) -> CapturedGraph:
    """Close ``capture``; the graph it recorded, ready to replay. The device is as it was
    before the capture, even when the backend's recording failed."""
    device = capture.device
    device._backend, device._kernels = capture.saved
    device._capture = None
    for undo in capture.at_end:
        undo()
    try:
        recorded = capture.recorder.end()
    except BaseException:
        capture.pool.let_go()
        raise
    return CapturedGraph(capture, recorded)


def abandon(capture: Capture) -> None:
    """Close ``capture`` after an error inside it, keeping nothing it recorded."""
    try:
        end(capture).release()
    except Exception:  # the error that stopped the capture is the one to report
        pass


class CapturedGraph:
    """A recorded stretch of work: ``replay()`` runs it again on the same memory."""

    def __init__(self, capture: Capture, recorded):
        self.capture, self.recorded = capture, recorded

    def replay(self) -> None:
        capture = self.capture
        device = capture.device
        if device._capture is not None:
            raise CaptureError("replay() while a CUDA graph is being captured on the same device")
        for refresh in capture.before_replay.values():
            refresh()
        self.recorded.replay()
        for check in capture.checks:
            device.defer_check(check)

    def release(self) -> None:
        """Drop the record; the pool's blocks go back when no graph holds them (``GraphPool``)."""
        if self.recorded is not None:
            self.recorded = None
            self.capture.pool.let_go()

