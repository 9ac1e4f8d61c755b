"""The CPU backend's threads: one pool for every kernel, matrix products included.

Zero owns the threads. NumPy's BLAS (OpenBLAS) keeps threads of its own that spin for a
while after each product, and any other thread that wants a core then competes with a
spinning one; so Zero sets BLAS to one thread before its first kernel that calls BLAS
(``single_threaded_blas``) and splits the work itself, into parts that run on this pool.
*When* a loop, a product or a fused kernel is split, and into which parts, is decided in
one place, ``parallel.py``; this module is the pool's mechanics.

How a split runs. ``run_all(functions)`` calls the first function on the calling thread
and the others on worker threads, and returns when all have returned (an exception in
any is raised in the caller); ``parallel_for(count, body, grain)`` does it for the parts
of ``ranges(count, grain)``: at most ``get_num_threads()`` contiguous ranges of at least
``grain`` items. A function must spend its time outside the GIL: NumPy calls
(``np.matmul`` releases it) or Numba loops (``nogil``, as ``kernels._jit`` compiles them),
and it should reach its first GIL-free call at once (a woken worker that finds the GIL
taken sleeps again). The workers sleep between tasks: spinning, polling and work
stealing each lost in a training step, and a hand-off costs tens of microseconds, more
after the worker has slept. Measured by ``benchmarks/investigations/handoff.py``; figures in benchmarks/journal/.

Rules for a function: it writes only its own part of the outputs, and it takes no
memory from the caching allocator -- the caller leases any scratch before the split and
gives each part its own (the allocator is locked as well, because the garbage collector
may free an array on any thread). A split inside a task runs serially on its thread.
Loops compute each element from the same operands whatever the split, so their results
do not depend on the number of threads; matrix products split into row ranges do, in the
last bits: runs repeat bit for bit for a given number of threads.

``set_num_threads(n)`` (``zero.set_num_threads``, PyTorch's name) changes how many threads
share the work; the default is the cores this process may use, or ``OMP_NUM_THREADS``
when it is set. A process forked from this one starts its own workers when it needs them.
"""
from __future__ import annotations

import _thread
import functools
import os
import queue
import threading
from collections.abc import Callable

__all__ = ["get_num_threads", "parallel_for", "ranges", "run_all", "set_num_threads", "share",
           "single_threaded_blas"]


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
        return [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]   # ``share``'s parts

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
