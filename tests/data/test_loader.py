"""The DataLoader in the main process: batching, len(), drop_last, seeded shuffling, the fast path,
samplers and batch samplers, collate_fn, batch_size=None, IterableDatasets, and the argument errors."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zero
from zero.data import DataLoader, Dataset, TensorDataset
from zero.errors import ShapeError


def make_dataset(n=10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)  # row i starts at 3 * i
    y = np.arange(n, dtype=np.int64)
    return TensorDataset(zero.from_numpy(x), y), x, y


def rows_of(loader):
    """The label (= row index) sequence of one epoch, checking each x row matches its label."""
    order = []
    for x, y in loader:
        assert isinstance(x, zero.Tensor) and isinstance(y, zero.Tensor)
        np.testing.assert_array_equal(x.numpy()[:, 0], y.numpy() * 3)  # rows stay paired
        order.extend(y.numpy().tolist())
    return order


def test_tensor_dataset():
    dataset, x, y = make_dataset(4)
    assert len(dataset) == 4
    row, label = dataset[2]
    assert row.numpy().tolist() == x[2].tolist() and label.item() == 2
    with pytest.raises(ShapeError, match=r"same first dimension.*\[4, 3\], \[5\]"):
        TensorDataset(zero.zeros(4, 3), zero.zeros(5))


def test_in_order_batches():
    dataset, x, y = make_dataset(10)
    batches = list(DataLoader(dataset, batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert all(isinstance(b, list) and len(b) == 2 for b in batches)  # PyTorch's default_collate: a list
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
    assert batches[0][1].dtype is zero.int64 and batches[0][0].dtype is zero.float32


@pytest.mark.parametrize("n,batch_size,drop_last,expected", [
    (10, 4, False, 3), (10, 4, True, 2), (8, 4, True, 2), (8, 4, False, 2), (3, 4, True, 0), (3, 4, False, 1),
    (0, 2, False, 0)])
def test_len_and_drop_last(n, batch_size, drop_last, expected):
    dataset, _, _ = make_dataset(n)
    loader = DataLoader(dataset, batch_size=batch_size, drop_last=drop_last)
    batches = list(loader)
    assert len(loader) == len(batches) == expected
    assert all(b[0].shape[0] == batch_size for b in batches) or not drop_last


def test_batches_do_not_alias_the_dataset():
    dataset, x, _ = make_dataset(6)
    first, _ = next(iter(DataLoader(dataset, batch_size=3)))
    first.numpy()[:] = -1.0
    assert dataset.tensors[0].numpy()[0, 0] == 0.0


def test_shuffle_is_seeded_and_differs_between_epochs():
    dataset, _, _ = make_dataset(50)
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    zero.manual_seed(7)
    first, second = rows_of(loader), rows_of(loader)
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second and first != list(range(50))
    zero.manual_seed(7)
    assert rows_of(loader) == first and rows_of(loader) == second
    # the order is the default generator's permutation, drawn at iter()
    zero.manual_seed(7)
    assert first == zero.Generator(seed=7).permutation(50).tolist()


def test_explicit_generator():
    dataset, _, _ = make_dataset(30)
    a = DataLoader(dataset, batch_size=7, shuffle=True, generator=zero.Generator(seed=1))
    b = DataLoader(dataset, batch_size=7, shuffle=True, generator=zero.Generator(seed=1))
    zero.manual_seed(0)
    state = zero.get_rng_state()
    assert rows_of(a) == rows_of(b)
    assert zero.get_rng_state() == state  # the default generator was not touched


def test_shuffle_with_drop_last_drops_a_random_tail():
    dataset, _, _ = make_dataset(10)
    zero.manual_seed(3)
    order = rows_of(DataLoader(dataset, batch_size=4, shuffle=True, drop_last=True))
    assert len(order) == 8 and len(set(order)) == 8


class Squares(Dataset):
    """A dataset without whole tensors: batched by stacking samples."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return np.array([i, i * i], dtype=np.float32), i


def test_generic_dataset_is_stacked():
    batches = list(DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    x, y = batches[1]
    assert x.shape == (2, 2) and x.numpy().tolist() == [[2, 4], [3, 9]]
    assert y.dtype is zero.int64 and y.numpy().tolist() == [2, 3]
    zero.manual_seed(5)
    shuffled = [int(v) for _, y in DataLoader(Squares(), batch_size=2, shuffle=True) for v in y.numpy()]
    assert sorted(shuffled) == list(range(5))


def test_generic_dataset_of_tensors():
    class Rows(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return zero.full((2,), float(i))

    batch = next(iter(DataLoader(Rows(), batch_size=3)))
    assert isinstance(batch, zero.Tensor) and batch.numpy().tolist() == [[0, 0], [1, 1], [2, 2]]


def test_bad_batch_size():
    dataset, _, _ = make_dataset(3)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size"):
            DataLoader(dataset, batch_size=bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.integers(1, 12), st.booleans(), st.booleans(), st.integers(0, 2**32))
def test_every_row_once_per_epoch(n, batch_size, shuffle, drop_last, seed):
    dataset, _, _ = make_dataset(n)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                        generator=zero.Generator(seed=seed))
    batches = list(loader)
    order = [v for _, y in batches for v in y.numpy().tolist()]
    assert len(batches) == len(loader) == (n // batch_size if drop_last else math.ceil(n / batch_size))
    assert len(order) == len(set(order)) == (n - n % batch_size if drop_last else n)
    if not shuffle:
        assert order == list(range(len(order)))


# -- the fast path ----------------------------------------------------------------------------------
class RowsOf(Dataset):
    """The same samples as a TensorDataset, without its batch method: fetched and collated one by one."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, i):
        return self.dataset[i]


def as_lists(batches):
    return [[t.numpy().tolist() for t in b] for b in batches]


@pytest.mark.parametrize("kwargs", [dict(batch_size=4), dict(batch_size=3, shuffle=True, drop_last=True),
                                    dict(sampler=[9, 0, 4, 4, 1], batch_size=2),
                                    dict(batch_sampler=[[3, 1], [0], [5, 6, 7]])])
def test_the_batch_method_gives_what_default_collate_gives(kwargs):
    dataset, _, _ = make_dataset(10)
    zero.manual_seed(1)
    fast = list(DataLoader(dataset, **kwargs))
    zero.manual_seed(1)
    slow = list(DataLoader(RowsOf(dataset), **kwargs))
    assert as_lists(fast) == as_lists(slow)
    assert [[t.dtype for t in b] for b in fast] == [[t.dtype for t in b] for b in slow]
    assert all(isinstance(b, list) for b in fast + slow)


def test_the_batch_method_is_used_for_default_collate_only():
    calls = []

    class Counted(TensorDataset):
        def batch(self, indices):
            calls.append(indices)
            return super().batch(indices)

    dataset = Counted(np.arange(6.0))
    list(DataLoader(dataset, batch_size=4))
    assert calls == [slice(0, 4), slice(4, 6)]  # runs in order become slices
    zero.manual_seed(0)
    list(DataLoader(dataset, batch_size=6, shuffle=True))
    assert isinstance(calls[-1], np.ndarray) and sorted(calls[-1].tolist()) == list(range(6))
    calls.clear()
    batches = list(DataLoader(dataset, batch_size=3, collate_fn=lambda samples: len(samples)))
    assert batches == [3, 3] and calls == []


def test_a_subset_keeps_the_fast_path():
    dataset, x, _ = make_dataset(10)
    subset = zero.data.Subset(dataset, [7, 2, 5])
    assert zero.data.dataset.batch_method(subset) is not None
    assert zero.data.dataset.batch_method(zero.data.Subset(RowsOf(dataset), [1])) is None
    (rows, labels), = DataLoader(subset, batch_size=3)
    assert labels.numpy().tolist() == [7, 2, 5] and rows.numpy().tolist() == x[[7, 2, 5]].tolist()


# -- samplers, batch samplers, collate_fn, batch_size=None ------------------------------------------
def test_sampler_and_batch_sampler():
    dataset, _, _ = make_dataset(10)
    loader = DataLoader(dataset, sampler=[9, 8, 7, 6, 5], batch_size=2)
    assert len(loader) == 3 and rows_of(loader) == [9, 8, 7, 6, 5]
    loader = DataLoader(dataset, sampler=zero.data.SubsetRandomSampler([1, 2, 3]), batch_size=2, drop_last=True)
    assert len(loader) == 1 and len(rows_of(loader)) == 2
    loader = DataLoader(dataset, batch_sampler=[[0, 1, 2], [5], [9, 3]])
    assert len(loader) == 3 and rows_of(loader) == [0, 1, 2, 5, 9, 3]
    assert loader.batch_size is None and loader.drop_last is False


def test_a_shuffled_loader_uses_its_generator_for_the_random_sampler():
    dataset, _, _ = make_dataset(10)
    loader = DataLoader(dataset, shuffle=True, generator=zero.Generator(seed=4))
    assert isinstance(loader.sampler, zero.data.RandomSampler) and loader.sampler.generator is loader.generator
    assert isinstance(loader.batch_sampler, zero.data.BatchSampler)
    assert isinstance(DataLoader(dataset).sampler, zero.data.SequentialSampler)


def test_collate_fn():
    dataset, _, _ = make_dataset(5)
    loader = DataLoader(dataset, batch_size=2, collate_fn=lambda samples: [int(y) for _, y in samples])
    assert list(loader) == [[0, 1], [2, 3], [4]]


def test_batch_size_none_turns_batching_off():
    loader = DataLoader(Squares(), batch_size=None)
    samples = list(loader)
    assert len(loader) == len(samples) == 5
    x, y = samples[3]  # default_convert: the array becomes a tensor, the int stays an int, the tuple a list
    assert isinstance(samples[3], list) and isinstance(x, zero.Tensor) and x.numpy().tolist() == [3, 9]
    assert y == 3 and isinstance(y, int)
    zero.manual_seed(0)
    assert sorted(y for _, y in DataLoader(Squares(), batch_size=None, shuffle=True)) == list(range(5))


class Count(zero.data.IterableDataset):
    def __init__(self, n, with_length=True):
        self.n, self.with_length = n, with_length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_length:
            raise TypeError("no length")
        return self.n


@pytest.mark.parametrize("batch_size,drop_last,expected", [
    (3, False, [[0, 1, 2], [3, 4, 5], [6]]), (3, True, [[0, 1, 2], [3, 4, 5]]), (7, False, [[0, 1, 2, 3, 4, 5, 6]])])
def test_iterable_dataset_in_the_main_process(batch_size, drop_last, expected):
    loader = DataLoader(Count(7), batch_size=batch_size, drop_last=drop_last)
    assert [b.numpy().tolist() for b in loader] == expected
    assert len(loader) == len(expected)
    assert list(DataLoader(Count(3), batch_size=None)) == [0, 1, 2]


def test_iterable_dataset_len_and_the_overrun_warning():
    with pytest.raises(TypeError):
        len(DataLoader(Count(4, with_length=False)))

    class Liar(Count):
        def __len__(self):
            return 2

    loader = DataLoader(Liar(5), batch_size=1)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="len.. of this loader over an IterableDataset was 2"):
        assert len(list(loader)) == 5


def test_a_dataset_with_getitems_is_asked_for_the_whole_batch():
    class Many(Squares):
        asked = []

        def __getitems__(self, indices):
            self.asked.append(list(indices))
            return [self[i] for i in indices]

    (x, y), = DataLoader(Many(), batch_size=3, sampler=[4, 0, 2])
    assert Many.asked == [[4, 0, 2]] and y.numpy().tolist() == [4, 0, 2]


def test_the_iterator_has_the_loaders_length_and_the_loader_is_reiterable():
    dataset, _, _ = make_dataset(10)
    loader = DataLoader(dataset, batch_size=4)
    iterator = iter(loader)
    assert len(iterator) == 3 and iter(iterator) is iterator
    assert len(list(iterator)) == 3 and len(list(loader)) == 3


def test_pin_memory_is_accepted_and_changes_nothing():
    dataset, _, _ = make_dataset(6)
    assert as_lists(DataLoader(dataset, batch_size=4, pin_memory=True)) == as_lists(DataLoader(dataset, batch_size=4))


# -- rng: what iter() draws ---------------------------------------------------------------------------
def test_iter_draws_the_order_then_one_base_seed():
    """iter(loader) draws the permutation and then one worker base seed, and nothing at next()."""
    dataset, _, _ = make_dataset(10)
    loader = DataLoader(dataset, batch_size=4, shuffle=True)
    zero.manual_seed(11)
    iterator = iter(loader)
    after_iter = zero.get_rng_state()
    order = [v for _, y in iterator for v in y.numpy().tolist()]
    assert zero.get_rng_state() == after_iter
    reference = zero.Generator(seed=11)
    assert order == reference.permutation(10).tolist()
    reference.next_seed()
    assert reference.get_state()["bit_generator"] == after_iter["bit_generator"]
    zero.manual_seed(11)
    iter(DataLoader(dataset, batch_size=4))  # unshuffled: only the base seed
    plain = zero.Generator(seed=11)
    plain.next_seed()
    assert zero.get_rng_state()["bit_generator"] == plain.get_state()["bit_generator"]


# -- argument errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler= is mutually exclusive"),
    (dict(batch_sampler=[[0]], shuffle=True), "batch_sampler= is mutually exclusive"),
    (dict(batch_sampler=[[0]], sampler=[0]), "batch_sampler= is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler= is mutually exclusive"),
    (dict(sampler=[0], shuffle=True), "sampler= and shuffle=True are mutually exclusive"),
    (dict(drop_last=1), "drop_last must be a bool"),
    (dict(batch_size=None, drop_last=True), "batch_size=None turns automatic batching off"),
    (dict(num_workers=-1), "num_workers must be a non-negative"),
    (dict(timeout=-1), "timeout must be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor applies to worker processes only"),
    (dict(num_workers=1, prefetch_factor=0), "prefetch_factor must be a positive"),
    (dict(persistent_workers=True), "persistent_workers=True needs num_workers > 0"),
    (dict(multiprocessing_context="fork"), "multiprocessing_context applies to worker processes only"),
    (dict(num_workers=1, multiprocessing_context="bogus"), "multiprocessing_context must be one of"),
])
def test_argument_errors(kwargs, match):
    dataset, _, _ = make_dataset(3)
    with pytest.raises(ValueError, match=match):
        DataLoader(dataset, **kwargs)


def test_a_context_that_is_not_one_is_a_type_error():
    dataset, _, _ = make_dataset(3)
    with pytest.raises(TypeError, match="multiprocessing_context"):
        DataLoader(dataset, num_workers=1, multiprocessing_context=3)


@pytest.mark.parametrize("name,value", [("shuffle", True), ("sampler", [0]), ("batch_sampler", [[0]])])
def test_an_iterable_dataset_takes_no_order(name, value):
    with pytest.raises(ValueError, match=f"IterableDataset: {name} must be left unset"):
        DataLoader(Count(3), **{name: value})
    DataLoader(Count(3), shuffle=False)


def test_what_defines_the_batches_is_fixed_after_construction():
    dataset, _, _ = make_dataset(3)
    loader = DataLoader(dataset, batch_size=2)
    for name in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{name} cannot be changed"):
            setattr(loader, name, None)
    loader.num_workers = 0  # the others may change, as in PyTorch
    loader.collate_fn = lambda samples: len(samples)
    assert list(loader) == [2, 1]
