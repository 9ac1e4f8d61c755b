"""Inside a DataLoader worker process: seeding, ``get_worker_info()``, the loop, error reports.

A worker is a real process (``multiprocessing``), started by the DataLoader's
iterator with a copy of the dataset, the collate function and a seed. It loops:
take a task ``(task number, indices)`` from its own index queue, fetch the batch
(the same ``fetch.py`` code the main process uses), pickle it, and put
``(task number, batch)`` on the results queue shared by all workers. The main
process puts the batches back in task order (see ``multiprocess.py``).

**Seeding, as PyTorch does.** Every ``iter(loader)`` draws a *base seed* from
the loader's ``generator`` (or Zero's default generator). Worker ``i`` then
seeds, before anything else runs in it:

* Zero's default generator with ``base_seed + i`` (so ``zero.rand`` and
  dropout in a dataset differ between workers but are reproducible),
* Python's ``random`` with ``base_seed + i``,
* NumPy's legacy global generator (``np.random.rand``) with a state derived
  from ``(base_seed, i)`` by ``numpy.random.SeedSequence``, so that NumPy
  augmentations do not repeat across workers (a classic bug with forked
  processes, which would otherwise all inherit the same NumPy state).

``get_worker_info().seed`` is ``base_seed + i``; a ``worker_init_fn(worker_id)``
runs after the seeding, and may re-seed other libraries from it. Persistent
workers are seeded once, when they start; their generators run on from epoch
to epoch (as in PyTorch), so epoch 2's augmentations differ from epoch 1's.

**Errors.** An exception raised in a worker (by the dataset, the collate
function or ``worker_init_fn``) is caught, its traceback formatted, and sent
instead of the batch; the main process raises an exception of the same type
whose message says which worker it was and carries the original traceback.
"""
from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ..random import manual_seed
from ..random import Generator
from .datapipes import IterDataPipe, MapDataPipe, apply_random_seed, apply_sharding
from .fetch import make_fetcher

# How often (seconds) a waiting worker checks that it has not been told to stop and that the main
# process is still there.
STATUS_CHECK_INTERVAL = 0.2


class WorkerInfo:
    """What a worker knows about itself: ``id``, ``num_workers``, ``seed`` and its copy of ``dataset``.

    Read-only, as in PyTorch (setting an attribute raises ``RuntimeError``).
    """

    __slots__ = ("id", "num_workers", "seed", "dataset")
    id: int
    num_workers: int
    seed: int

    def __init__(self, id: int, num_workers: int, seed: int, dataset) -> None:  # noqa: A002 (PyTorch's name)
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise RuntimeError(f"WorkerInfo is read-only: cannot set {name!r}")

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo`` inside a DataLoader worker process; ``None`` in the main process."""
    return _worker_info


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed Zero, ``random`` and NumPy's global generator for worker ``worker_id``; returns its seed."""
    seed = base_seed + worker_id
    manual_seed(seed)
    random.seed(seed)
    np.random.seed(np.random.SeedSequence(entropy=base_seed, spawn_key=(worker_id,)).generate_state(4))
    return seed


class ExceptionReport:
    """An exception caught in a worker, carried to the main process as its type and formatted traceback."""

    def __init__(self, where: str) -> None:
        kind, value, _ = sys.exc_info()
        self.type_name = kind.__name__ if kind is not None else "exception"
        self.exc_type: type = kind if kind is not None and _picklable(kind) else RuntimeError
        self.where = where
        self.text = "".join(traceback.format_exception(value))

    def reraise(self):
        message = f"Caught {self.type_name} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:  # KeyError's str() is the repr of its argument: keep the text readable
            message = _ReadableKeyErrorMessage(message)
        try:
            error = self.exc_type(message)
        except Exception:  # an exception type whose constructor wants other arguments
            raise RuntimeError(message) from None
        raise error


def _picklable(kind: type) -> bool:
    """Whether the main process can unpickle this exception type (not one defined inside a function)."""
    try:
        pickle.dumps(kind)
    except Exception:
        return False
    return True


class _ReadableKeyErrorMessage(str):
    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class IterationEnd:
    """Sent by a worker whose IterableDataset copy is exhausted."""

    worker_id: int


class Resume:
    """Sent to a persistent worker at the start of a new epoch: restart the fetcher, then acknowledge
    (with the epoch's seed for a DataPipe's random parts, see ``datapipes.py``)."""

    def __init__(self, shared_seed: int | None = None) -> None:
        self.shared_seed = shared_seed


def worker_loop(dataset, index_queue, result_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """The body of worker process ``worker_id`` (see the module's docstring)."""
    global _worker_info
    parent = os.getppid()
    where = f"in DataLoader worker process {worker_id}"
    seed = seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    if isinstance(dataset, (IterDataPipe, MapDataPipe)):
        apply_sharding(dataset, num_workers, worker_id)  # this worker's share of the pipeline
    failure = None  # an exception from start-up, sent as the answer to the first task
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        failure = ExceptionReport(where)
    exhausted = False
    try:
        while True:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                # Told to stop without a None arriving (the iterator was garbage collected, and its
                # queue's feeder thread went first), or the main process died: stop either way.
                if done_event.is_set() or os.getppid() != parent:
                    break
                continue
            if task is None:  # the iterator is shutting down
                break
            if isinstance(task, Resume):
                exhausted = False
                if task.shared_seed is not None:
                    apply_random_seed(dataset, Generator(seed=task.shared_seed))
                try:
                    fetcher, failure = make_fetcher(dataset, auto_collation, collate_fn, drop_last), None
                except Exception:
                    failure = ExceptionReport(where)
                result_queue.put((task, None))
                continue
            if done_event.is_set() or exhausted:
                continue  # the results would be thrown away: skip the work
            number, indices = task
            data: object   # what goes back: a batch, an IterationEnd or an ExceptionReport
            if failure is not None or fetcher is None:
                # start-up (or a Resume) failed: this task gets the report -- every task, while no
                # fetcher was ever made (not an AttributeError on None)
                data = failure
                if fetcher is not None:
                    failure = None
            else:
                try:
                    data = fetcher.fetch(indices)
                except StopIteration:
                    data, exhausted = IterationEnd(worker_id), True
                except Exception:
                    data = ExceptionReport(where)
            result_queue.put((number, _pickled(data, where)))
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C; the worker just ends
    if done_event.is_set():
        result_queue.cancel_join_thread()  # exit now, even with results the main process will never read
        result_queue.close()


def _pickled(data, where: str) -> bytes:
    """``data`` pickled here, so that a batch that cannot be pickled is reported, not lost.

    (A ``multiprocessing.Queue`` pickles in a background thread, where an error
    would only be printed and the main process would wait for ever.)
    """
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps(ExceptionReport(where + " (pickling the batch)"), protocol=pickle.HIGHEST_PROTOCOL)
