"""Datasets and the DataLoader: from a dataset to batches of tensors.

    dataset = TensorDataset(images, labels)            # [N, 784] float32, [N] int64
    loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=False)
    for x, y in loader:                                # x: [64, 784], y: [64]
        ...

A dataset that holds whole tensors (``TensorDataset`` and its subclasses, such
as ``MNIST``; any dataset with a ``batch(indices)`` method) is batched by
indexing the whole arrays at once -- a slice, or a fancy index with the
shuffled positions -- never by fetching and stacking one sample at a time.
Any other dataset (``__len__`` and ``__getitem__``) is batched by stacking its
samples.

Shuffling draws one permutation per epoch, when ``iter(loader)`` is called,
from ``generator`` (a ``zero.Generator``) or else from Zero's default
generator, so ``zero.manual_seed(s)`` makes the order of every epoch
reproducible, and each epoch is shuffled anew.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..errors import ShapeError
from ..grad_mode import no_grad
from ..ops.joining import index_select, stack
from ..random import default_generator
from ..tensors.creation import as_tensor, from_numpy, tensor
from ..tensors.tensor import Tensor


class Dataset:
    """What a DataLoader needs: ``len(dataset)`` and ``dataset[i]``."""

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index):
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples are rows: ``dataset[i] == (t[i] for t in tensors)``.

    Takes zero tensors or NumPy arrays (arrays are shared, not copied); all must
    have the same first dimension. ``.tensors`` holds them as zero tensors.
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        tensors = tuple(as_tensor(t) for t in tensors)
        for i, t in enumerate(tensors):
            if t.ndim == 0:
                raise ShapeError(f"TensorDataset: tensor {i} is 0-d; every tensor needs a first dimension")
            if t.shape[0] != tensors[0].shape[0]:
                sizes = ", ".join(str(list(t.shape)) for t in tensors)
                raise ShapeError(f"TensorDataset: tensors must have the same first dimension, got shapes "
                                 f"{sizes}")
        self.tensors = tensors

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def batch(self, indices) -> tuple:
        """Rows ``indices`` (a slice or an integer array) of every tensor, as new contiguous tensors."""
        return tuple(_take_rows(t, indices) for t in self.tensors)


def _take_rows(t, indices):
    """``t[indices]`` as a fresh tensor (a batch never aliases the dataset)."""
    if t.device.type == "cpu":
        rows = t.detach().numpy()[indices]  # a slice is a view: copy it; fancy indexing copies already
        return from_numpy(rows.copy() if isinstance(indices, slice) else rows)
    if isinstance(indices, slice):
        indices = np.arange(*indices.indices(t.shape[0]))
    with no_grad():
        return index_select(t.detach(), 0, tensor(indices, device=t.device))


def _collate(samples: list):
    """Stack a list of samples: a tuple of fields becomes a tuple of batched tensors."""
    first = samples[0]
    if isinstance(first, (tuple, list)):
        return tuple(_collate([s[i] for s in samples]) for i in range(len(first)))
    if isinstance(first, Tensor):
        return stack([s.detach() for s in samples])
    return tensor(np.stack([np.asarray(s) for s in samples]) if isinstance(first, np.ndarray) else samples)


class DataLoader:
    """Batches of a dataset, in order or shuffled.

    Each batch is a tuple of zero tensors (one per field of a sample; a dataset
    whose samples are single values gives single tensors). ``len(loader)`` is
    the number of batches: ``ceil(N / batch_size)``, or ``floor`` with
    ``drop_last=True``, which drops a last batch smaller than ``batch_size``.
    """

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 generator=None):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive integer, got {batch_size!r}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.generator = generator

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _order(self):
        """This epoch's positions: None for 0..N-1 in order, else a permutation."""
        if not self.shuffle:
            return None
        return (self.generator or default_generator()).permutation(len(self.dataset))

    def __iter__(self) -> Iterator:
        # The permutation is drawn here, at iter(), not at the first next(): the RNG state after
        # iter(loader) is fixed, whatever the training loop draws later.
        return self._batches(self._order())

    def _batches(self, order) -> Iterator:
        n = len(self.dataset)
        stop = n - n % self.batch_size if self.drop_last else n
        whole = hasattr(self.dataset, "batch")
        for start in range(0, stop, self.batch_size):
            end = min(start + self.batch_size, stop)
            if whole:
                yield self.dataset.batch(slice(start, end) if order is None else order[start:end])
            else:
                positions = range(start, end) if order is None else order[start:end].tolist()
                yield _collate([self.dataset[i] for i in positions])
