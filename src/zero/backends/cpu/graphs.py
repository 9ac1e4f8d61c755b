"""The CPU backend's capture of a CUDA graph: a tape of kernel calls (for "cuda" played by the CPU).

The tests run "cuda" on the CPU backend (``ZERO_TEST_PLAY_CUDA=1``, ``cpu_played_cuda``), and
a CUDA graph's rules should hold there too. So while a capture is open, the kernel table a
device hands out is a recorder: each call runs, and is written on a tape with its arguments
(the same array objects: the same memory). ``replay()`` makes the calls again, in order, on
that memory -- what a GPU does with a captured stream: the same kernels, the same addresses,
the arguments frozen, new values only where memory was rewritten between replays.

Two differences from a GPU are bridged here:

* A captured stream runs nothing while it records. The tape must run each call (the next
  call may need its result), so the memory that existed before the capture (parameters,
  optimizer state, static inputs) is copied at the first call that touches it and put back
  when the capture ends: after the capture, as on a GPU, nothing has changed but the graph's
  own memory.
* A CPU kernel may return a new array instead of writing into one it was given. Its later
  readers on the tape hold that first array, so a replay copies the call's new result into
  it, as a GPU kernel writes the same address again. A kernel that returns a value to the
  host (a number, not an array) would make a GPU wait: that raises CaptureError.
"""
from __future__ import annotations

import numpy as np

from ...errors import CaptureError
from .memory import PoolBuffer


class TapeCapture:
    """Records ``capture.device``'s kernel calls (``kernels``); ``end()`` gives the tape."""

    def __init__(self, capture):
        self.capture = capture
        self.calls: list[tuple] = []   # (kernel, args, kwargs, result)
        self.before: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # id(anchor) -> (anchor, its bytes before)
        self.kernels = _RecordingKernels(self, capture.device.kernels)

    # -- what the capture asks of a backend -----------------------------------------------------
    def upload(self, array: np.ndarray) -> np.ndarray:
        """Host data copied to the device while capturing: a constant of the graph."""
        return array.copy()

    def end(self) -> Tape:
        for anchor, saved in self.before.values():   # as if nothing had run: the GPU's capture runs nothing
            anchor[...] = saved
        self.before.clear()
        return Tape(self.calls)

    # -- recording ------------------------------------------------------------------------------
    def record(self, name: str, kernel, args: tuple, kwargs: dict):
        self._remember(args)
        if kwargs:
            self._remember(tuple(kwargs.values()))
        result = kernel(*args, **kwargs)
        if not _stays_on_device(result):
            raise CaptureError(f"kernel {name} returned {type(result).__name__} to the host while a CUDA graph was "
                               "being captured: on a GPU that is a read that waits for the device")
        self.calls.append((kernel, args, kwargs, result))
        return result

    def _remember(self, values) -> None:
        """Copy each array's storage the first time the capture touches it, unless the graph owns it."""
        for value in values:
            if isinstance(value, (list, tuple)):
                self._remember(value)
                continue
            if not isinstance(value, np.ndarray):
                continue
            anchor = _anchor_of(value)
            if anchor is None or id(anchor) in self.before or self.capture.pool.source.owns(anchor.base):
                continue
            self.before[id(anchor)] = (anchor, anchor.copy())


class Tape:
    """The recorded calls; ``replay()`` makes them again."""

    def __init__(self, calls: list):
        self.calls = calls

    def replay(self) -> None:
        for kernel, args, kwargs, result in self.calls:
            _write_back(result, kernel(*args, **kwargs))


class _RecordingKernels:
    """A kernel table whose every function records its calls on ``tape``."""

    def __init__(self, tape: TapeCapture, kernels):
        self._tape, self._kernels = tape, kernels

    def __getattr__(self, name: str):
        value = getattr(self._kernels, name)
        if not callable(value):
            return value
        record = self._tape.record

        def recorded(*args, **kwargs):
            return record(name, value, args, kwargs)

        setattr(self, name, recorded)   # found directly from the next call on
        return recorded


def _anchor_of(array: np.ndarray) -> np.ndarray | None:
    """The lease anchor an array is built on (``cpu/memory.py``), or None for other memory."""
    base = array.base
    if isinstance(base, PoolBuffer):
        return array
    if type(base) is np.ndarray and isinstance(base.base, PoolBuffer):
        return base
    return None


def _stays_on_device(result) -> bool:
    if result is None or isinstance(result, np.ndarray):
        return True
    return isinstance(result, (tuple, list)) and all(_stays_on_device(r) for r in result)


def _write_back(first, again) -> None:
    """Make a replayed call's result land where the recorded call's did."""
    if first is None or first is again:
        return
    if isinstance(first, np.ndarray):
        np.copyto(first, again)
        return
    for a, b in zip(first, again):
        _write_back(a, b)
