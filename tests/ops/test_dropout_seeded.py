"""Dropout with its seed on the device (issue 38: CUDA graphs).

A captured graph replays every kernel argument as it was captured, so dropout's seed must
live in a device array -- a *seed slot*, rewritten before each replay -- that the kernel
reads: ``dropout_forward_seeded`` / ``dropout_backward_seeded``. These tests check that a
seed array gives the mask the int seed of the same value gives, bit for bit (the kernels
and the op, values and gradients), that the kernel reads the array's value at each call (a
rewritten slot, a new mask), and that every dropout in Zero gets its seed from
``ops.dropout._seed_for`` -- the one function the capture replaces -- and draws nothing else
on the host. The Triton kernel's twin of the kernel test is
``tests/backends/cuda/test_dropout_seeded_kernels.py``.

``ZERO_TEST_DEVICE=cuda`` puts the op tests' tensors on the GPU (or on played CUDA with
``ZERO_TEST_PLAY_CUDA=1``).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import zero
import zero.backends.cpu.kernels as cpu
import zero.nn.functional as F
from zero import nn
from zero.models.gpt import GPT, GPTConfig
from zero.ops import dropout as dropout_ops

DEVICE = os.environ.get("ZERO_TEST_DEVICE", "cpu")
SEEDS = [0, 7, (1 << 62) + 987654321, (1 << 63) - 1]


def _slot(value: int, device=DEVICE) -> zero.Tensor:
    return zero.tensor([value], dtype=zero.int64, device=device)


# -- the CPU kernels ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [zero.float32, zero.float64, zero.float16, zero.bfloat16],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("n", [1, 1025, 400_000])     # 400 000: split among the CPU pool's threads
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_seeded_cpu_kernels_equal_the_int_seed_kernels_bit_for_bit(dtype, n, p):
    x = np.random.default_rng(n).uniform(0.5, 2.0, n).astype(dtype.numpy)   # no zeros: 0 out means dropped
    for seed in SEEDS if n < 400_000 else SEEDS[2:3]:
        want, got = np.full(n, 9.0, dtype.numpy), np.full(n, 9.0, dtype.numpy)
        cpu.dropout_forward(x, p, seed, want)
        cpu.dropout_forward_seeded(x, p, np.array([seed], np.int64), got)
        assert want.tobytes() == got.tobytes(), f"seed {seed}: forward differs"
        cpu.dropout_backward(x, p, seed, want)
        cpu.dropout_backward_seeded(x, p, np.array([seed], np.int64), got)
        assert want.tobytes() == got.tobytes(), f"seed {seed}: backward differs"
    if p == 0.3 and n > 1000:
        assert abs((got == 0).mean() - p) < 0.05


def test_the_seeded_kernel_reads_the_array_at_each_call():
    """A slot rewritten between calls (a graph's replays): each call's mask is the new value's."""
    x = np.linspace(0.5, 2.0, 4000)
    slot = np.array([SEEDS[2]], np.int64)
    masks = []
    for seed in (SEEDS[2], 12345, SEEDS[3]):
        slot[0] = seed
        got, want = np.empty_like(x), np.empty_like(x)
        cpu.dropout_forward_seeded(x, 0.5, slot, got)
        cpu.dropout_forward(x, 0.5, seed, want)
        np.testing.assert_array_equal(got, want)
        masks.append(got == 0)
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])


def test_a_0_d_seed_array_works_and_other_arrays_are_refused():
    x, got, want = np.linspace(0.5, 2.0, 100), np.empty(100), np.empty(100)
    cpu.dropout_forward_seeded(x, 0.4, np.array(SEEDS[2], np.int64), got)
    cpu.dropout_forward(x, 0.4, SEEDS[2], want)
    np.testing.assert_array_equal(got, want)
    for bad in (np.array([1, 2], np.int64), np.array([1], np.int32), np.array([1.0])):
        with pytest.raises(TypeError, match="one 64-bit integer"):
            cpu.dropout_forward_seeded(x, 0.4, bad, got)


# -- the op ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [zero.float32, zero.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("p", [0.2, 0.5, 1.0])
def test_the_op_with_a_seed_tensor_equals_the_op_with_the_int_seed(dtype, p):
    base = zero.randn(6, 7, 5, dtype=dtype, device=DEVICE)
    results = []
    for seed in (SEEDS[2], _slot(SEEDS[2])):
        x = base.transpose(0, 2).detach().requires_grad_(True)   # strided: the mask follows row-major order
        out = dropout_ops.Dropout.apply(x, p, seed)
        out.backward(zero.arange(1, out.numel() + 1, dtype=dtype, device=DEVICE).reshape(out.shape))
        results.append((out.detach().cpu().numpy(), x.grad.cpu().numpy()))
    (want_out, want_grad), (got_out, got_grad) = results
    assert want_out.tobytes() == got_out.tobytes()
    assert want_grad.tobytes() == got_grad.tobytes()
    if p < 1.0:
        assert ((want_out == 0) == (want_grad == 0)).all()     # the gradient flows where values were kept


def test_backward_reads_the_slot_its_forward_read():
    """The op keeps the seed tensor itself, not its value: a replayed backward reads the slot
    its forward read (rewritten before the replay), not the value seen at capture."""
    slot = _slot(SEEDS[2])
    x = zero.ones(50, 40, device=DEVICE, requires_grad=True)
    out = dropout_ops.Dropout.apply(x, 0.5, slot)
    assert out.grad_fn.seed is slot
    slot.fill_(SEEDS[3])                                       # what a replay does before it runs
    out.backward(zero.ones(50, 40, device=DEVICE))
    want = dropout_ops.Dropout.apply(zero.ones(50, 40, device=DEVICE), 0.5, SEEDS[3])
    np.testing.assert_array_equal(x.grad.cpu().numpy(), want.cpu().numpy())


def test_seed_for_draws_the_int_seed_of_the_generator():
    """Outside a capture, the seed is the next draw of the given generator, or the default one."""
    device = zero.device(DEVICE)
    assert dropout_ops._seed_for(zero.Generator(seed=21), device) == zero.Generator(seed=21).next_seed()
    zero.manual_seed(4)
    first = dropout_ops._seed_for(None, device)
    assert first == zero.Generator(seed=4).next_seed()


# -- every dropout gets its seed from _seed_for ---------------------------------------------------


def _gpt():
    zero.manual_seed(0)
    return GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8, dropout=0.3)).to(DEVICE)


VARIANTS = ["dropout", "dropout inplace", "nn.Dropout", "dropout1d", "dropout2d", "dropout3d", "feature_dropout",
            "alpha_dropout", "feature_alpha_dropout", "scaled_dot_product_attention", "MultiheadAttention", "LSTM",
            "TransformerEncoderLayer", "GPT"]


def _variants() -> dict:
    """{name: (tensors, call)}: each call runs a dropout (or a layer with one) in training mode
    and returns a tensor; the gradients of the tensors listed are compared too."""
    zero.manual_seed(1)
    x = zero.randn(4, 6, 5, device=DEVICE)
    img, vol = zero.randn(2, 3, 4, 4, device=DEVICE), zero.randn(2, 3, 2, 2, 2, device=DEVICE)
    q = zero.randn(2, 2, 5, 4, device=DEVICE)
    mha = nn.MultiheadAttention(8, 2, dropout=0.4, batch_first=True).to(DEVICE)
    lstm = nn.LSTM(5, 4, num_layers=2, dropout=0.4).to(DEVICE)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True).to(DEVICE)
    seq = zero.randn(2, 5, 8, device=DEVICE)
    gpt = _gpt()
    tokens = zero.tensor([[1, 2, 3, 4, 5, 6, 7, 8]], device=DEVICE)
    return {
        "dropout": ([x], lambda: F.dropout(x, 0.3)),
        "dropout inplace": ([x], lambda: F.dropout(x * 1.0, 0.3, inplace=True)),
        "nn.Dropout": ([x], lambda: nn.Dropout(0.3)(x)),
        "dropout1d": ([x], lambda: F.dropout1d(x, 0.4)),
        "dropout2d": ([img], lambda: F.dropout2d(img, 0.4)),
        "dropout3d": ([vol], lambda: F.dropout3d(vol, 0.4)),
        "feature_dropout": ([img], lambda: zero.feature_dropout(img, 0.4, True)),
        "alpha_dropout": ([x], lambda: F.alpha_dropout(x, 0.3, True)),
        "feature_alpha_dropout": ([img], lambda: F.feature_alpha_dropout(img, 0.3, True)),
        "scaled_dot_product_attention": ([q], lambda: F.scaled_dot_product_attention(q, q, q, dropout_p=0.3)),
        "MultiheadAttention": (list(mha.parameters()), lambda: mha(seq, seq, seq)[0]),
        "LSTM": (list(lstm.parameters()), lambda: lstm(x)[0]),
        "TransformerEncoderLayer": (list(layer.parameters()), lambda: layer(seq)),
        "GPT": (list(gpt.parameters()), lambda: gpt(tokens)),
    }


def _run(monkeypatch, seed, call, inputs):
    calls = []

    def seed_for(generator, device):
        calls.append(device)
        return seed

    monkeypatch.setattr(dropout_ops, "_seed_for", seed_for)
    for t in inputs:
        t.grad = None
        t.requires_grad_(True)
    out = call()
    out.backward(zero.ones_like(out))
    grads = [t.grad.cpu().numpy() for t in inputs]
    for t in inputs:
        t.grad = None
    return out.detach().cpu().numpy(), grads, calls


@pytest.mark.parametrize("name", VARIANTS)
def test_every_dropout_takes_its_seed_from_seed_for_and_accepts_a_slot(monkeypatch, name):
    """With _seed_for handing out a slot (as a capture will), each dropout runs from it -- the
    int seed's output and gradients, bit for bit -- and draws nothing else from the generator."""
    inputs, call = _variants()[name]
    want_out, want_grads, int_calls = _run(monkeypatch, SEEDS[2], call, inputs)
    state = zero.get_rng_state()
    slot = _slot(SEEDS[2])
    got_out, got_grads, slot_calls = _run(monkeypatch, slot, call, inputs)
    assert zero.get_rng_state() == state, f"{name}: drew from the default generator besides _seed_for"
    assert int_calls and len(slot_calls) == len(int_calls)
    assert all(d == slot.device for d in slot_calls), f"{name}: a seed asked for another device"
    assert want_out.tobytes() == got_out.tobytes(), f"{name}: the slot's output differs from the int seed's"
    for want, got in zip(want_grads, got_grads):
        assert want.tobytes() == got.tobytes(), f"{name}: the slot's gradient differs from the int seed's"


def test_the_real_seed_for_draws_differently_each_call():
    """Not patched: two dropouts of one step get two seeds, so two masks."""
    x = zero.ones(40, 50, device=DEVICE)
    assert not np.array_equal(F.dropout(x, 0.5).cpu().numpy(), F.dropout(x, 0.5).cpu().numpy())
    images = zero.ones(8, 16, 2, 2, device=DEVICE)
    assert not np.array_equal(F.dropout2d(images, 0.5).cpu().numpy(), F.dropout2d(images, 0.5).cpu().numpy())
