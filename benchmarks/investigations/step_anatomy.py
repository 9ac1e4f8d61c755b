"""Where a training step's time goes: its phases, the CPU pool's parallel regions, and the
ops that run outside them.

    PYTHONPATH=src python benchmarks/investigations/step_anatomy.py [--configs tiny,small] [--steps 10]

A step of ``train_step.py``'s Zero worker (``zero.models.GPT``, AdamW, clip 1.0, dropout 0),
timed after three warm-up steps, with the pool's ``run_all`` wrapped to add up the time
spent in parallel regions (calls that hand work to a worker):

- per phase (forward, zero_grad, backward, clip, optimizer step): its median time, the
  time in regions and the number of regions, and the rest, which runs on one thread;
- per op, forward and backward (through ``zero.profiler``'s hook): calls per step, time
  per step, and how much of it was outside regions. Ops that nest other ops count them
  twice; the table is for finding the serial time, not for adding up.

The serial time is what a second core cannot help with in this design: the ops whose
work is below the split thresholds (``zero.backends.cpu.threads``) and the Python between
regions. Kernel benchmarks (``kernels.py``) time ops back to back with their data in
cache; inside a step the data of many ops comes from memory, so the same op can take
2-3x as long here.
"""
from __future__ import annotations

import argparse
import collections
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, whose modules this reuses
from train_step import CONFIGS, ZeroSide, gpt_batches


class RegionClock:
    """Wraps the pool's run_all to add up the seconds spent in parallel regions."""

    def __init__(self, threads):
        self.pool, self.inner = threads._pool, threads._pool.run_all
        self.seconds, self.count = 0.0, 0
        self.pool.run_all = self.run_all

    def run_all(self, functions) -> None:
        if len(functions) == 1 or getattr(self.pool.local, "inside", False):   # no hand-off: runs here
            return self.inner(functions)
        start = time.perf_counter()
        try:
            return self.inner(functions)
        finally:
            self.seconds += time.perf_counter() - start
            self.count += 1


class OpClock:
    """zero.profiler's hook: per (op, direction), calls, seconds and seconds inside regions."""

    def __init__(self, regions: RegionClock):
        self.regions, self.seen = regions, regions.seconds
        self.stats: dict = collections.defaultdict(lambda: [0, 0.0, 0.0])

    def begin(self, device) -> float:   # (zero.profiler's protocol: begin as an op starts, end as it ends)
        return time.perf_counter()

    def end(self, name: str, direction: str, started: float, device) -> None:
        self.record(name, direction, time.perf_counter() - started, device)

    def record(self, name: str, direction: str, seconds: float, device) -> None:
        inside, self.seen = self.regions.seconds - self.seen, self.regions.seconds
        entry = self.stats[(name, direction)]
        entry[0] += 1
        entry[1] += seconds
        entry[2] += inside


def anatomy(config: str, steps: int) -> str:
    import zero
    from zero.autograd import op as op_module
    from zero.backends.cpu import threads
    from zero.nn.utils import clip_grad_norm_

    side = ZeroSide("zero")
    with tempfile.TemporaryDirectory() as folder:
        initial = str(Path(folder) / "initial.npz")
        side.save_initial(config, initial)
        model, optimizer = side.prepare(config, 0.0, initial)
    batches = itertools.cycle(gpt_batches(CONFIGS[config], 4))
    for _ in range(3):
        side.step(config, model, optimizer, *next(batches))
    regions = RegionClock(threads)
    phases: dict = {name: [] for name in ("forward", "zero_grad", "backward", "clip", "optimizer step")}

    def timed(name, work):
        regions.seconds, regions.count = 0.0, 0
        start = time.perf_counter()
        result = work()
        phases[name].append((time.perf_counter() - start, regions.seconds, regions.count))
        return result

    for _ in range(steps):                      # the phases, without the op hook
        x, y = next(batches)
        loss = timed("forward", lambda x=x, y=y: model(zero.tensor(x), zero.tensor(y)))
        timed("zero_grad", optimizer.zero_grad)
        timed("backward", loss.backward)
        timed("clip", lambda: clip_grad_norm_(model.parameters(), 1.0))
        timed("optimizer step", optimizer.step)
    ops = OpClock(regions)
    for _ in range(steps):                      # the ops, in steps of their own
        op_module.active_profiler = ops
        try:
            side.step(config, model, optimizer, *next(batches))
        finally:
            op_module.active_profiler = None
    del threads._pool.run_all              # the pool's own method again

    lines = [f"{CONFIGS[config].label}, dropout 0: {steps} steps after 3 warm-up ones", "",
             "| phase | ms | in regions ms | regions | outside ms |", "|---|---:|---:|---:|---:|"]
    total = outside = 0.0
    for name, rows in phases.items():
        took = statistics.median(r[0] for r in rows) * 1e3
        inside = statistics.median(r[1] for r in rows) * 1e3
        count = statistics.median(r[2] for r in rows)
        total, outside = total + took, outside + took - inside
        lines.append(f"| {name} | {took:.2f} | {inside:.2f} | {count:g} | {took - inside:.2f} |")
    lines += [f"| step | {total:.2f} | {total - outside:.2f} | | {outside:.2f} |", "",
              "| op | direction | calls a step | ms a step | outside regions ms | µs a call outside |",
              "|---|---|---:|---:|---:|---:|"]
    for (name, direction), (calls, seconds, inside) in sorted(ops.stats.items(),
                                                              key=lambda kv: kv[1][2] - kv[1][1]):
        lines.append(f"| {name} | {direction} | {calls / steps:g} | {seconds / steps * 1e3:.3f} | "
                     f"{(seconds - inside) / steps * 1e3:.3f} | {(seconds - inside) / calls * 1e6:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="tiny,small")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    print(f"`python benchmarks/investigations/step_anatomy.py --configs {args.configs} --steps {args.steps}`\n")
    for config in args.configs.split(","):
        print(anatomy(config, args.steps), end="\n\n")


if __name__ == "__main__":
    main()
