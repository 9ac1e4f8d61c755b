"""Per-op timing of forward and backward (the book wraps ``Backward`` with a timer).

    with zero.profiler.profile() as prof:
        loss = model(x).sum(); loss.backward()
    print(prof.table())

On a GPU the host's times are launch times: the kernels run later, asynchronously.
``synchronize=True`` waits for each op (its time then includes the GPU's, and the wait);
``use_device="cuda"`` instead queues a pair of CUDA events around each op and reports the
GPU's own time per op beside the host's (PyTorch's ``use_device``), without stopping the
queue -- so the two columns say whether a step is bound by the host or by the GPU.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .autograd import op as op_module

if TYPE_CHECKING:
    from .backends.device import Device


@dataclass
class OpStats:
    name: str
    forward_calls: int = 0
    forward_seconds: float = 0.0
    backward_calls: int = 0
    backward_seconds: float = 0.0
    device_forward_seconds: float = 0.0   # with use_device: the GPU's time, between events
    device_backward_seconds: float = 0.0

    @property
    def total_seconds(self) -> float:
        return self.forward_seconds + self.backward_seconds

    @property
    def device_total_seconds(self) -> float:
        return self.device_forward_seconds + self.device_backward_seconds

    def add_device(self, phase: str, seconds: float) -> None:
        if phase == "forward":
            self.device_forward_seconds += seconds
        else:
            self.device_backward_seconds += seconds


class profile:
    def __init__(self, synchronize: bool = False, use_device: str | None = None):
        if use_device not in (None, "cuda"):
            raise ValueError(f"profile: use_device={use_device!r}; the device with its own clock is 'cuda'")
        self.synchronize = synchronize
        self.use_device = use_device
        self.stats: dict[str, OpStats] = {}
        self.wall_seconds = 0.0
        self._previous: profile | None = None   # the profile running when this one started
        self._new_event: Callable[[], Any] | None = None
        self._queued: list[tuple] = []   # (name, phase, start event, end event), read at exit
        if use_device == "cuda":
            from . import cuda

            self._new_event = lambda: cuda.Event(enable_timing=True)

    def __enter__(self) -> profile:
        self._previous = op_module.active_profiler
        self._start = time.perf_counter()
        op_module.active_profiler = self
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        op_module.active_profiler = self._previous
        self.wall_seconds = time.perf_counter() - self._start
        for name, phase, start, end in self._queued:   # the first elapsed_time waits for the GPU
            self._stats(name).add_device(phase, start.elapsed_time(end) / 1e3)
        self._queued.clear()
        return False

    def begin(self, device: Device | None) -> tuple[float, Any]:
        """Called as an op starts (forward or backward): the host's clock and, when timing
        the device, an event queued before the op's kernels."""
        start_event = None
        if self._new_event is not None and device is not None and device.type == self.use_device:
            start_event = self._new_event()
            start_event.record()
        return time.perf_counter(), start_event

    def end(self, name: str, phase: str, started: tuple[float, Any], device: Device | None) -> None:
        """Called as an op ends, with what ``begin`` gave: records the op's times."""
        host_start, start_event = started
        seconds = time.perf_counter() - host_start
        if start_event is not None and self._new_event is not None:
            end_event = self._new_event()
            end_event.record()
            self._queued.append((name, phase, start_event, end_event))
        self.record(name, phase, seconds, device)

    def record(self, name: str, phase: str, seconds: float, device: Device | None = None) -> None:
        if self.synchronize and device is not None and device.type != "cpu":
            start = time.perf_counter()
            device.backend.synchronize()
            seconds += time.perf_counter() - start
        stats = self._stats(name)
        if phase == "forward":
            stats.forward_calls += 1
            stats.forward_seconds += seconds
        else:
            stats.backward_calls += 1
            stats.backward_seconds += seconds

    def _stats(self, name: str) -> OpStats:
        stats = self.stats.get(name)
        if stats is None:
            stats = self.stats[name] = OpStats(name)
        return stats

    def key_averages(self, sort_by: str = "total") -> list[OpStats]:
        key = {"total": lambda s: s.total_seconds, "forward": lambda s: s.forward_seconds,
               "backward": lambda s: s.backward_seconds, "calls": lambda s: s.forward_calls,
               "device": lambda s: s.device_total_seconds}[sort_by]
        return sorted(self.stats.values(), key=key, reverse=True)

    def table(self, sort_by: str | None = None, row_limit: int | None = None) -> str:
        """One row per op: calls and host milliseconds, forward and backward, and with
        ``use_device`` the device's milliseconds (rows then sorted by those)."""
        on_device = self.use_device is not None
        rows = self.key_averages(sort_by or ("device" if on_device else "total"))[:row_limit]
        total = sum(s.total_seconds for s in self.stats.values()) or 1.0
        device_total = sum(s.device_total_seconds for s in self.stats.values()) or 1.0
        header = f"{'op':<24}{'fwd calls':>10}{'fwd ms':>11}{'bwd calls':>10}{'bwd ms':>11}{'total ms':>11}{'%':>7}"
        if on_device:
            header += f"{'dev fwd ms':>12}{'dev bwd ms':>12}{'dev total':>11}{'dev %':>7}"
        lines = [header]
        for s in rows:
            line = (f"{s.name:<24}{s.forward_calls:>10}{s.forward_seconds * 1e3:>11.3f}"
                    f"{s.backward_calls:>10}{s.backward_seconds * 1e3:>11.3f}"
                    f"{s.total_seconds * 1e3:>11.3f}{100 * s.total_seconds / total:>7.1f}")
            if on_device:
                line += (f"{s.device_forward_seconds * 1e3:>12.3f}{s.device_backward_seconds * 1e3:>12.3f}"
                         f"{s.device_total_seconds * 1e3:>11.3f}{100 * s.device_total_seconds / device_total:>7.1f}")
            lines.append(line)
        last = f"{'all ops':<24}{'':>10}{'':>11}{'':>10}{'':>11}{total * 1e3:>11.3f}"
        if on_device:
            last += f"{'':>7}{'':>12}{'':>12}{device_total * 1e3:>11.3f}"
        lines.append(last + f"   (wall {self.wall_seconds * 1e3:.1f} ms)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()
