"""Fetchers: from what the sampler yields (an index, or a list of them) to a batch.

The same fetcher runs in the main process (``num_workers=0``) and inside each
worker process, so both produce identical batches from identical indices.

* ``MapFetcher`` (map-style dataset). With automatic batching (``batch_size``
  or ``batch_sampler`` given) it gets a list of indices and returns, in order
  of preference: ``dataset.batch(indices)`` when the DataLoader uses
  ``default_collate`` (Zero's fast path: whole arrays indexed at once, see
  ``dataset.py``); else ``collate_fn(dataset.__getitems__(indices))`` when the
  dataset has PyTorch's ``__getitems__``; else ``collate_fn([dataset[i] ...])``.
  Without automatic batching (``batch_size=None``) it gets one index and
  returns ``collate_fn(dataset[index])``.
* ``IterableFetcher`` (iterable dataset) ignores the indices' values: a list
  of ``batch_size`` placeholders means "the next ``batch_size`` items of the
  stream". A short last batch is kept, or dropped with ``drop_last``; an
  exhausted stream raises ``StopIteration``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .collate import default_collate
from .dataset import IterableDataset, batch_method


def _as_slice_or_array(indices):
    """A run ``[a, a+1, ..., b-1]`` as ``slice(a, b)`` (a view to copy, not a gather), else an int64 array."""
    if isinstance(indices, list) and indices and type(indices[0]) is int:
        start = indices[0]
        if start >= 0 and indices == list(range(start, start + len(indices))):
            return slice(start, start + len(indices))
    return np.asarray(indices, dtype=np.int64)


class MapFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.batch = batch_method(dataset) if auto_collation and collate_fn is default_collate else None
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.batch is not None:
            return self.batch(_as_slice_or_array(index))
        if self.getitems is not None:
            return self.collate_fn(self.getitems(index))
        return self.collate_fn([self.dataset[i] for i in index])


class IterableFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.stream: Iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.stream))
        items = []
        for _ in index:
            try:
                items.append(next(self.stream))
            except StopIteration:
                self.ended = True
                break
        if not items or (self.drop_last and len(items) < len(index)):
            raise StopIteration
        return self.collate_fn(items)


def make_fetcher(dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
    kind = IterableFetcher if isinstance(dataset, IterableDataset) else MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)


class _DatasetKind:
    """PyTorch's constants for the two kinds of dataset, and the fetcher of each."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        if kind not in (_DatasetKind.Map, _DatasetKind.Iterable):
            raise ValueError(f"_DatasetKind: unknown kind {kind!r} (0: Map, 1: Iterable)")
        fetcher = IterableFetcher if kind == _DatasetKind.Iterable else MapFetcher
        return fetcher(dataset, auto_collation, collate_fn, drop_last)
