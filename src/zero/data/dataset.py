"""Datasets: what a DataLoader reads samples from (PyTorch's ``torch.utils.data`` names).

Two kinds, as in PyTorch:

* a **map-style** dataset (``Dataset``) has ``dataset[i]`` for ``i`` in
  ``0 .. len(dataset) - 1``; a sampler chooses the indices, so it can be
  shuffled, split and subset;
* an **iterable** dataset (``IterableDataset``) has only ``iter(dataset)``: a
  stream (lines of a file, generated data). It decides its own order; with
  worker processes every worker iterates its own copy of it, and the dataset
  splits the work itself with ``get_worker_info()`` (see ``worker.py``).

    dataset = TensorDataset(images, labels)            # [N, 784] float32, [N] int64
    train, val = random_split(dataset, [0.9, 0.1], generator=zero.Generator(seed=0))

Zero's own addition is the **batch method**: a map-style dataset may define
``batch(indices)`` returning the whole batch at once -- exactly what
``default_collate([dataset[i] for i in indices])`` would give -- and the
DataLoader then uses it instead of fetching samples one by one.
``TensorDataset`` (and so ``MNIST``) has one: a batch is one fancy index of each
whole array, not 64 small tensors stacked. ``Subset`` forwards it, so
``random_split`` keeps the fast path.
"""
from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar

import numpy as np

from ..errors import ShapeAssertionError, ZeroIndexError
from ..grad_mode import no_grad
from ..ops.joining import index_select
from ..random import Generator, default_generator
from ..tensors.creation import as_tensor, from_numpy, tensor

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` and, usually, ``__len__``.

    As in PyTorch there is no default ``__len__`` (``len()`` of a dataset that
    does not define one raises ``TypeError``); a DataLoader's default samplers
    need it. ``a + b`` concatenates two datasets (``ConcatDataset``).
    ``Dataset[...]`` may be subscripted for type hints, as in PyTorch.
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} is a Dataset and must define __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__``.

    A DataLoader over one takes no sampler or shuffle (the stream has its own
    order). With ``num_workers=k`` each of the k workers iterates its own copy,
    so without splitting every sample arrives k times; split inside
    ``__iter__`` with ``get_worker_info()`` (or in a ``worker_init_fn``)::

        def __iter__(self):
            info = get_worker_info()
            if info is None:                     # loading in the main process
                return iter(range(self.start, self.end))
            return iter(range(self.start + info.id, self.end, info.num_workers))
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} is an IterableDataset and must define __iter__")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are rows: ``dataset[i] == tuple(t[i] for t in tensors)``.

    Takes zero tensors or NumPy arrays (arrays are shared, not copied); all must
    have the same first dimension (``ShapeAssertionError``, an ``AssertionError``
    as PyTorch's, and Zero's ``ShapeError``). ``.tensors`` holds them as zero tensors.
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        tensors = tuple(as_tensor(t) for t in tensors)
        for i, t in enumerate(tensors):
            if t.ndim == 0:
                raise ZeroIndexError(f"TensorDataset: tensor {i} is 0-d; every tensor needs a first dimension")
            if t.shape[0] != tensors[0].shape[0]:
                sizes = ", ".join(str(list(t.shape)) for t in tensors)
                raise ShapeAssertionError(f"TensorDataset: tensors must have the same first dimension, got shapes "
                                 f"{sizes}")
        self.tensors = tensors

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def batch(self, indices) -> list:
        """Rows ``indices`` (a slice or an integer array) of every tensor, as new tensors.

        The list ``default_collate`` makes of a batch of tuples, one tensor per
        field, without going through the rows one by one. Batches are copies
        (a batch never aliases the dataset) and carry no autograd history.
        """
        return [_take_rows(t, indices) for t in self.tensors]


def _take_rows(t, indices):
    """``t[indices]`` as a fresh tensor."""
    if t.device.type == "cpu":
        rows = t.detach().numpy()[indices]  # a slice is a view: copy it; fancy indexing copies already
        return from_numpy(rows.copy() if isinstance(indices, slice) else rows)
    if isinstance(indices, slice):
        indices = np.arange(*indices.indices(t.shape[0]))
    with no_grad():
        return index_select(t.detach(), 0, tensor(indices, device=t.device))


def batch_method(dataset):
    """The dataset's ``batch(indices)`` method, or None if it has none (a Subset asks its dataset)."""
    if isinstance(dataset, Subset):
        return dataset.batch if batch_method(dataset.dataset) is not None else None
    if not hasattr(type(dataset), "batch"):  # (a MapDataPipe's ``batch`` is its functional form, not this)
        return None
    method = getattr(dataset, "batch", None)
    return method if callable(method) else None


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order: ``subset[i] == dataset[indices[i]]``."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        """Several samples at once (PyTorch's protocol; the dataset's own ``__getitems__`` if it has one)."""
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def batch(self, indices):
        """The wrapped dataset's batch method, at the mapped indices (only if it has one)."""
        mapped = self.indices[indices] if isinstance(indices, slice) else [self.indices[i] for i in indices]
        batch = batch_method(self.dataset)
        if batch is None:
            raise AttributeError(f"Subset.batch: the wrapped {type(self.dataset).__name__} has no batch method")
        return batch(np.asarray(mapped, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after another: indices ``0 .. len(a) - 1`` are ``a``'s, then ``b``'s ..."""

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets must not be empty")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset takes map-style datasets; chain IterableDatasets with ChainDataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError(f"ConcatDataset: index {index} out of range for length {len(self)}")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (``a + b`` for IterableDatasets)."""

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset takes IterableDatasets, got {type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)  # type: ignore[arg-type, misc]


class StackDataset(Dataset):
    """Several map-style datasets of one length side by side: a sample is the tuple (or dict) of theirs.

        StackDataset(images, texts)[i] == (images[i], texts[i])
        StackDataset(image=images, text=texts)[i] == {"image": images[i], "text": texts[i]}

    Datasets are given positionally (tuple samples) or by keyword (dict samples),
    not both; all must have the same length (``ValueError`` otherwise, as in PyTorch).
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: the datasets are given either positionally (tuple samples) or by "
                             "keyword (dict samples), not both")
        datasets: tuple | dict = args if args else kwargs
        members = list(datasets) if args else list(kwargs.values())
        if not members:
            raise ValueError("StackDataset: at least one dataset should be passed")
        self._length = len(members[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in members):  # type: ignore[arg-type]
            sizes = [len(d) for d in members]  # type: ignore[arg-type]
            raise ValueError(f"StackDataset: size mismatch between datasets: {sizes}")
        self.datasets = datasets

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """Several samples at once (PyTorch's protocol), as a list of tuples or dicts."""
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset[T_co]]:
    """Split ``dataset`` into non-overlapping random subsets of the given ``lengths``.

    ``lengths`` are sizes that add up to ``len(dataset)``, or fractions that
    add up to 1: each subset gets ``floor(fraction * N)`` samples and the
    remainder is dealt out one by one from the first subset on (PyTorch's
    rule; a subset left empty is warned about). The split is one permutation
    drawn from ``generator`` (default: Zero's default generator), so a seeded
    generator gives the same split on every run. Negative lengths are an error
    here (PyTorch accepts them and returns nonsense).
    """
    n = len(dataset)  # type: ignore[arg-type]
    lengths = list(lengths)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: fraction at index {i} is {fraction}, not between 0 and 1")
        sizes = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: split {i} has length 0 (an empty dataset)", stacklevel=2)
    else:
        sizes = [int(length) for length in lengths]
        if any(s != length or s < 0 for s, length in zip(sizes, lengths)):
            raise ValueError(f"random_split: lengths must be non-negative integers that add up to {n} (the "
                             f"dataset's length) or fractions that add up to 1; got {lengths}")
    if sum(sizes) != n:
        raise ValueError(f"random_split: the lengths {lengths} add up to {sum(sizes)}, "
                         f"but the dataset has {n} samples")
    order = (generator or default_generator()).permutation(n).tolist()
    ends = np.cumsum(sizes).tolist()
    return [Subset(dataset, order[end - size:end]) for size, end in zip(sizes, ends)]
