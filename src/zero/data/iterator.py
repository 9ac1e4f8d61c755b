"""What ``iter(loader)`` returns: the base shared by both iterators, and the in-process one.

Every iterator, at creation (that is, inside ``iter(loader)``), in this order:

1. calls ``iter()`` on the loader's sampler -- a random sampler draws the
   epoch's whole order now (see ``sampler.py``);
2. draws one base seed for worker processes from the loader's ``generator``
   (or Zero's default generator), whether or not there are workers.

Drawing the seed also with ``num_workers=0`` is what PyTorch does, and it is
what makes the random stream -- and so the order of every later epoch and every
later random draw of the program -- the same whether batches are loaded in the
main process or in workers. (A persistent iterator draws, and discards, one on
each reset as well, for the same reason.)
"""
from __future__ import annotations

import warnings

from ..random import default_generator
from .dataset import IterableDataset
from .datapipes import IterDataPipe, MapDataPipe, apply_sharding, seed_datapipes
from .fetch import make_fetcher


def loader_length(dataset, iterable: bool, batch_size, drop_last: bool, index_sampler) -> int:
    """``len(loader)``: the index sampler's length, or for an IterableDataset its length in batches."""
    if not iterable:
        return len(index_sampler)
    length = len(dataset)  # (TypeError if the stream has no length)
    if batch_size is not None:
        length = length // batch_size if drop_last else -(-length // batch_size)
    return length


class LoaderIterator:
    """Iterates one epoch of a DataLoader; subclasses define ``_next_data``."""

    def __init__(self, loader) -> None:
        # The iterator keeps what it needs, not the loader: a persistent loader holds its iterator,
        # and a cycle between them would keep the workers alive until the garbage collector ran.
        self._dataset = loader.dataset
        self._iterable = isinstance(loader.dataset, IterableDataset)
        self._auto_collation = loader._auto_collation
        self._batch_size = loader.batch_size
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._generator = loader.generator
        self._num_workers = loader.num_workers
        self._start(loader)
        self._base_seed = self._base_seed_now

    def _start(self, loader) -> None:
        """Steps 1 and 2 of the module's docstring; also resets the count of batches yielded."""
        self._reported_length = loader._reported_length
        self._shared_seed = seed_datapipes(self._dataset, self._generator)  # (DataPipes only; else None)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed_now = (self._generator or default_generator()).next_seed()
        self._yielded = 0

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return loader_length(self._dataset, self._iterable, self._batch_size, self._drop_last, self._index_sampler)

    def __next__(self):
        data = self._next_data()
        self._yielded += 1
        self._warn_if_past_reported_length()
        return data

    def _next_data(self):
        raise NotImplementedError

    def _warn_if_past_reported_length(self) -> None:
        reported = self._reported_length
        if self._iterable and reported is not None and self._yielded == reported + 1:
            hint = (" With worker processes, every worker iterates its own copy of an IterableDataset: split "
                    "the work with get_worker_info()." if self._num_workers > 0 else "")
            warnings.warn(f"DataLoader: len() of this loader over an IterableDataset was {reported}, but "
                          f"{self._yielded} batches have now been yielded.{hint}", stacklevel=3)


class SingleProcessIterator(LoaderIterator):
    """``num_workers=0``: every batch is fetched in the main process, when ``next()`` asks for it."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            apply_sharding(self._dataset, 1, 0)  # (one process: its sharding_filter keeps everything)
        self._fetcher = make_fetcher(self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)  # StopIteration: the epoch is over
        return self._fetcher.fetch(index)  # (an exhausted IterableDataset raises StopIteration too)
