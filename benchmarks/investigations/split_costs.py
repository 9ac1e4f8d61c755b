"""What deciding to split a CPU loop over two threads rests on, measured on this machine.

    PYTHONPATH=src python benchmarks/investigations/split_costs.py [--sections costs,gain,start] [--repeats 60] [--cold]

Three tables, Zero's own kernels (as the CPU's kernel table runs them) and pool
(``zero.backends.cpu.threads``; the splits are ``zero.backends.cpu.parallel``'s):

``costs``: one core's time per float32 element of each loop that states one (1 M
elements, the median of ``--repeats`` calls): the ``*_NS`` constants of ``parallel``,
from which ``element_grain`` sizes a part to ``parallel.SPLIT_NS``.

``gain``: each loop split in two parts on two threads (whatever its size) against one
thread, back to back, at 2^18 to 2^22 elements (rows of 64; the memory-bound loops', which
split by size (``parallel.MEMORY_PART``), rows of 1024): the time on one thread and the
ratio, below 1 where the split pays; "split" marks the sizes the kernel splits now.
``--cold`` empties the cache (a pass over 64 MiB) before each call, as a step's large
operands come from memory.

``start``: when the worker starts after ``run_all`` hands it a part, while the caller
keeps the GIL for 0, 10, 30 or 100 µs before its own part releases it (50 µs of Python
between calls). The worker, woken from the queue, needs the GIL too: once the caller
holds it past the worker's wake-up, the worker sleeps again until it is free.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for turns
from turns import median_seconds
from zero.backends.cpu import kernels, parallel, threads

rng = np.random.default_rng(0)


def row_loops(rows: int, width: int) -> dict:
    """The row and element loops of the CPU kernels on float32 operands of rows x width."""
    x = rng.standard_normal((rows, width), dtype=np.float32)
    grad = rng.standard_normal((rows, width), dtype=np.float32)
    out, grad_in = np.empty_like(x), np.empty_like(x)
    kernels.softmax_forward(x, out)
    target, loss = rng.integers(0, width, rows), np.empty(rows, np.float32)
    lse, ones = np.empty(rows), np.ones(rows, np.float32)
    return {
        "softmax": lambda: kernels.softmax_forward(x, grad_in),
        "softmax backward": lambda: kernels.softmax_backward(grad, out, grad_in),
        "log_softmax": lambda: kernels.log_softmax_forward(x, grad_in),
        "log_softmax backward": lambda: kernels.log_softmax_backward(grad, out, grad_in),
        "cross_entropy": lambda: kernels.cross_entropy_forward(x, target, None, -100, 0.0, loss, lse),
        "cross_entropy backward": lambda: kernels.cross_entropy_backward(ones, x, target, None, lse, -100, 0.0,
                                                                         grad_in),
        "gelu": lambda: kernels.gelu(x, grad_in),
        "gelu backward": lambda: kernels.gelu_backward(grad, x, grad_in),
        "gelu tanh": lambda: kernels.gelu(x, grad_in, "tanh"),
        "gelu tanh backward": lambda: kernels.gelu_backward(grad, x, grad_in, "tanh"),
        "sigmoid": lambda: kernels.sigmoid(x, grad_in),
        "silu": lambda: kernels.silu(x, grad_in),
        "dropout": lambda: kernels.dropout_forward(x, 0.2, 12345, grad_in),
    }


def memory_loops(size: int) -> dict:
    """The memory-bound loops, on float32 operands of ``size`` elements (rows of 1024)."""
    a, b = rng.standard_normal(size, dtype=np.float32), rng.standard_normal(size, dtype=np.float32)
    out, row = np.empty_like(a), rng.standard_normal(1024, dtype=np.float32)
    rows, rows_out = a.reshape(-1, 1024), out.reshape(-1, 1024)
    mask = a > 0
    return {
        "add": lambda: kernels.add(a, b, out),
        "mul": lambda: kernels.mul(a, b, out),
        "add in place": lambda: kernels.add(out, b, out),
        "x + row": lambda: kernels.add(rows, row, rows_out),
        "relu": lambda: kernels.relu(a, out),
        "relu backward": lambda: kernels.relu_backward(b, a, out),
        "where": lambda: kernels.where(mask, a, b, out),
    }


def optimizer_loops(size: int) -> dict:
    param, grad = rng.standard_normal(size, dtype=np.float32), rng.standard_normal(size, dtype=np.float32)
    exp_avg, exp_avg_sq = np.zeros(size, np.float32), np.ones(size, np.float32)
    return {"adamw": lambda: kernels.adamw_step(param, grad, exp_avg, exp_avg_sq, 1e-3, 0.9, 0.99, 1e-8, 0.0, 0.1,
                                                1e-3),
            "sgd": lambda: kernels.sgd_step(param, grad, exp_avg, 1e-3, 0.9, 0.0, 0.0, False, False)}


def costs(repeats: int) -> None:
    elements = 1 << 20
    threads.set_num_threads(1)
    print(f"One core's time per float32 element ({elements:,} elements, rows of 64 and of 1024):\n")
    print("| loop | ns/element, rows of 64 | ns/element, rows of 1024 |\n|---|---:|---:|")
    narrow, wide = row_loops(elements // 64, 64), row_loops(elements // 1024, 1024)
    for name in narrow:
        a, b = (median_seconds(loops[name], 5, repeats) * 1e9 / elements for loops in (narrow, wide))
        print(f"| {name} | {a:.2f} | {b:.2f} |")
    for name, call in optimizer_loops(elements).items():
        print(f"| {name} (per parameter) | {median_seconds(call, 5, repeats) * 1e9 / elements:.2f} | |")
    print()


def gain(repeats: int, cold: bool = False) -> None:
    how = "the cache emptied before each call" if cold else "back to back"
    print(f"Split in two on two threads against one thread, {how} (rows of 64; 'split': the kernel "
          "splits at that size):\n")
    sizes = [1 << k for k in range(18, 23)]
    print("| loop | " + " | ".join(f"2^{s.bit_length() - 1}: one thread µs, two/one" for s in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    tables = {size: {**row_loops(size // 64, 64), **memory_loops(size)} for size in sizes}
    cache_sized = np.ones(16 << 20, np.float32) if cold else None   # 64 MiB, twice the last-level cache

    def timed(call, warmup: int, repeats: int) -> float:
        return median_seconds(call, warmup, repeats, None if cache_sized is None else cache_sized.sum)

    for name in tables[sizes[0]]:
        cells = []
        for size in sizes:
            call = tables[size][name]
            threads.set_num_threads(1)
            one = timed(call, 5, repeats)
            threads.set_num_threads(2)
            splits = split_now(call)
            with every_loop_split():
                two = timed(call, 5, repeats)
            cells.append(f"{one * 1e6:.0f}, {two / one:.2f}" + (" split" if splits else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()


@contextlib.contextmanager
def every_loop_split():
    """Split every loop in two, whatever its size."""
    chosen = parallel.SPLIT_NS, parallel.MEMORY_PART
    parallel.SPLIT_NS, parallel.MEMORY_PART = 1e-3, 1
    try:
        yield
    finally:
        parallel.SPLIT_NS, parallel.MEMORY_PART = chosen


def split_now(call) -> bool:
    """Whether ``call`` splits its loop over the pool's threads with today's rules."""
    regions, run_all = [], threads._pool.run_all

    def counted(functions):
        regions.append(len(functions))
        run_all(functions)

    threads._pool.run_all = counted
    try:
        call()
    finally:
        threads._pool.run_all = run_all
    return bool(regions)


def busy_python(microseconds: float) -> None:
    end = time.perf_counter() + microseconds * 1e-6
    while time.perf_counter() < end:
        pass


def worker_starts(hold: float, calls: int) -> list[float]:
    """Seconds from run_all's hand-off to the worker's first line, over ``calls`` calls."""
    a = rng.standard_normal((256, 128), dtype=np.float32)
    w = rng.standard_normal((128, 128), dtype=np.float32)
    out, out2 = np.empty((256, 128), np.float32), np.empty((256, 128), np.float32)
    starts: list[float] = []
    handed = [0.0]

    def worker() -> None:
        starts.append(time.perf_counter() - handed[0])
        np.matmul(a, w, out=out2)

    def caller() -> None:
        busy_python(hold)
        np.matmul(a, w, out=out)

    for _ in range(calls):
        handed[0] = time.perf_counter()
        threads.run_all([caller, worker])
        busy_python(50)
    return starts


def start(repeats: int) -> None:
    threads.set_num_threads(2)
    print("When the worker starts after run_all hands it a part (the caller keeps the GIL, then its "
          "own part, a 256x128x128 product, releases it):\n")
    print("| caller keeps the GIL after the hand-off, µs | worker starts after, median µs | p90 µs |\n|---:|---:|---:|")
    for hold in (0, 10, 30, 100):
        starts = worker_starts(hold, repeats * 5)
        print(f"| {hold} | {statistics.median(starts) * 1e6:.0f} | {np.percentile(starts, 90) * 1e6:.0f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="costs,gain,start")
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--cold", action="store_true", help="gain: empty the cache before each call")
    args = parser.parse_args()
    sections = {"costs": lambda: costs(args.repeats), "gain": lambda: gain(args.repeats, args.cold),
                "start": lambda: start(args.repeats)}
    for name in args.sections.split(","):
        sections[name]()


if __name__ == "__main__":
    main()
