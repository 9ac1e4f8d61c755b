"""zero.nn.utils.rnn against torch.nn.utils.rnn: packing, padding, their gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero.nn.utils import rnn as zrnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn


def leaf(array):
    return zero.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def same(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([4, 3, 3, 1], True), ([2, 4, 1, 3], False)])
def test_pack_and_pad_round_trip(batch_first, lengths, enforce_sorted):
    shape = (4, 4, 2) if not batch_first else (4, 4, 2)
    x, tx = leaf(np.random.default_rng(0).standard_normal(shape))
    packed = zrnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    same(packed.data, tpacked.data)
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    assert packed.batch_sizes.dtype == zero.int64
    for ours, theirs in [(packed.sorted_indices, tpacked.sorted_indices),
                         (packed.unsorted_indices, tpacked.unsorted_indices)]:
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.tolist() == theirs.tolist()
    padded, out_lengths = zrnn.pad_packed_sequence(packed, batch_first=batch_first, padding_value=-1.0,
                                                   total_length=5)
    tpadded, tlengths = trnn.pad_packed_sequence(tpacked, batch_first=batch_first, padding_value=-1.0,
                                                 total_length=5)
    same(padded, tpadded)
    assert out_lengths.tolist() == tlengths.tolist()
    weights = np.arange(tpadded.numel(), dtype=np.float64).reshape(tuple(tpadded.shape))
    (padded * zero.tensor(weights)).sum().backward()
    (tpadded * torch.tensor(weights)).sum().backward()
    same(x.grad, tx.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    rng = np.random.default_rng(1)
    pairs = [leaf(rng.standard_normal((n, 3))) for n in (3, 5, 1)]
    padded = zrnn.pad_sequence([a for a, _ in pairs], batch_first=batch_first, padding_value=2.0,
                               padding_side=padding_side)
    tpadded = trnn.pad_sequence([b for _, b in pairs], batch_first=batch_first, padding_value=2.0,
                                padding_side=padding_side)
    same(padded, tpadded)
    (padded ** 2).sum().backward()
    (tpadded ** 2).sum().backward()
    for a, b in pairs:
        same(a.grad, b.grad)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack(enforce_sorted):
    rng = np.random.default_rng(2)
    sizes = (4, 2, 1) if enforce_sorted else (2, 4, 1)
    arrays = [rng.standard_normal((n, 2)) for n in sizes]
    packed = zrnn.pack_sequence([zero.tensor(a) for a in arrays], enforce_sorted=enforce_sorted)
    tpacked = trnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=enforce_sorted)
    same(packed.data, tpacked.data)
    for ours, array in zip(zrnn.unpack_sequence(packed), arrays):
        np.testing.assert_array_equal(ours.numpy(), array)
    padded = zrnn.pad_sequence([zero.tensor(a) for a in arrays], batch_first=True)
    for ours, array in zip(zrnn.unpad_sequence(padded, zero.tensor(list(sizes)), batch_first=True), arrays):
        np.testing.assert_array_equal(ours.numpy(), array)


def test_errors_as_pytorch():
    x = zero.zeros(5, 3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        zrnn.pack_padded_sequence(x, [3, 4, 2])
    with pytest.raises(RuntimeError, match="has to be greater than 0"):
        zrnn.pack_padded_sequence(x, [3, 0, 2], enforce_sorted=False)
    packed = zrnn.pack_padded_sequence(x, [5, 4, 2])
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        zrnn.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(RuntimeError, match="lengths"):
        zrnn.pack_padded_sequence(x, [3, 2])


def test_packed_sequence_is_a_named_tuple():
    packed = zrnn.pack_sequence([zero.ones(2, 1), zero.ones(1, 1)])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert batch_sizes.tolist() == [2, 1] and sorted_indices is None and unsorted_indices is None
    assert packed.to("cpu") is packed and not packed.is_cuda
    assert zero.nn.utils.rnn.PackedSequence is zrnn.PackedSequence
