"""The DataLoader: from a dataset to batches, with PyTorch's arguments and rules.

    loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=False, num_workers=0)
    for x, y in loader:                                # x: [64, 784], y: [64]
        ...

How the arguments fit together (as in PyTorch):

* The **sampler** chooses indices: ``sampler=`` if given, else a
  ``RandomSampler`` (``shuffle=True``) or a ``SequentialSampler``.
* ``batch_size`` groups them with a ``BatchSampler(sampler, batch_size,
  drop_last)``; or ``batch_sampler=`` gives the lists of indices itself (and
  then ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last`` must stay at
  their defaults). ``batch_size=None`` turns batching off: every sample is one
  "batch", passed through ``collate_fn`` (``default_convert`` by default).
* ``collate_fn`` turns a list of samples into a batch (``default_collate``).
* An ``IterableDataset`` takes no ``sampler``/``batch_sampler``/``shuffle``:
  batches are consecutive items of its stream.
* ``num_workers > 0`` fetches batches in worker processes (``multiprocess.py``,
  ``worker.py``): the batches are the same, in the same order, as with
  ``num_workers=0``. ``prefetch_factor`` (default 2) batches per worker are
  fetched ahead; ``persistent_workers=True`` keeps the workers between
  epochs; ``worker_init_fn(worker_id)`` runs first in each worker;
  ``multiprocessing_context`` picks the start method ("fork", "spawn" ...);
  ``timeout`` bounds the wait for one batch (seconds; 0: no limit).
* ``pin_memory`` (and ``pin_memory_device``) are accepted and do nothing:
  Zero's CPU tensors are not page-locked, so there is nothing to pin.

``len(loader)`` is ``len(batch_sampler)`` -- ``ceil(len(sampler) / batch_size)``,
or ``floor`` with ``drop_last`` -- or ``len(sampler)`` without batching; for an
IterableDataset, ``len(dataset)`` divided the same way (a ``TypeError`` if the
dataset has no ``__len__``).

**Zero's two additions, for the default arguments.** A dataset with a
``batch(indices)`` method (``TensorDataset``, ``MNIST``, a ``Subset`` of one)
is batched by indexing whole arrays at once, not sample by sample, when the
collate function is ``default_collate``; the batch is the same either way.
And the epoch's order is drawn at ``iter(loader)`` (see ``sampler.py`` and
``iterator.py``): ``zero.manual_seed(s)`` makes every epoch reproducible, and
the random state right after ``iter(loader)`` is fixed, which exact
``--resume`` relies on.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os
import warnings
from collections.abc import Callable

from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .datapipes import IterDataPipe, apply_shuffle_settings
from .iterator import SingleProcessIterator, loader_length
from .multiprocess import MultiProcessIterator
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class _EndlessPlaceholders:
    """The sampler of an IterableDataset: ``None`` for ever (the stream itself decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


# Attributes that define what the loader yields; PyTorch refuses to change them after construction.
_FIXED_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Batches of a dataset: PyTorch's ``torch.utils.data.DataLoader`` (see the module's docstring)."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = ""):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be a non-negative integer (0 loads in the main "
                             f"process), got num_workers={num_workers!r}")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout must be non-negative, got timeout={timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor applies to worker processes only: pass num_workers > 0, "
                             "or leave prefetch_factor=None")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int) or prefetch_factor < 1):
            # (PyTorch accepts 0 here and fails at iter(); there is no loading without fetching ahead at all.)
            raise ValueError(f"DataLoader: prefetch_factor must be a positive integer, got {prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers=True needs num_workers > 0")

        if isinstance(dataset, IterDataPipe):
            dataset = apply_shuffle_settings(dataset, shuffle)  # (shuffle= turns its Shufflers on or off)
            shuffle = None
        if isinstance(dataset, IterableDataset):
            unset = {"shuffle": shuffle in (None, False), "sampler": sampler is None,
                     "batch_sampler": batch_sampler is None}
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if not unset[name]:
                    raise ValueError(f"DataLoader over an IterableDataset: {name} must be left unset (the stream "
                                     f"has its own order), got {name}={value!r}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler= and shuffle=True are mutually exclusive (the sampler decides "
                             "the order; use RandomSampler to shuffle)")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler= is mutually exclusive with batch_size, shuffle, "
                                 "sampler and drop_last (the batch sampler decides all four)")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None turns automatic batching off, so drop_last=True has "
                             "nothing to drop")

        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _EndlessPlaceholders()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # checks both, as PyTorch's does
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory  # accepted; nothing to pin (see the module's docstring)
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: MultiProcessIterator | None = None  # the persistent workers' iterator
        self._reported_length: int | None = None  # len(loader) of an IterableDataset, once asked (for a warning)
        self._initialized = True
        _warn_if_too_many_workers(num_workers)

    def __setattr__(self, name, value):
        if name in _FIXED_AFTER_INIT and getattr(self, "_initialized", False):
            raise ValueError(f"DataLoader: {name} cannot be changed after the DataLoader is made; make a new one")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"DataLoader: multiprocessing_context applies to worker processes only, but "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"DataLoader: multiprocessing_context must be one of {methods}, got {context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"DataLoader: multiprocessing_context must be a start method's name or a "
                                f"multiprocessing context, got {context!r}")
        self._multiprocessing_context = context

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterator draws from: lists of indices when batching, single indices when not."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        iterable = isinstance(self.dataset, IterableDataset)
        length = loader_length(self.dataset, iterable, self.batch_size, self.drop_last, self._index_sampler)
        if iterable:
            self._reported_length = length  # to warn if the stream turns out longer
        return length

    def __iter__(self):
        if self.num_workers == 0:
            return SingleProcessIterator(self)
        if not self.persistent_workers:
            return MultiProcessIterator(self)
        if self._iterator is None:
            self._iterator = MultiProcessIterator(self)
        else:
            self._iterator.reset(self)
        return self._iterator


def _warn_if_too_many_workers(num_workers: int) -> None:
    """Warn when there are more workers than CPUs this process may use (they would only compete)."""
    if num_workers == 0:
        return
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if usable is not None and num_workers > usable:
        warnings.warn(f"DataLoader: num_workers={num_workers} worker processes, but this process may use only "
                      f"{usable} CPUs; more workers than CPUs slow loading down", stacklevel=3)
