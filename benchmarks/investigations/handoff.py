"""What handing work to a second thread costs: a sleeping worker against a spinning one.

Zero's CPU pool (``zero.backends.cpu.threads``) hands a part of a kernel to a worker
thread that sleeps on a queue. Small memory-bound kernels (0.05-0.5 ms) stay on one
thread because the hand-off costs as much as the work. This measures the alternative:
worker and caller both spin in a GIL-free Numba loop on a flag (an atomic load and the
CPU's pause instruction) for a while before they sleep, so that neither waits for the
operating system to wake it.

    python benchmarks/investigations/handoff.py [--work-us 20] [--calls 200] [--spin-us 100 500]

For each idle gap before a call (0, 0.2, 1, 10 ms), the medians over ``--calls`` calls:
how long the worker took to start, how long the caller waited for it after its own
half, and the whole call (work: ``--work-us`` µs on each thread). One table per
variant: the sleeping worker (the pool's design), then spinning for each ``--spin-us``.
Needs NumPy and Numba only.
"""
from __future__ import annotations

import _thread
import argparse
import queue
import threading
import time

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

IDLE_GAPS = (0.0, 0.0002, 0.001, 0.01)


@intrinsic
def _load_acquire(typingctx, array, index):
    """array[index] as an atomic load: a spin loop must see another thread's store."""
    def codegen(context, builder, signature, arguments):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, arguments[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [arguments[1]])
        return builder.load_atomic(pointer, "acquire", 8)
    return array.dtype(array, index), codegen


@intrinsic
def _pause(typingctx):
    """The x86 spin-wait hint (Numba's LLVM takes no inline assembly; this is its intrinsic)."""
    def codegen(context, builder, signature, arguments):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                  "llvm.x86.sse2.pause")
        builder.call(function, [])
        return context.get_dummy_value()
    return types.void(), codegen


@numba.njit(nogil=True)
def wait_for_change(flags, index, seen, spins):
    """Spin until flags[index] != seen (returns it) or ``spins`` pauses have passed (returns seen)."""
    for _ in range(spins):
        value = _load_acquire(flags, index)
        if value != seen:
            return value
        _pause()
    return seen


@numba.njit(nogil=True)
def busy(count):
    total = 0.0
    for i in range(count):
        total += np.sqrt(i * 1.0)
    return total


def spins_for(microseconds: float) -> int:
    flags = np.zeros(1, np.int64)
    wait_for_change(flags, 0, 0, 10)
    start = time.perf_counter()
    wait_for_change(flags, 0, 0, 100_000)
    return max(1, int(microseconds * 1e-6 / ((time.perf_counter() - start) / 100_000)))


def measure(work: int, calls: int, spins: int) -> list[tuple[float, float, float, float]]:
    """(idle gap, worker start, caller's wait, whole call) medians in µs; spins=0: a sleeping worker."""
    tasks: queue.SimpleQueue = queue.SimpleQueue()
    flags = np.zeros(2, np.int64)     # [0]: calls handed out, [1]: calls finished by the worker
    starts: list[float] = []

    def worker() -> None:
        seen = 0
        while True:
            if spins:
                wait_for_change(flags, 0, seen, spins)
            item = tasks.get()
            if item is None:
                return
            handed_at, done, number = item
            seen = number
            starts.append(time.perf_counter() - handed_at)
            busy(work)
            flags[1] = number
            done.release()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    rows, number = [], 0
    for gap in IDLE_GAPS:
        starts.clear()
        waits, wholes = [], []
        for _ in range(calls):
            if gap:
                time.sleep(gap)
            number += 1
            done = _thread.allocate_lock()
            done.acquire()
            handed_at = time.perf_counter()
            tasks.put((handed_at, done, number))
            flags[0] = number
            busy(work)
            mine_done = time.perf_counter()
            if spins:
                wait_for_change(flags, 1, number - 1, spins)
            done.acquire()
            finished = time.perf_counter()
            waits.append(finished - mine_done)
            wholes.append(finished - handed_at)
        rows.append((gap * 1e3, float(np.median(starts)) * 1e6, float(np.median(waits)) * 1e6,
                     float(np.median(wholes)) * 1e6))
    tasks.put(None)
    thread.join()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-us", type=float, default=20.0, help="work on each thread per call")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--spin-us", type=float, nargs="*", default=[100.0, 500.0])
    args = parser.parse_args()
    busy(10)
    start = time.perf_counter()
    busy(100_000)
    work = max(1, int(args.work_us * 1e-6 / ((time.perf_counter() - start) / 100_000)))
    variants = [("sleeping worker (the pool's design)", 0)]
    variants += [(f"both spin up to {spin:g} us", spins_for(spin)) for spin in args.spin_us]
    for name, spins in variants:
        print(f"\n{name}, {args.work_us:g} us of work on each thread:\n")
        print("| idle gap before the call | worker starts after | caller waits after its half | whole call |")
        print("|---:|---:|---:|---:|")
        for gap, started, waited, whole in measure(work, args.calls, spins):
            print(f"| {gap:g} ms | {started:.1f} us | {waited:.1f} us | {whole:.1f} us |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
