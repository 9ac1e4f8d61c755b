"""Embedding (padding_idx, max_norm, scale_grad_by_freq, from_pretrained) and EmbeddingBag
(sum / mean / max, offsets or 2-D input, per_sample_weights, padding_idx) against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero import nn
from zero.nn import functional as F

torch = pytest.importorskip("torch")

TABLE = np.random.default_rng(0).standard_normal((7, 3))


def _tables():
    return zero.tensor(TABLE, requires_grad=True), torch.tensor(TABLE, requires_grad=True)


def _backward_both(out, tout):
    upstream = np.random.default_rng(5).standard_normal(tuple(tout.shape))
    (out * zero.tensor(upstream)).sum().backward()
    (tout * torch.tensor(upstream)).sum().backward()


IDS = [[1, 2, 2, 0], [6, 1, 0, 2]]


@pytest.mark.parametrize("options", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                     {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_values_and_gradients(options):
    w, tw = _tables()
    out = F.embedding(zero.tensor(IDS), w, **options)
    tout = torch.nn.functional.embedding(torch.tensor(IDS), tw, **options)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    _backward_both(out, tout)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_embedding_max_norm_renormalises_looked_up_rows_in_place():
    w, tw = _tables()
    out = F.embedding(zero.tensor(IDS), w, max_norm=1.0, norm_type=1.0)
    tout = torch.nn.functional.embedding(torch.tensor(IDS), tw, max_norm=1.0, norm_type=1.0)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-12)   # rows changed in place
    assert not np.allclose(w.detach().numpy(), TABLE)
    _backward_both(out, tout)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_embedding_module_padding_row_zeroed_repr_and_state_dict():
    zero.manual_seed(0)
    ours = nn.Embedding(5, 4, padding_idx=3, max_norm=2.0, scale_grad_by_freq=True)
    theirs = torch.nn.Embedding(5, 4, padding_idx=3, max_norm=2.0, scale_grad_by_freq=True)
    assert repr(ours) == repr(theirs)
    assert np.all(ours.weight.detach().numpy()[3] == 0) and ours.weight.detach().numpy().std() > 0.3
    ours.load_state_dict({k: zero.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    ids = [[3, 1, 3], [0, 4, 3]]
    out, tout = ours(zero.tensor(ids)), theirs(torch.tensor(ids))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
    _backward_both(out, tout)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert np.all(ours.weight.grad.numpy()[3] == 0)
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(5, 4, sparse=True)
    with pytest.raises(AssertionError):
        nn.Embedding(5, 4, padding_idx=5)


def test_from_pretrained():
    table = zero.tensor(TABLE)
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad and frozen.weight.shape == (7, 3)
    np.testing.assert_array_equal(frozen(zero.tensor([4])).numpy(), TABLE[[4]])
    trained = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
    assert trained.weight.requires_grad and trained.padding_idx == 1
    np.testing.assert_array_equal(trained.weight.detach().numpy()[1], TABLE[1])    # kept as given
    assert repr(trained) == repr(torch.nn.Embedding.from_pretrained(torch.tensor(TABLE), padding_idx=1))
    bag = nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert not bag.weight.requires_grad
    np.testing.assert_allclose(bag(zero.tensor([[0, 1]])).numpy(), TABLE[[0]] + TABLE[[1]])


BAG_CASES = {
    "mean, offsets": dict(mode="mean", ids=[1, 2, 4, 5, 4, 3, 2, 6], offsets=[0, 2, 2, 5]),
    "sum, offsets": dict(mode="sum", ids=[1, 2, 4, 5, 4, 3, 2, 6], offsets=[0, 3, 4]),
    "max, offsets with an empty bag": dict(mode="max", ids=[1, 2, 4, 5, 4, 3, 2, 6], offsets=[0, 3, 3, 6]),
    "sum, 2-D": dict(mode="sum", ids=[[1, 2, 4], [5, 4, 1]]),
    "mean, 2-D": dict(mode="mean", ids=[[1, 2, 4], [5, 4, 1]]),
    "max, 2-D": dict(mode="max", ids=[[1, 2, 4], [5, 4, 1]]),
    "sum, per_sample_weights": dict(mode="sum", ids=[1, 2, 4, 5, 4, 3], offsets=[0, 2], weights=True),
    "sum, 2-D, per_sample_weights": dict(mode="sum", ids=[[1, 2, 4], [5, 4, 1]], weights=True),
    "mean, include_last_offset": dict(mode="mean", ids=[1, 2, 4, 5, 4, 3], offsets=[0, 2, 5, 6],
                                      include_last_offset=True),
    "mean, padding_idx": dict(mode="mean", ids=[1, 2, 4, 2, 2, 3], offsets=[0, 3, 4], padding_idx=2),
    "sum, padding_idx": dict(mode="sum", ids=[1, 2, 4, 2, 2, 3], offsets=[0, 3, 4], padding_idx=2),
    "max, padding_idx": dict(mode="max", ids=[[1, 2, 4], [2, 2, 3]], padding_idx=2),
    "mean, max_norm": dict(mode="mean", ids=[1, 2, 4, 2, 2, 3], offsets=[0, 3], max_norm=1.0),
    # (scale_grad_by_freq is not compared here: PyTorch 2.13's CPU embedding_bag divides rows 3 and 4 of
    # ids [1, 2, 4, 2, 2, 3] by 3, each looked up once; Zero divides each row by its own count, as F.embedding.)
}


@pytest.mark.parametrize("case", sorted(BAG_CASES))
def test_embedding_bag_matches_pytorch(case):
    options = dict(BAG_CASES[case])
    ids, offsets = options.pop("ids"), options.pop("offsets", None)
    weights = None
    if options.pop("weights", False):
        weights = np.random.default_rng(2).standard_normal(np.shape(ids))
    w, tw = _tables()
    tweights = None if weights is None else torch.tensor(weights, requires_grad=True)
    zweights = None if weights is None else zero.tensor(weights, requires_grad=True)
    out = F.embedding_bag(zero.tensor(ids), w, None if offsets is None else zero.tensor(offsets),
                          per_sample_weights=zweights, **options)
    tout = torch.nn.functional.embedding_bag(torch.tensor(ids), tw, None if offsets is None else
                                             torch.tensor(offsets), per_sample_weights=tweights, **options)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-14)
    _backward_both(out, tout)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-14)
    if weights is not None:
        np.testing.assert_allclose(zweights.grad.numpy(), tweights.grad.numpy(), rtol=1e-12)


def test_embedding_bag_module_and_errors():
    ours = nn.EmbeddingBag(7, 3, mode="sum", padding_idx=0, include_last_offset=True)
    theirs = torch.nn.EmbeddingBag(7, 3, mode="sum", padding_idx=0, include_last_offset=True)
    assert repr(ours) == repr(theirs) and repr(nn.EmbeddingBag(3, 4)) == repr(torch.nn.EmbeddingBag(3, 4))
    ours.load_state_dict({k: zero.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    ids, offsets = [1, 0, 4, 5], [0, 1, 4]
    np.testing.assert_allclose(ours(zero.tensor(ids), zero.tensor(offsets)).detach().numpy(),
                               theirs(torch.tensor(ids), torch.tensor(offsets)).detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError):
        F.embedding_bag(zero.tensor([1, 2]), zero.ones(4, 2), zero.tensor([1]))            # offsets[0] != 0
    with pytest.raises(ValueError):
        F.embedding_bag(zero.tensor([[1, 2]]), zero.ones(4, 2), zero.tensor([0]))          # 2-D with offsets
    with pytest.raises(NotImplementedError):
        F.embedding_bag(zero.tensor([[1, 2]]), zero.ones(4, 2), mode="mean", per_sample_weights=zero.ones(1, 2))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.EmbeddingBag(4, 2, sparse=True)
