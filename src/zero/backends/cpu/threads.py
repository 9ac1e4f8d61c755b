"""The CPU backend's threads: one pool for every kernel, matrix products included.

Why Zero owns the threads. NumPy's BLAS (OpenBLAS) keeps its own threads, and after each
product they spin for a while waiting for the next one. Any other thread that wants a
core then competes with a spinning one: measured on 2 cores, a Numba loop put on a
second thread right after a GEMM made a GPT step slower, not faster (``kernels/_jit.py``
has the figures). So Zero sets BLAS to one thread before its first kernel that calls BLAS
(``single_threaded_blas``) and splits the work itself: a large product into ranges of
rows (or columns, or matrices of a batch), each one BLAS call on its own thread
(``kernels/linalg.py``); a
fused kernel into ranges of rows through its whole chain; a long compute-bound loop into
ranges of elements. The small batched products of attention, where BLAS's own threading
costs more than it gives, then run single-threaded on each core: attention forward at
(32 x 4, 64, 32) took 3.9 ms with two BLAS threads, 2.7 ms with one, 1.8 ms with a range
of (batch, head) pairs per thread.

What is split. Loops with transcendentals (GELU, softmax, cross-entropy, dropout's hash,
AdamW's root) ran 1.6-1.9x faster on two threads when large. Memory-bound loops (relu, a
copy, an addition) gain only where their operands outgrow the cache, from 2^21 float32
elements; they split by size (``kernels/elementwise.py``, ``MEMORY_PART``). Any other loop
is split only when each part gets ``SPLIT_NS`` of one core's work: the kernel states what
an element costs it (measured, float32, one thread), and ``element_grain`` turns that into
the fewest items a part may take. Measured on two threads against one, back to back: at
2^18 float32 elements every such loop was slower split (softmax 1.63x the time,
cross-entropy 1.8-2x, GELU 1.1-1.7x); at 2^19 the loops of more than ~0.36 ms on one core
gained (cross-entropy 0.61-0.68, GELU backward 0.56, dropout 0.62) and those of less lost
(softmax 0.31 ms: 1.36, GELU forward 0.38 ms: 1.07), so a loop is split from ~0.2 ms of
work (SPLIT_NS = 0.1 ms a part; at 0.12 and 0.18 ms the op-level A/B lost at 2^19
elements). Ops, forward and backward, against the fixed 2^17-element parts this replaced
(one process, alternating): softmax at 4096 x 64 0.69 of the time, log-softmax 0.82,
dropout at 2048 x 128 0.84, the rest unchanged within the noise. Layer norm has its own
measured grain (``kernels/nn.py``).

How a split runs. ``run_all(functions)`` calls the first function on the calling thread
and the others on worker threads, and returns when all have returned (an exception in
any is raised in the caller); ``parallel_for(count, body, grain)`` does it for the parts
of ``ranges(count, grain)``: at most ``get_num_threads()`` contiguous ranges of at least
``grain`` items. A function must spend its time outside the GIL: NumPy calls
(``np.matmul`` releases it) or Numba loops (``nogil``, as ``kernels._jit`` compiles them).
A hand-off is not free: measured here, 20-30 µs to a worker that has just finished a
task, ~60 µs after 1 ms idle and ~200 µs after 10 ms (an idle virtual core sleeps
deeply). Spinning instead of sleeping was measured twice. Polling for work (an earlier
pass) did not help: the worker then waits for the GIL, itself a sleeping wait. Both sides
spinning in GIL-free Numba loops on a flag (an atomic load and the CPU's pause, the GIL
taken only once work is there) cut a back-to-back call with 20 µs of work on each side
from 59-79 to 22-41 µs, but after an idle gap of 1-10 ms it took 110-1,080 µs instead of
64-115 (two runs of ``benchmarks/handoff.py`` on this 2-core virtual machine; without the
pause instruction the same, so not the hypervisor's pause-loop exits), and a training step
has such gaps. The worker alone spinning up to 1 ms after each task, in this pool, made a
GPT step slower: its start after a hand-off went from a median 60-85 µs to 0.5-1 ms. Two
more were measured without gain (``benchmarks/RESULTS.md``, ninth pass): chunks claimed by
whichever thread is free (in a step the worker is late by less than a chunk, and each
chunk pays its Python), and the caller polling a worker's lock before sleeping on it. The
worker starts ~40 µs after the hand-off if the caller releases the GIL at once, but
30-100 µs later again if the caller keeps it (the woken worker sleeps on the GIL:
``benchmarks/split_costs.py``), so a part should reach its first GIL-free call at once.
So the workers sleep, a kernel is one split, not one per product, and only work of more
than ~0.2 ms is split.

Rules for a function: it writes only its own part of the outputs, and it takes no
memory from the caching allocator -- the caller leases any scratch before the split and
gives each part its own (the allocator is locked as well, because the garbage collector
may free an array on any thread). A split inside a task runs serially on its thread.
Loops compute each element from the same operands whatever the split, so their results
do not depend on the number of threads; matrix products split into row ranges do, in the
last bits (``kernels/linalg.py``): runs repeat bit for bit for a given number of threads.

``set_num_threads(n)`` (``zero.set_num_threads``, PyTorch's name) changes how many threads
share the work; the default is the cores this process may use, or ``OMP_NUM_THREADS``
when it is set. A process forked from this one starts its own workers when it needs them.
"""
from __future__ import annotations

import _thread
import functools
import math
import os
import queue
import threading
from collections.abc import Callable

import numpy as np

__all__ = ["element_grain", "get_num_threads", "parallel_flat", "parallel_for", "parallel_rows", "ranges", "run_all",
           "set_num_threads", "share", "single_threaded_blas"]

SPLIT_NS = 100_000   # one core's work in each part of a split loop, at least (module docstring)


def _default_threads() -> int:
    configured = os.environ.get("OMP_NUM_THREADS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


class _Task:
    """A function run by a worker; ``done`` is released when it has returned."""

    __slots__ = ("function", "done", "error")

    def __init__(self, function: Callable[[], object]):
        self.function: Callable[[], object] | None = function
        self.error: BaseException | None = None
        self.done = _thread.allocate_lock()
        self.done.acquire()

    def run(self) -> None:
        try:
            assert self.function is not None      # run once
            self.function()
        except BaseException as error:  # noqa: B036 -- handed to the caller, which raises it
            self.error = error
        finally:
            self.function = None         # the arrays it holds go back to the pool now, not at the next task
            self.done.release()


class _Pool:
    def __init__(self) -> None:
        self.threads = _default_threads()
        self.tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self.workers: list[threading.Thread] = []
        self.local = threading.local()   # .inside: this thread is running a task

    def forget_workers(self) -> None:
        """After a fork: the child has only the thread that forked, none of the workers."""
        self.tasks, self.workers, self.local = queue.SimpleQueue(), [], threading.local()

    def _start(self) -> None:
        """Start the workers still missing (BLAS on one thread first)."""
        single_threaded_blas()
        while len(self.workers) < self.threads - 1:
            worker = threading.Thread(target=self._work, name=f"zero-cpu-{len(self.workers) + 1}", daemon=True)
            worker.start()
            self.workers.append(worker)

    def _work(self) -> None:
        self.local.inside = True
        while True:
            task = self.tasks.get()
            if task is None:             # fewer threads wanted: this worker ends
                return
            task.run()
            task = None                  # holds nothing while it waits

    def resize(self, threads: int) -> None:
        for _ in range(max(0, len(self.workers) - (threads - 1))):
            self.tasks.put(None)
        self.workers = self.workers[:max(0, threads - 1)]
        self.threads = threads

    def ranges(self, count: int, grain: int) -> list[tuple[int, int]]:
        parts = min(self.threads, count // max(grain, 1))
        if parts <= 1 or getattr(self.local, "inside", False):
            return [(0, count)]
        return [(part.start, part.stop) for part in (share(count, i, parts) for i in range(parts))]

    def run_all(self, functions: list[Callable[[], object]]) -> None:
        if len(functions) == 1 or getattr(self.local, "inside", False):
            for function in functions:
                function()
            return
        if len(self.workers) < min(self.threads, len(functions)) - 1:
            self._start()
        others = [_Task(function) for function in functions[1:]]
        for task in others:
            self.tasks.put(task)
        self.local.inside = True
        try:
            functions[0]()
        finally:
            self.local.inside = False
            for task in others:          # every task finishes before its outputs are read
                task.done.acquire()
        for task in others:
            if task.error is not None:
                raise task.error


_blas_single_threaded = False


def single_threaded_blas() -> None:
    """Set NumPy's BLAS to one thread, once per process (module docstring). Every CPU
    kernel that calls BLAS calls this first, with one thread in the pool as well: a
    product must not run on BLAS's threads before the first split and on one after it,
    or the first steps of a run would round differently from the rest."""
    global _blas_single_threaded
    if not _blas_single_threaded:
        from threadpoolctl import ThreadpoolController

        blas = [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]
        for lib in [lib for lib in blas if "numpy" in lib.filepath] or blas:   # NumPy's own, if found
            lib.set_num_threads(1)
        _blas_single_threaded = True


_pool = _Pool()


def share(count: int, part: int, parts: int) -> slice:
    """Part ``part`` of ``parts`` contiguous, nearly equal shares of range(count)."""
    return slice(count * part // parts, count * (part + 1) // parts)


def element_grain(elements_per_item: int, ns_per_element: float) -> int:
    """The fewest items worth a thread of their own: items of ``elements_per_item``
    elements, each element ``ns_per_element`` of one core's time, making SPLIT_NS."""
    return max(1, math.ceil(SPLIT_NS / (max(elements_per_item, 1) * ns_per_element)))


def ranges(count: int, grain: int = 1) -> list[tuple[int, int]]:
    """How range(count) is split: contiguous (start, stop) parts, at most one per thread,
    each at least ``grain`` long (one part when it is too short, or inside a task)."""
    return _pool.ranges(count, grain)


def run_all(functions: list[Callable[[], object]]) -> None:
    """Call every function, the first on this thread and the others on workers; returns
    when all have returned (an exception in any is raised here)."""
    _pool.run_all(functions)


def parallel_for(count: int, body: Callable[[int, int], object], grain: int = 1) -> None:
    """body(start, stop) for each part of ``ranges(count, grain)``, in parallel."""
    parts = _pool.ranges(count, grain)
    if len(parts) == 1:
        body(0, count)
    else:
        _pool.run_all([functools.partial(body, start, stop) for start, stop in parts])


def parallel_rows(rows: int, row_size: int, body: Callable[[int, int], object], ns_per_element: float) -> None:
    """``parallel_for`` over rows of ``row_size`` elements each, an element costing
    ``ns_per_element``: parts of at least SPLIT_NS of work (less is not worth a hand-off)."""
    parallel_for(rows, body, element_grain(row_size, ns_per_element))


def parallel_flat(loop: Callable[..., object], *arguments, ns_per_element: float = 0.0, part: int = 0) -> None:
    """loop(*arguments) for a loop over the elements of 1-D arrays, the first argument one
    of them, an element costing ``ns_per_element``: over ranges of every argument that is
    an array of the first one's size (other arguments as they are), on the pool's threads
    when there is work for two parts of SPLIT_NS (or, given ``part``, of that many
    elements); a smaller one is one plain call."""
    if not (part or ns_per_element > 0):
        raise ValueError("parallel_flat: give the loop's cost (ns_per_element) or a part size (part)")
    size, grain = arguments[0].size, part or element_grain(1, ns_per_element)
    if size < 2 * grain:
        loop(*arguments)
        return
    parallel_for(size, lambda lo, hi: loop(*(
        a[lo:hi] if isinstance(a, np.ndarray) and a.size == size else a for a in arguments)), grain)


def get_num_threads() -> int:
    """How many threads the CPU kernels use (the caller's included)."""
    return _pool.threads


def set_num_threads(threads: int) -> None:
    """Use ``threads`` threads (>= 1) for the CPU kernels from now on."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"set_num_threads: the number of threads must be an integer >= 1, got {threads!r}")
    _pool.resize(threads)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.forget_workers)
