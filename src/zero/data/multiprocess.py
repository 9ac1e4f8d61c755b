"""Loading in worker processes (``num_workers > 0``): the main process's side.

    main process                                    worker i (worker.py)
    sampler --(task number, indices)--> index queue i --> fetch, pickle
        ^                                                      |
        +--- put back in task order <-- results queue <--------+

Tasks go to the workers in turn (round robin). At most
``prefetch_factor * num_workers`` tasks are outstanding: ``iter(loader)`` sends
that many at once, and each batch handed to the caller sends one more, so the
workers work ahead while the training step runs. Batches can arrive out of
order (worker 1 may finish before worker 0); they are held until their turn,
so the sequence of batches is exactly the one ``num_workers=0`` gives: the same
sampler, the same fetcher, the same indices in the same order.

With an IterableDataset a task's indices are placeholders ("your next batch");
a worker whose copy of the stream is exhausted says so once and is given no
more tasks; the epoch ends when every worker has.

Batches travel pickled through a pipe (a tensor pickles as a copy of its
values); PyTorch moves them through shared memory instead, which saves a copy
for large batches. ``pin_memory`` is accepted and does nothing: Zero's CPU
tensors are NumPy buffers, and copies to the GPU are not staged through
page-locked memory.

Failures are reported, never waited on for ever: an exception in a worker is
raised here with the worker's traceback; a worker that dies (killed, or
``os._exit``) raises ``RuntimeError`` naming it; with ``timeout > 0`` a batch
that takes longer raises ``RuntimeError``. Workers end when the epoch does
(or, with ``persistent_workers=True``, when the loader is garbage collected),
when the iterator is dropped mid-epoch, and by themselves if the main process
dies.

Workers should produce CPU data: a dataset whose tensors are on the GPU is
loaded with ``num_workers=0`` (a forked process cannot use its parent's CUDA
context), as in PyTorch.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import queue
import time

from .iterator import LoaderIterator
from .worker import ExceptionReport, IterationEnd, Resume, worker_loop

# How often (seconds) the main process, while waiting for a batch, checks that the workers are alive.
LIVENESS_CHECK_INTERVAL = 0.25
# How long a worker may take to finish its current batch once told to stop, before it is terminated.
JOIN_TIMEOUT = 5.0


class MultiProcessIterator(LoaderIterator):
    def __init__(self, loader) -> None:
        self._shut_down = True  # until the workers exist, there is nothing to shut down
        self._owner = os.getpid()
        super().__init__(loader)
        self._max_outstanding = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._results = context.Queue()
        self._done = context.Event()
        self._index_queues = []
        self._workers = []
        self._shut_down = False
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # exiting never waits on tasks a dead worker cannot take
            process = context.Process(
                target=worker_loop, daemon=True,
                args=(self._dataset, index_queue, self._results, self._done, self._auto_collation,
                      self._collate_fn, self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                      self._num_workers))
            process.start()
            self._index_queues.append(index_queue)
            self._workers.append(process)
        self._begin_epoch(first=True)

    # -- epochs ---------------------------------------------------------------------------------
    def reset(self, loader) -> None:
        """A new epoch on the same (persistent) workers: a new sampler order, the workers restarted."""
        self._start(loader)
        self._begin_epoch(first=False)

    def _begin_epoch(self, first: bool) -> None:
        self._next_to_send = 0
        self._next_to_yield = 0
        self._worker_of: dict[int, int] = {}  # task number -> worker, until its batch is yielded or skipped
        self._early: dict[int, object] = {}  # batches that arrived before their turn
        self._outstanding = 0
        self._active = [True] * self._num_workers
        self._turns = itertools.cycle(range(self._num_workers))
        if not first:
            for index_queue in self._index_queues:
                index_queue.put(Resume(self._shared_seed))
            acknowledged = 0
            while acknowledged < self._num_workers:
                number, _ = self._receive()
                acknowledged += isinstance(number, Resume)  # anything else is left from the last epoch
        for _ in range(self._max_outstanding):
            self._send_task()

    def _send_task(self) -> None:
        if self._outstanding >= self._max_outstanding:
            return
        try:
            indices = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._turns)
            if self._active[worker_id]:
                break
        else:
            return  # every worker's stream has ended
        self._index_queues[worker_id].put((self._next_to_send, indices))
        self._worker_of[self._next_to_send] = worker_id
        self._next_to_send += 1
        self._outstanding += 1

    # -- batches --------------------------------------------------------------------------------
    def _next_data(self):
        while True:
            # Skip the tasks of workers whose stream ended: those batches will never come.
            while self._next_to_yield < self._next_to_send:
                number = self._next_to_yield
                if number in self._early or self._active[self._worker_of[number]]:
                    break
                del self._worker_of[number]
                self._next_to_yield += 1
            else:
                if not self._persistent:
                    self.shutdown()
                raise StopIteration
            number = self._next_to_yield
            if number in self._early:
                return self._hand_out(number, self._early.pop(number))
            arrived, payload = self._receive()
            self._outstanding -= 1
            data = pickle.loads(payload)
            if isinstance(data, IterationEnd):
                self._active[data.worker_id] = False
                self._send_task()
            elif arrived == number:
                return self._hand_out(number, data)
            else:
                self._early[arrived] = data

    def _hand_out(self, number: int, data):
        del self._worker_of[number]
        self._next_to_yield += 1
        self._send_task()
        if isinstance(data, ExceptionReport):
            data.reraise()
        return data

    def _receive(self):
        """The next message on the results queue, checking meanwhile that the workers live and ``timeout``."""
        started = time.monotonic()
        while True:
            wait = LIVENESS_CHECK_INTERVAL
            if self._timeout > 0:
                wait = max(0.0, min(wait, started + self._timeout - time.monotonic()))
            try:
                return self._results.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [p for p in self._workers if not p.is_alive()]
            if dead:
                self.shutdown()
                codes = ", ".join(f"pid {p.pid} exit code {p.exitcode}" for p in dead)
                raise RuntimeError(f"DataLoader worker process exited unexpectedly ({codes}); if it was killed, "
                                   "it may have run out of memory") from None
            if self._timeout > 0 and time.monotonic() - started >= self._timeout:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds waiting for a batch "
                                   "from its workers") from None

    # -- the end --------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the workers (each finishes or abandons its current batch) and close the queues."""
        if self._shut_down or os.getpid() != self._owner:
            return  # (a forked worker holds a copy of this object: only the process that made it may stop it)
        self._shut_down = True
        self._done.set()
        for index_queue in self._index_queues:
            index_queue.put(None)
        for process in self._workers:
            process.join(timeout=JOIN_TIMEOUT)
            if process.is_alive():
                process.terminate()
                process.join()
        for index_queue in self._index_queues:
            index_queue.close()
        self._results.cancel_join_thread()
        self._results.close()

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:  # at interpreter exit the queues may be gone already; multiprocessing ends daemons
            pass
