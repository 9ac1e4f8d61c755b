"""Samplers: which indices of a map-style dataset a DataLoader visits, in which order.

    SequentialSampler(dataset)                 0, 1, 2, ... N-1
    RandomSampler(dataset)                     a fresh permutation every epoch
    RandomSampler(dataset, replacement=True, num_samples=k)   k uniform draws
    SubsetRandomSampler(indices)               a permutation of the given indices
    WeightedRandomSampler(weights, k)          k draws, index i with probability weights[i] / sum
    BatchSampler(sampler, batch_size, drop_last)   the sampler's indices in lists of batch_size

A sampler is anything with ``__iter__`` (and, for ``len(loader)``, ``__len__``);
a plain list of indices works too.

**When randomness is drawn.** Zero's random samplers take their epoch's
randomness when ``iter(sampler)`` is called -- not lazily, at the first
``next()`` as a Python generator would -- and a ``BatchSampler`` calls
``iter()`` on its sampler at once too. So ``iter(loader)`` fixes the epoch: the
generator's state right after it is known, whatever the training loop draws
later (the MNIST and GPT jobs' exact ``--resume`` rests on this). A permutation
of the dataset (``RandomSampler`` without replacement, ``SubsetRandomSampler``)
is drawn whole there, as PyTorch draws it; a stream that may be longer than the
dataset (``replacement=True``, ``num_samples`` beyond ``len(data)``, weighted
draws with replacement) takes one seed from the generator at ``iter()`` and
draws its indices lazily from a private generator made from it, a chunk of
``CHUNK`` at a time -- so ``RandomSampler(data, replacement=True,
num_samples=10**10)`` (an "infinite" loader) yields its first batch at once and
never holds more than a chunk ahead. A sampler without a ``generator`` draws
from Zero's default generator, so ``zero.manual_seed(s)`` makes every epoch
reproducible; PyTorch's draws a seed from it and permutes with a private
generator: the same idea, other numbers.

    DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)
        rank ``rank``'s share of each epoch (``set_epoch(e)`` before each epoch
        reshuffles), padded or cut to a multiple of ``num_replicas`` as PyTorch does;
        lives in distributed_sampler.py.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from itertools import islice
from typing import Generic, TypeVar

import numpy as np

from ..random import Generator, default_generator

T_co = TypeVar("T_co", covariant=True)


CHUNK = 32  # indices a lazy sampler draws at a time (PyTorch's RandomSampler draws 32 too)


def _private_stream(generator: Generator | None) -> np.random.Generator:
    """A NumPy generator seeded by one draw from ``generator`` (default: Zero's default
    generator): the draw happens now, the stream's numbers whenever they are asked for."""
    return np.random.Generator(np.random.PCG64((generator or default_generator()).next_seed()))


def _uniform_indices(rng: np.random.Generator, n: int, k: int) -> Iterator[int]:
    """``k`` uniform draws from ``range(n)``, ``CHUNK`` at a time."""
    while k > 0:
        chunk = min(k, CHUNK)
        yield from rng.integers(0, n, size=chunk, dtype=np.int64).tolist()
        k -= chunk


def _permutation_rounds(rng: np.random.Generator, n: int, k: int) -> Iterator[int]:
    """Permutations of ``range(n)`` one after another, the last cut so that ``k`` come out;
    each permutation is drawn when the previous one is used up."""
    while k > 0:
        order = rng.permutation(n)[:k].tolist()
        yield from order
        k -= len(order)


def _weighted_indices(rng: np.random.Generator, cumulative: np.ndarray, k: int) -> Iterator[int]:
    """``k`` draws with replacement, index i with probability proportional to its weight
    (``cumulative``: the running sum of the weights), ``CHUNK`` at a time."""
    last = len(cumulative) - 1
    while k > 0:
        chunk = min(k, CHUNK)
        u = rng.random(chunk) * cumulative[-1]
        yield from np.minimum(np.searchsorted(cumulative, u, side="right"), last).tolist()
        k -= chunk


def _is_positive_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and bool(value > 0)


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (indices, or lists of them for a batch sampler).

    ``__len__`` is deliberately not defined here: a sampler that knows its
    length defines it, and ``len(loader)`` uses it. (PyTorch's optional
    ``data_source`` argument is accepted and ignored.)
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} is a Sampler and must define __iter__")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1, every epoch."""

    def __init__(self, data_source: Sized):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Random indices of ``data_source``.

    Without replacement (the default) each epoch is a permutation; with
    ``num_samples`` larger than the dataset, whole permutations follow one
    another (and the last is cut short). With ``replacement=True`` it is
    ``num_samples`` independent uniform draws. Both streams are drawn lazily, a
    chunk at a time, so ``num_samples`` may be huge (10**10: an "infinite" loader). ``num_samples`` defaults to
    ``len(data_source)``; ``len(sampler) == num_samples``.
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got replacement={replacement!r}")
        if num_samples is not None and not _is_positive_int(num_samples):
            raise ValueError(f"RandomSampler: num_samples must be a positive integer, got "
                             f"num_samples={num_samples!r}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else int(self._num_samples)

    def __iter__(self) -> Iterator[int]:
        # The epoch's randomness is taken now, at iter() (see the module's docstring).
        n, k = len(self.data_source), self.num_samples
        if n == 0:
            return iter([])
        if not self.replacement and k <= n:
            order = (self.generator or default_generator()).permutation(n)  # one permutation, as PyTorch
            return iter(order[:k].tolist())
        rng = _private_stream(self.generator)
        return _uniform_indices(rng, n, k) if self.replacement else _permutation_rounds(rng, n, k)

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a fresh random order every epoch (e.g. a validation split)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None):
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        order = (self.generator or default_generator()).permutation(len(self.indices))
        return iter([self.indices[i] for i in order.tolist()])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices, index i drawn with probability ``weights[i] / sum(weights)``.

    With replacement the indices are drawn lazily (see the module's docstring).
    With ``replacement=False`` an index is drawn at most once (so
    ``num_samples`` may not exceed the number of positive weights). Weights
    that are negative, not finite, or all zero are refused when an epoch is
    drawn (``RuntimeError``, as PyTorch's ``multinomial`` does).
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None):
        if not _is_positive_int(num_samples):
            raise ValueError(f"WeightedRandomSampler: num_samples must be a positive integer, got "
                             f"num_samples={num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement must be a bool, got replacement={replacement!r}")
        weights_array = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights, dtype=np.float64)
        if weights_array.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights must be 1-d, got shape {tuple(weights_array.shape)}")
        self.weights = weights_array
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self.weights
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise RuntimeError("WeightedRandomSampler: weights must be finite and non-negative")
        if w.sum() <= 0:
            raise RuntimeError("WeightedRandomSampler: the weights add up to 0; nothing can be drawn")
        if not self.replacement and self.num_samples > np.count_nonzero(w):
            raise RuntimeError(f"WeightedRandomSampler: cannot draw {self.num_samples} samples without "
                               f"replacement from {np.count_nonzero(w)} positive weights")
        if not self.replacement:  # at most len(weights) indices: drawn whole, now
            rng = (self.generator or default_generator()).numpy
            order = rng.choice(len(w), size=self.num_samples, replace=False, p=w / w.sum())
            return iter(order.tolist())
        return _weighted_indices(_private_stream(self.generator), np.cumsum(w), self.num_samples)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups another sampler's indices into lists of ``batch_size``.

    The last list is shorter when the indices do not divide evenly, or dropped
    with ``drop_last=True``; so ``len()`` is ``ceil(len(sampler) / batch_size)``,
    or ``floor`` with ``drop_last``. ``sampler`` may be any iterable of indices.
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool):
        if not _is_positive_int(batch_size):
            raise ValueError(f"BatchSampler: batch_size must be a positive integer, got batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be a bool, got drop_last={drop_last!r}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        # iter(sampler) now, not at the first next(): a random sampler's epoch is drawn at iter().
        return self._batches(iter(self.sampler))

    def _batches(self, indices: Iterator[int]) -> Iterator[list]:
        while True:
            batch = list(islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
