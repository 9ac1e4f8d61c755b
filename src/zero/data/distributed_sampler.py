"""``DistributedSampler``: each rank's share of a map-style dataset (PyTorch's ``torch.utils.data.distributed``).

    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)          # else every epoch has the same order
        for batch in loader: ...

Every rank builds the same order of the whole dataset -- a permutation drawn from a
private generator seeded with ``seed + epoch`` (so no rank needs to talk to another),
or ``0 .. N-1`` without ``shuffle`` -- makes its length a multiple of ``num_replicas``
(``drop_last=False``: the order is padded by repeating its start; ``drop_last=True``:
its tail is cut), then takes every ``num_replicas``-th index from ``rank`` on. So the
ranks' shares are disjoint but for the padding and all have ``len(sampler)`` indices,
and every rank runs the same number of steps. Without shuffling the indices are
PyTorch's exactly; shuffled, the permutation comes from Zero's generator (PyTorch's
rule, other numbers).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sized

import numpy as np

from .sampler import Sampler


def _world(what: str):
    """``get_world_size``/``get_rank`` of the default process group (which must exist)."""
    from .. import distributed as dist  # on first use: zero.data does not need the distributed package

    if not dist.is_initialized():
        raise ValueError(f"DistributedSampler: {what} was not given and the default process group has not been "
                         "initialized; call zero.distributed.init_process_group() or pass "
                         "num_replicas= and rank=")
    return dist.get_world_size() if what == "num_replicas" else dist.get_rank()


class DistributedSampler(Sampler[int]):
    """Rank ``rank``'s share of ``dataset`` among ``num_replicas`` ranks (see the module's docstring).

    ``num_replicas`` and ``rank`` default to the default process group's size and this
    process's rank. ``len(sampler)`` is ``ceil(N / num_replicas)``, or with
    ``drop_last=True`` (when N does not divide) ``ceil((N - num_replicas) / num_replicas)``.
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _world("num_replicas")
        if rank is None:
            rank = _world("rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.Generator(np.random.PCG64(self.seed + self.epoch)).permutation(n)
        else:
            order = np.arange(n)
        if self.drop_last:
            order = order[:self.total_size]
        elif self.total_size > n:
            order = np.resize(order, self.total_size)  # repeats the order from its start
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next ``iter()`` shuffles for (the same on every rank)."""
        self.epoch = epoch
