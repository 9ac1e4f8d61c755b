"""The GPT model: loss at initialisation, overfitting one batch, KV-cache generation."""
import math

import numpy as np
import pytest

import zero
from zero.models import GPT, GPTConfig
from zero.models.gpt import sample_next


def tiny(vocab=23, **overrides):
    settings = dict(vocab_size=vocab, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0)
    settings.update(overrides)
    zero.manual_seed(0)
    return GPT(GPTConfig(**settings))


def batch(vocab=23, b=4, t=16, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (b, t + 1))
    return zero.tensor(ids[:, :-1]), zero.tensor(ids[:, 1:])


def test_parameter_names_and_tied_output():
    model = tiny()
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ["token_embedding.weight", "position_embedding.weight"]
    assert "blocks.1.attn.qkv.weight" in names and "blocks.0.ffn.fc2.bias" in names
    assert not any("head" in n for n in names)  # the output reuses the token embedding


def test_loss_at_initialisation_is_near_log_vocab():
    model = tiny(vocab=65)
    x, y = batch(vocab=65)
    loss = model(x, y).item()
    assert abs(loss - math.log(65)) < 0.25, loss


def test_logits_and_loss_agree():
    model = tiny()
    x, y = batch()
    logits = model(x)
    assert logits.shape == (4, 16, 23)
    reference = zero.nn.functional.cross_entropy(logits.reshape(-1, 23), y.reshape(-1))
    assert model(x, y).item() == pytest.approx(reference.item(), rel=1e-5)


def test_overfits_one_batch():
    model = tiny()
    x, y = batch()
    optimizer = zero.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    for _ in range(150):
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.1, loss.item()


def test_every_parameter_gets_a_gradient():
    model = tiny(dropout=0.1)
    x, y = batch()
    model(x, y).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and np.isfinite(p.grad.numpy()).all(), name


@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (1.0, None), (0.8, 5)])
def test_kv_cache_generation_matches_recomputation(temperature, top_k):
    model = tiny().double()
    prompt = zero.tensor([[1, 2, 3], [4, 5, 6]])
    # 40 new tokens with block_size 16: the window is cropped (and the cache rebuilt) twice.
    cached = model.generate(prompt, 40, temperature=temperature, top_k=top_k,
                            generator=zero.Generator(seed=7), use_cache=True)
    plain = model.generate(prompt, 40, temperature=temperature, top_k=top_k,
                           generator=zero.Generator(seed=7), use_cache=False)
    assert cached.shape == (2, 43)
    np.testing.assert_array_equal(cached.numpy(), plain.numpy())
    np.testing.assert_array_equal(cached.numpy()[:, :3], prompt.numpy())


def test_generate_restores_training_mode_and_records_no_graph():
    model = tiny(dropout=0.2)
    model.generate(zero.tensor([[0]]), 3)
    assert model.training
    assert all(p.grad is None for p in model.parameters())


def test_sample_next_rules():
    rng = np.random.default_rng(0)
    logits = np.array([[0.0, 5.0, 1.0], [3.0, 0.0, 0.0]])
    np.testing.assert_array_equal(sample_next(logits, 0.0, None, rng), [1, 0])
    picks = np.array([sample_next(logits[:1], 1.0, 1, rng)[0] for _ in range(20)])
    assert np.all(picks == 1)  # top_k=1 is greedy
    huge = np.array([[1000.0, 999.0]])  # the maximum is subtracted first: no overflow
    assert sample_next(huge, 1.0, None, rng)[0] in (0, 1)


def test_sequence_longer_than_block_is_refused():
    model = tiny()
    with pytest.raises(zero.errors.ShapeError, match="block_size"):
        model(zero.zeros(1, 17, dtype=zero.int64))
