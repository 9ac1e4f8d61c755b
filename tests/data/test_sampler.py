"""Samplers: the orders they give, their lengths, their errors, and when they draw."""
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zero
from zero.data import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                       WeightedRandomSampler)

DATA = list(range(10))


def test_the_base_sampler_is_abstract_and_has_no_length():
    sampler = Sampler(DATA)  # PyTorch's optional data_source is accepted
    with pytest.raises(NotImplementedError):
        iter(sampler)
    with pytest.raises(TypeError):
        len(sampler)


def test_sequential_sampler():
    sampler = SequentialSampler(DATA)
    assert list(sampler) == DATA and len(sampler) == 10


def test_random_sampler_is_a_permutation_per_epoch_from_its_generator():
    sampler = RandomSampler(DATA, generator=zero.Generator(seed=3))
    first, second = list(sampler), list(sampler)
    reference = zero.Generator(seed=3)
    assert first == reference.permutation(10).tolist() and second == reference.permutation(10).tolist()
    assert first != second and len(sampler) == 10
    zero.manual_seed(3)  # without a generator: Zero's default generator
    assert list(RandomSampler(DATA)) == first


@pytest.mark.parametrize("num_samples", [1, 7, 10, 23])
def test_random_sampler_num_samples_without_replacement(num_samples):
    """Whole permutations one after another, the last cut short (as PyTorch does)."""
    sampler = RandomSampler(DATA, num_samples=num_samples, generator=zero.Generator(seed=0))
    order = list(sampler)
    assert len(order) == len(sampler) == num_samples
    for start in range(0, num_samples, 10):
        chunk = order[start:start + 10]
        assert len(set(chunk)) == len(chunk) and set(chunk) <= set(DATA)


def test_random_sampler_with_replacement():
    sampler = RandomSampler(DATA, replacement=True, num_samples=5000, generator=zero.Generator(seed=1))
    order = list(sampler)
    assert len(order) == len(sampler) == 5000 and set(order) == set(DATA)
    assert max(Counter(order).values()) < 650  # about 500 each
    assert len(RandomSampler(DATA, replacement=True)) == 10


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement must be a bool"):
        RandomSampler(DATA, replacement=1)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="num_samples must be a positive integer"):
            RandomSampler(DATA, num_samples=bad)


def test_random_samplers_draw_the_whole_epoch_at_iter():
    for sampler in (RandomSampler(DATA), SubsetRandomSampler([4, 5, 6]), WeightedRandomSampler([1.0] * 10, 4),
                    BatchSampler(RandomSampler(DATA), 3, False)):
        zero.manual_seed(0)
        iterator = iter(sampler)
        state = zero.get_rng_state()
        list(iterator)
        assert zero.get_rng_state() == state, type(sampler).__name__


def test_subset_random_sampler():
    indices = [10, 20, 30, 40]
    sampler = SubsetRandomSampler(indices, generator=zero.Generator(seed=2))
    order = list(sampler)
    assert sorted(order) == indices and len(sampler) == 4
    assert order == [indices[i] for i in zero.Generator(seed=2).permutation(4)]


def test_weighted_random_sampler_follows_the_weights():
    weights = [0.0, 1.0, 3.0]
    order = list(WeightedRandomSampler(weights, 4000, generator=zero.Generator(seed=0)))
    counts = Counter(order)
    assert len(order) == 4000 and counts[0] == 0 and 2700 < counts[2] < 3300
    once = list(WeightedRandomSampler([1.0, 5.0, 0.0, 2.0], 3, replacement=False, generator=zero.Generator(seed=0)))
    assert sorted(once) == [0, 1, 3]
    assert len(WeightedRandomSampler(zero.tensor([1.0, 2.0]), 7)) == 7  # weights may be a tensor


def test_weighted_random_sampler_errors():
    with pytest.raises(ValueError, match="weights must be 1-d"):
        WeightedRandomSampler([[1.0]], 2)
    with pytest.raises(ValueError, match="num_samples must be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement must be a bool"):
        WeightedRandomSampler([1.0], 2, replacement=0)
    for weights, num_samples, replacement, match in (
            ([1.0, -1.0], 2, True, "non-negative"), ([0.0, 0.0], 2, True, "add up to 0"),
            ([1.0, np.nan], 2, True, "finite"), ([1.0, 1.0, 0.0], 3, False, "cannot draw 3 samples")):
        sampler = WeightedRandomSampler(weights, num_samples, replacement=replacement)  # accepted here ...
        with pytest.raises(RuntimeError, match=match):
            iter(sampler)  # ... refused when an epoch is drawn, as PyTorch's multinomial does


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    assert list(BatchSampler([5, 1], 4, True)) == [] and list(BatchSampler([], 4, False)) == []
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="batch_size must be a positive integer"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last must be a bool"):
        BatchSampler(range(3), 2, 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 50), st.integers(1, 12), st.booleans())
def test_batch_sampler_length_is_what_it_yields(n, batch_size, drop_last):
    batches = list(BatchSampler(SequentialSampler(range(n)), batch_size, drop_last))
    assert len(BatchSampler(range(n), batch_size, drop_last)) == len(batches)
    assert [i for b in batches for i in b] == list(range(len(batches) * batch_size if drop_last else n))
    assert all(len(b) == batch_size for b in batches[:-1])
