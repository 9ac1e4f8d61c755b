"""Issue 37: lazy samplers, DistributedSampler, StackDataset, Subset/ConcatDataset/random_split against PyTorch."""
import tracemalloc
from collections import Counter
from itertools import islice

import numpy as np
import pytest

import zero
from zero.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, DistributedSampler,
                             IterableDataset, RandomSampler, StackDataset, Subset, SubsetRandomSampler,
                             TensorDataset, WeightedRandomSampler, random_split)

torch = pytest.importorskip("torch")
tud = torch.utils.data

HUGE = 10**10


@pytest.mark.parametrize("make", [
    lambda: RandomSampler(range(100), replacement=True, num_samples=HUGE),
    lambda: RandomSampler(range(100), replacement=False, num_samples=HUGE),
    lambda: WeightedRandomSampler([1.0] * 100, HUGE),
], ids=["replacement", "permutation rounds", "weighted"])
def test_a_huge_sampler_yields_its_first_batch_at_once_without_allocating(make):
    tracemalloc.start()
    try:
        sampler = make()
        batch = next(iter(BatchSampler(sampler, 64, drop_last=False)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(sampler) == HUGE and len(batch) == 64 and all(0 <= i < 100 for i in batch)
    assert peak < 1 << 20, peak  # far less than the 80 GB 10**10 indices would take


def test_a_huge_sampler_feeds_a_loader():
    data = TensorDataset(np.arange(50.0))
    loader = DataLoader(data, batch_size=8, sampler=RandomSampler(data, replacement=True, num_samples=HUGE))
    assert len(loader) == HUGE // 8
    batches = list(islice(iter(loader), 3))
    assert [b[0].shape for b in batches] == [(8,)] * 3


def test_the_same_generator_gives_the_same_lazy_order_and_iter_fixes_the_epoch():
    def order(seed, **kwargs):
        return list(RandomSampler(range(7), generator=zero.Generator(seed=seed), **kwargs))

    for kwargs in ({"replacement": True, "num_samples": 100}, {"num_samples": 23}, {}):
        assert order(5, **kwargs) == order(5, **kwargs) and order(5, **kwargs) != order(6, **kwargs)
    zero.manual_seed(0)
    iterator = iter(RandomSampler(range(7), replacement=True, num_samples=1000))
    state = zero.get_rng_state()
    list(iterator)  # the lazy draws come from a private stream, not the default generator
    assert zero.get_rng_state() == state
    zero.manual_seed(0)
    assert list(RandomSampler(range(7), replacement=True, num_samples=1000)) == list(
        RandomSampler(range(7), replacement=True, num_samples=1000, generator=zero.Generator(seed=0)))


def test_permutation_rounds_and_uniform_draws_have_the_right_distribution():
    rounds = list(RandomSampler(range(10), num_samples=95, generator=zero.Generator(seed=1)))
    assert len(rounds) == 95
    for start in range(0, 95, 10):
        chunk = rounds[start:start + 10]
        assert len(set(chunk)) == len(chunk)  # each round is (a prefix of) a permutation
    draws = Counter(RandomSampler(range(10), replacement=True, num_samples=20000, generator=zero.Generator(seed=2)))
    assert set(draws) == set(range(10)) and all(1800 < c < 2200 for c in draws.values())


def test_weighted_draws_with_replacement_follow_the_weights_lazily():
    weights = zero.tensor([0.0, 1.0, 2.0, 0.0, 5.0], dtype=zero.float64)
    counts = Counter(WeightedRandomSampler(weights, 16000, generator=zero.Generator(seed=0)))
    assert counts[0] == counts[3] == 0
    for i, expected in ((1, 2000), (2, 4000), (4, 10000)):
        assert abs(counts[i] - expected) < 300, counts
    sampler = WeightedRandomSampler([1.0, 3.0], 50, generator=zero.Generator(seed=4))
    assert list(sampler) != list(sampler)  # a new epoch each iter()
    a = WeightedRandomSampler([1.0, 3.0], 50, generator=zero.Generator(seed=4))
    assert list(a) == list(WeightedRandomSampler([1.0, 3.0], 50, generator=zero.Generator(seed=4)))


def test_subset_random_sampler_is_a_permutation_of_its_indices_like_pytorch():
    indices = [3, 9, 4, 12]
    ours = sorted(SubsetRandomSampler(indices, generator=zero.Generator(seed=0)))
    theirs = sorted(tud.SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(0)))
    assert ours == theirs and len(SubsetRandomSampler(indices)) == len(tud.SubsetRandomSampler(indices))


@pytest.mark.parametrize("n", [0, 1, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_without_shuffle_gives_pytorchs_indices(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        theirs = tud.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                        drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@pytest.mark.parametrize("n, drop_last", [(10, False), (11, False), (11, True)])
def test_distributed_sampler_shuffles_by_seed_and_epoch(n, drop_last):
    def shares(epoch, seed=0):
        samplers = [DistributedSampler(range(n), 4, rank, seed=seed, drop_last=drop_last) for rank in range(4)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    first = shares(0)
    theirs = [list(tud.DistributedSampler(range(n), 4, rank, drop_last=drop_last)) for rank in range(4)]
    assert [len(s) for s in first] == [len(s) for s in theirs]
    everything = [i for share in first for i in share]
    if drop_last:
        assert len(set(everything)) == len(everything) == 8  # disjoint, the tail cut
    else:
        assert set(everything) == set(range(n))  # all covered, padded by repeats
    assert shares(0) == first and shares(1) != first and shares(0, seed=1) != first
    assert first != [list(range(n))[r:12:4] for r in range(4)]  # shuffled


def test_distributed_sampler_errors():
    for rank in (-1, 4):
        with pytest.raises(ValueError, match=r"Invalid rank .*\[0, 3\]"):
            DistributedSampler(range(5), num_replicas=4, rank=rank)
        with pytest.raises(ValueError, match=r"Invalid rank"):
            tud.DistributedSampler(range(5), num_replicas=4, rank=rank)
    with pytest.raises(ValueError, match="process group"):
        DistributedSampler(range(5))


def test_stack_dataset_like_pytorch():
    a, b = list(range(4)), [x * 10 for x in range(4)]
    for args, kwargs in (((a, b), {}), ((), {"x": a, "y": b})):
        ours, theirs = StackDataset(*args, **kwargs), tud.StackDataset(*args, **kwargs)
        assert len(ours) == len(theirs) == 4
        assert [ours[i] for i in range(4)] == [theirs[i] for i in range(4)]
        assert ours.__getitems__([2, 0]) == theirs.__getitems__([2, 0])
    for args, kwargs in (((a,), {"y": b}), ((), {}), ((a, b[:3]), {})):
        with pytest.raises(ValueError):
            tud.StackDataset(*args, **kwargs)
        with pytest.raises(ValueError):
            StackDataset(*args, **kwargs)
    batch = next(iter(DataLoader(StackDataset(TensorDataset(np.arange(4.0)), b), batch_size=2)))
    assert batch[0][0].tolist() == [0.0, 1.0] and batch[1].tolist() == [0, 10]


def test_subset_and_concat_dataset_index_like_pytorch():
    a, b = list(range(5)), list(range(100, 103))
    for ours, theirs in ((Subset(a, [4, 0, 2]), tud.Subset(a, [4, 0, 2])),
                         (ConcatDataset([a, b]), tud.ConcatDataset([a, b]))):
        assert len(ours) == len(theirs)
        assert [ours[i] for i in range(-len(ours), len(ours))] == [theirs[i] for i in range(-len(theirs), len(theirs))]
    assert ConcatDataset([a, b]).cumulative_sizes == tud.ConcatDataset([a, b]).cumulative_sizes
    for data in (ConcatDataset([a, b]), tud.ConcatDataset([a, b])):
        with pytest.raises(ValueError):
            data[-9]
        with pytest.raises(IndexError):
            data[8]


@pytest.mark.parametrize("n, lengths", [(10, [0.5, 0.5]), (11, [0.3, 0.3, 0.4]), (7, [0.1, 0.9]), (10, [3, 7]),
                                        (5, [1 / 3, 1 / 3, 1 / 3])])
def test_random_split_sizes_match_pytorch(n, lengths):
    ours = random_split(list(range(n)), lengths, generator=zero.Generator(seed=0))
    theirs = tud.random_split(list(range(n)), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))


def test_chain_dataset_like_pytorch():
    class Stream(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    class TorchStream(tud.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    assert list(ChainDataset([Stream(2), Stream(3)])) == list(tud.ChainDataset([TorchStream(2), TorchStream(3)]))


def test_distributed_sampler_takes_the_default_process_group(monkeypatch):
    import zero.distributed as dist

    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 3)
    monkeypatch.setattr(dist, "get_rank", lambda group=None: 2)
    sampler = DistributedSampler(range(8), shuffle=False)
    assert (sampler.num_replicas, sampler.rank, list(sampler)) == (3, 2, [2, 5, 0])
