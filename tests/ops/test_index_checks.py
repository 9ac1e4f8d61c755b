"""Index range checks: immediate on the CPU; on another device, at the next read from it,
so that a training step makes the host wait for the device not once."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero.errors import ZeroIndexError
from zero.models import GPT, GPTConfig
from zero.nn import functional as F
from zero.ops.index_checks import set_eager_checks


class ReadCounter:
    """Stands in for a backend, counting the reads of values back to the host."""

    def __init__(self, backend):
        self.backend, self.reads = backend, 0

    def __getattr__(self, name):
        return getattr(self.backend, name)

    def to_numpy(self, array):
        self.reads += 1
        return self.backend.to_numpy(array)


@pytest.fixture
def counted(second_device):
    counter = ReadCounter(second_device.backend)
    saved = second_device._backend
    second_device._backend = counter
    try:
        yield second_device, counter
    finally:
        second_device._backend = saved


def test_a_gpt_training_step_reads_nothing_back_from_the_device(counted):
    device, counter = counted
    zero.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.1)).to(device)
    optimizer = zero.optim.AdamW(model.parameters(), lr=1e-3)
    x = zero.randint(0, 11, (4, 8), device=device)
    y = zero.randint(0, 11, (4, 8), device=device)
    counter.reads = 0
    for _ in range(2):
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        zero.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    assert counter.reads == 0
    assert np.isfinite(loss.item()) and counter.reads >= 1  # reading the loss is the one wait


class WrappingLookups:
    """The CPU kernels, but index_select wraps out-of-range indices as a GPU gather does
    (CuPy's take), instead of raising at once as NumPy's does."""

    def __init__(self, kernels):
        self.kernels = kernels

    def __getattr__(self, name):
        return getattr(self.kernels, name)

    def index_select(self, x, axis, index, out):
        np.take(x, index, axis=axis, out=out, mode="wrap")


def test_an_index_out_of_range_raises_at_the_next_read(second_device, monkeypatch):
    if second_device.backend.__name__ == "zero.backends.cpu":
        monkeypatch.setattr(second_device, "_kernels", WrappingLookups(second_device.kernels))
    table = zero.randn(5, 3, device=second_device)
    looked_up = F.embedding(zero.tensor([1, 7], device=second_device), table)   # no error yet ...
    with pytest.raises(ZeroIndexError, match=r"index_select: index out of range.*\[1, 7\].*ZERO_EAGER_CHECKS"):
        looked_up.sum().item()                                                 # ... but here
    assert F.embedding(zero.tensor([1, 4], device=second_device), table).sum().item() == pytest.approx(
        float(np.asarray(table)[[1, 4]].sum()), rel=1e-6)                       # the queue was emptied


def test_a_bad_target_raises_at_the_next_read_and_names_the_loss(second_device):
    logits = zero.randn(3, 4, device=second_device)
    loss = F.cross_entropy(logits, zero.tensor([0, 9, -100], device=second_device))
    with pytest.raises(ZeroIndexError, match="cross_entropy: target 9 is out of bounds for 4 classes"):
        loss.item()


def test_eager_checks_raise_at_the_op(second_device):
    set_eager_checks(True)
    try:
        with pytest.raises(ZeroIndexError, match=r"gather: index out of range"):
            zero.gather(zero.ones(2, 2, device=second_device), 1, zero.tensor([[0, 2]], device=second_device))
    finally:
        set_eager_checks(False)


def test_on_the_cpu_checks_raise_at_the_op():
    with pytest.raises(ZeroIndexError, match=r"index_select: index out of range: values must lie in \[0, 2\]"):
        zero.index_select(zero.ones(3), 0, zero.tensor([0, 3]))
    with pytest.raises(ZeroIndexError, match="target -1 is out of bounds"):
        F.cross_entropy(zero.randn(2, 3), zero.tensor([-1, 0]))
    F.cross_entropy(zero.randn(2, 3), zero.tensor([-100, -100]))  # all ignored: nothing to check
