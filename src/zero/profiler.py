"""Per-op timing of forward and backward (the book wraps ``Backward`` with a timer).

    with zero.profiler.profile() as prof:
        loss = model(x).sum(); loss.backward()
    print(prof.table())

On a GPU the times are launch times unless ``synchronize=True`` waits for each op.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .autograd import op as op_module


@dataclass
class OpStats:
    name: str
    forward_calls: int = 0
    forward_seconds: float = 0.0
    backward_calls: int = 0
    backward_seconds: float = 0.0

    @property
    def total_seconds(self) -> float:
        return self.forward_seconds + self.backward_seconds


class profile:
    def __init__(self, synchronize: bool = False):
        self.synchronize = synchronize
        self.stats: dict[str, OpStats] = {}
        self.wall_seconds = 0.0
        self._previous = None

    def __enter__(self):
        self._previous = op_module.active_profiler
        self._start = time.perf_counter()
        op_module.active_profiler = self
        return self

    def __exit__(self, *exc):
        op_module.active_profiler = self._previous
        self.wall_seconds = time.perf_counter() - self._start
        return False

    def record(self, name: str, phase: str, seconds: float, device=None) -> None:
        if self.synchronize and device is not None and device.type != "cpu":
            start = time.perf_counter()
            device.backend.synchronize()
            seconds += time.perf_counter() - start
        stats = self.stats.get(name)
        if stats is None:
            stats = self.stats[name] = OpStats(name)
        if phase == "forward":
            stats.forward_calls += 1
            stats.forward_seconds += seconds
        else:
            stats.backward_calls += 1
            stats.backward_seconds += seconds

    def key_averages(self, sort_by: str = "total") -> list[OpStats]:
        key = {"total": lambda s: s.total_seconds, "forward": lambda s: s.forward_seconds,
               "backward": lambda s: s.backward_seconds, "calls": lambda s: s.forward_calls}[sort_by]
        return sorted(self.stats.values(), key=key, reverse=True)

    def table(self, sort_by: str = "total", row_limit: int | None = None) -> str:
        rows = self.key_averages(sort_by)[:row_limit]
        total = sum(s.total_seconds for s in self.stats.values()) or 1.0
        lines = [f"{'op':<24}{'fwd calls':>10}{'fwd ms':>11}{'bwd calls':>10}{'bwd ms':>11}{'total ms':>11}{'%':>7}"]
        for s in rows:
            lines.append(f"{s.name:<24}{s.forward_calls:>10}{s.forward_seconds * 1e3:>11.3f}"
                         f"{s.backward_calls:>10}{s.backward_seconds * 1e3:>11.3f}"
                         f"{s.total_seconds * 1e3:>11.3f}{100 * s.total_seconds / total:>7.1f}")
        lines.append(f"{'all ops':<24}{'':>10}{'':>11}{'':>10}{'':>11}{total * 1e3:>11.3f}"
                     f"   (wall {self.wall_seconds * 1e3:.1f} ms)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()
