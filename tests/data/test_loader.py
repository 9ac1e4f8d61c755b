"""TensorDataset and DataLoader: batching, drop_last, seeded shuffling."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zero
from zero.data.loader import DataLoader, Dataset, TensorDataset
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
    assert all(isinstance(b, tuple) and len(b) == 2 for b in batches)
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
