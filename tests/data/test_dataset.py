"""Datasets: the base classes, Subset, ConcatDataset, ChainDataset and random_split."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zero
from zero.data import ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split


class Range(Dataset):
    def __init__(self, start, stop):
        self.values = list(range(start, stop))

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]


class Stream(IterableDataset):
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)


def test_the_base_classes_are_abstract_and_have_no_default_length():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(TypeError):
        len(Dataset())  # as in PyTorch: a dataset without __len__ has no length
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(IterableDataset())
    assert Dataset[int] is not None and IterableDataset[tuple] is not None  # subscriptable for type hints


def test_subset():
    subset = Subset(Range(10, 20), [5, 0, 9])
    assert len(subset) == 3 and [subset[i] for i in range(3)] == [15, 10, 19] and subset[-1] == 19
    assert subset.__getitems__([2, 0]) == [19, 15]


def test_concat_dataset():
    both = Range(0, 3) + Range(10, 12)
    assert isinstance(both, ConcatDataset) and len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i] for i in range(5)] == [0, 1, 2, 10, 11]
    assert both[-1] == 11 and both[-5] == 0
    with pytest.raises(ValueError, match="out of range"):
        both[-6]
    with pytest.raises(IndexError):
        both[5]
    with pytest.raises(ValueError, match="must not be empty"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="ChainDataset"):
        ConcatDataset([Range(0, 1), Stream([1])])
    assert [ConcatDataset([Range(0, 0), Range(5, 7)])[i] for i in range(2)] == [5, 6]  # an empty part is skipped


def test_chain_dataset():
    chained = Stream([1, 2]) + Stream([3])
    assert isinstance(chained, ChainDataset) and list(chained) == [1, 2, 3]
    with pytest.raises(TypeError, match="takes IterableDatasets"):
        list(ChainDataset([Range(0, 2)]))


def test_tensor_dataset_takes_arrays_and_checks_lengths():
    dataset = TensorDataset(np.arange(6).reshape(3, 2), zero.tensor([1.0, 2.0, 3.0]))
    x, y = dataset[1]
    assert x.numpy().tolist() == [2, 3] and y.item() == 2.0
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(IndexError, match="0-d"):
        TensorDataset(zero.tensor(1.0))


# -- random_split ------------------------------------------------------------------------------------
def test_random_split_is_a_seeded_partition():
    parts = random_split(Range(0, 10), [3, 7], generator=zero.Generator(seed=5))
    assert [len(p) for p in parts] == [3, 7] and all(isinstance(p, Subset) for p in parts)
    values = [p[i] for p in parts for i in range(len(p))]
    assert sorted(values) == list(range(10)) and values != list(range(10))
    assert values == zero.Generator(seed=5).permutation(10).tolist()  # one permutation, cut in order
    again = random_split(Range(0, 10), [3, 7], generator=zero.Generator(seed=5))
    assert [p.indices for p in again] == [p.indices for p in parts]
    zero.manual_seed(5)  # the default generator
    assert [p.indices for p in random_split(Range(0, 10), [3, 7])] == [p.indices for p in parts]


@pytest.mark.parametrize("n,fractions,sizes", [
    (10, [0.3, 0.3, 0.4], [3, 3, 4]), (11, [0.5, 0.5], [6, 5]), (10, [0.33, 0.33, 0.34], [4, 3, 3]),
    (5, [1.0], [5]), (7, [0.25, 0.25, 0.25, 0.25], [2, 2, 2, 1])])
def test_random_split_fractions(n, fractions, sizes):
    """floor(fraction * n) each, and the remainder dealt out one at a time from the first split on."""
    assert [len(p) for p in random_split(Range(0, n), fractions, generator=zero.Generator(seed=0))] == sizes


def test_random_split_errors_and_the_empty_split_warning():
    with pytest.raises(ValueError, match="add up to 6, but the dataset has 10"):
        random_split(Range(0, 10), [3, 3])
    with pytest.raises(ValueError, match="fractions that add up to 1; got"):
        random_split(Range(0, 10), [0.5, 0.6])
    with pytest.raises(ValueError, match="fraction at index 0 is 1.5"):
        random_split(Range(0, 10), [1.5, -0.5])
    with pytest.raises(ValueError, match="non-negative integers"):
        random_split(Range(0, 10), [-1, 11])
    with pytest.warns(UserWarning, match="has length 0") as caught:
        parts = random_split(Range(0, 2), [0.9, 0.05, 0.05])
    assert [str(w.message) for w in caught] == [f"random_split: split {i} has length 0 (an empty dataset)"
                                                for i in (1, 2)]
    assert [len(p) for p in parts] == [2, 0, 0]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 30), st.lists(st.integers(1, 10), min_size=1, max_size=4), st.integers(0, 2**32))
def test_random_split_fractions_cover_the_dataset(n, weights, seed):
    fractions = [w / sum(weights) for w in weights]
    fractions[-1] = 1 - sum(fractions[:-1])
    if fractions[-1] < 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty split is warned about (tested above)
        parts = random_split(Range(0, n), fractions, generator=zero.Generator(seed=seed))
    indices = [i for p in parts for i in p.indices]
    assert sorted(indices) == list(range(n))
    assert all(abs(len(p) - f * n) < len(fractions) for p, f in zip(parts, fractions))
