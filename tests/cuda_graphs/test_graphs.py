"""zero.cuda.CUDAGraph / graph / graph_pool_handle: a captured step replays as eager steps run.

On a machine without a GPU "cuda" is played by the CPU backend (``second_device``), and the
capture is its tape of kernel calls (``backends/cpu/graphs.py``); with ZERO_TEST_DEVICE=cuda on
a GPU the same tests capture a real CUDA stream. Either way: N replays must give what N eager
steps give, bit for bit; the capture itself changes nothing; what a graph cannot hold (a read
to the host, random numbers drawn on the host) raises CaptureError and leaves the device
usable; the graph's memory is its own until it is reset.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import zero
from zero.errors import CaptureError
from zero.nn import functional as F

from graph_batches import CLASSES, FEATURES, ROWS, make_batches



def _model_and_optimizer(device, dropout: float = 0.0):
    zero.manual_seed(0)
    model = zero.nn.Sequential(zero.nn.Linear(FEATURES, 16), zero.nn.GELU(), zero.nn.Dropout(dropout),
                               zero.nn.LayerNorm(16), zero.nn.Dropout(dropout),
                               zero.nn.Linear(16, CLASSES)).to(device)
    return model, zero.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2)


def _step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    zero.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    return loss


def _eager(device, batches, dropout=0.0):
    model, optimizer = _model_and_optimizer(device, dropout)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        losses.append(_step(model, optimizer, zero.tensor(x, device=device), zero.tensor(y, device=device)).item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def _graphed(device, batches, dropout=0.0):
    """One eager step (warm-up: momentum buffers made, kernels compiled), then the rest replayed."""
    model, optimizer = _model_and_optimizer(device, dropout)
    x, y = zero.tensor(batches[0][0], device=device), zero.tensor(batches[0][1], device=device)
    optimizer.zero_grad()
    losses = [_step(model, optimizer, x, y).item()]
    static_x, static_y = zero.zeros(ROWS, FEATURES, device=device), zero.zeros(ROWS, dtype=zero.long, device=device)
    optimizer.zero_grad(set_to_none=True)
    before = [p.detach().cpu().numpy().copy() for p in model.parameters()]
    graph = zero.cuda.CUDAGraph()
    with zero.cuda.graph(graph):
        static_loss = _step(model, optimizer, static_x, static_y)
    for p, old in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.detach().cpu().numpy(), old, err_msg="the capture changed a parameter")
    for x, y in batches[1:]:
        static_x.copy_(zero.tensor(x, device=device))
        static_y.copy_(zero.tensor(y, device=device))
        graph.replay()
        losses.append(static_loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], graph


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_replays_equal_eager_steps_bit_for_bit(cuda, dropout):
    """With dropout too: each replay draws its seeds from the default generator, in the order
    the eager step draws them, so it drops the same elements."""
    batches = make_batches(5)
    eager_losses, eager_params = _eager(cuda, batches, dropout)
    graph_losses, graph_params, _ = _graphed(cuda, batches, dropout)
    assert graph_losses == eager_losses
    for a, b in zip(graph_params, eager_params):
        np.testing.assert_array_equal(a, b)


def test_a_replay_reads_the_static_inputs_as_they_are_then(cuda):
    """Data copied in after the capture is what the replay computes on: the same static loss
    tensor holds each replay's value in turn."""
    model = zero.nn.Linear(FEATURES, 1).to(cuda)
    static_x = zero.zeros(ROWS, FEATURES, device=cuda)
    graph = zero.cuda.CUDAGraph()
    with zero.no_grad(), zero.cuda.graph(graph):
        static_out = model(static_x).sum()
    for x, _ in make_batches(3, seed=1):
        static_x.copy_(zero.tensor(x, device=cuda))
        graph.replay()
        with zero.no_grad():
            expected = model(zero.tensor(x, device=cuda)).sum().item()
        assert static_out.item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("read", ["item", "print", "numpy of cpu()", "synchronize", "randn", "tensor from list"])
def test_what_a_graph_cannot_hold_raises_and_the_device_stays_usable(cuda, read):
    x = zero.ones(3, device=cuda)
    actions = {
        "item": lambda: (x * 2).sum().item(),
        "print": lambda: repr(x * 2),
        "numpy of cpu()": lambda: (x * 2).cpu(),
        "synchronize": zero.cuda.synchronize,
        "randn": lambda: zero.randn(3, device=cuda),
        "tensor from list": None,   # a host constant: allowed, a constant of the graph
    }
    graph = zero.cuda.CUDAGraph()
    if actions[read] is None:
        with zero.cuda.graph(graph):
            out = x + zero.tensor([1.0, 2.0, 3.0], device=cuda)
        graph.replay()
        assert out.tolist() == [2.0, 3.0, 4.0]
        return
    with pytest.raises(CaptureError, match="captur"):
        with zero.cuda.graph(graph):
            actions[read]()
    assert not zero.cuda.is_current_stream_capturing()
    with pytest.raises(CaptureError, match="not been captured"):
        graph.replay()
    assert (x * 3).sum().item() == 9.0   # the device works as before


def test_deferred_index_checks_run_after_each_replay(cuda):
    """An embedding's index range is checked at the next read after the replay that used it
    (as an eager step's is), not at capture time only."""
    table = zero.nn.Embedding(10, 4).to(cuda)
    static_ids = zero.zeros(6, dtype=zero.long, device=cuda)
    graph = zero.cuda.CUDAGraph()
    with zero.no_grad(), zero.cuda.graph(graph):
        static_out = table(static_ids).sum()
    static_ids.copy_(zero.tensor([1, 2, 3, 4, 5, 6], device=cuda))
    graph.replay()
    static_out.item()   # in range: no error
    static_ids.copy_(zero.tensor([1, 2, 3, 4, 5, 10], device=cuda))
    with pytest.raises(IndexError, match="embedding"):
        graph.replay()
        static_out.item()


def test_the_graph_owns_its_memory_until_reset(cuda):
    """Storages made while capturing come from the graph's pool: a tensor made afterwards never
    shares their memory; after reset() and the static outputs' end, the device's pool has
    them back."""
    allocator = cuda.backend.allocator
    x = zero.ones(64, 64, device=cuda)
    gc.collect()
    live_before = allocator.live_bytes
    graph = zero.cuda.CUDAGraph()
    with zero.cuda.graph(graph):
        out = (x @ x).relu() + 1
    pool = graph.pool()
    assert pool.reserved_bytes() > 0
    assert allocator.live_bytes >= live_before + pool.reserved_bytes()   # borrowed: live to the device's pool
    graph_addresses = {out.data_ptr()}
    later = [zero.empty(64, 64, device=cuda) for _ in range(4)]
    assert graph_addresses.isdisjoint(t.data_ptr() for t in later)
    graph.replay()
    np.testing.assert_array_equal(out.cpu().numpy(), np.full((64, 64), 65.0, np.float32))
    del later
    graph.reset()
    del out
    gc.collect()
    assert pool.reserved_bytes() == 0
    assert allocator.live_bytes == live_before


def test_graphs_can_share_a_pool(cuda):
    x = zero.full((4,), 2.0, device=cuda)
    first, second = zero.cuda.CUDAGraph(), zero.cuda.CUDAGraph()
    with zero.cuda.graph(first):
        y = x * 3
    with zero.cuda.graph(second, pool=first.pool()):
        z = y + 1
    assert second.pool() is first.pool()
    x.fill_(5.0)
    first.replay()
    second.replay()
    assert z.tolist() == [16.0] * 4
    handle = zero.cuda.graph_pool_handle()
    third = zero.cuda.CUDAGraph()
    with zero.cuda.graph(third, pool=handle):
        w = z * 2
    third.replay()
    assert w.tolist() == [32.0] * 4


def test_misuse_gets_clear_errors(cuda):
    graph = zero.cuda.CUDAGraph()
    with pytest.raises(CaptureError, match="not been captured"):
        graph.replay()
    with pytest.raises(CaptureError, match="without capture_begin"):
        graph.capture_end()
    with pytest.raises(CaptureError, match="no pool yet"):
        graph.pool()
    with pytest.raises(ValueError, match="capture_error_mode"):
        graph.capture_begin(capture_error_mode="strict")
    with pytest.raises(TypeError, match="one stream"):
        zero.cuda.graph(graph, stream=object())
    with pytest.raises(TypeError, match="graph_pool_handle"):
        graph.capture_begin(pool="mine")
    x = zero.ones(2, device=cuda)
    with zero.cuda.graph(graph):
        x.add_(1)
    with pytest.raises(CaptureError, match="already captured"):
        graph.capture_begin()
    other = zero.cuda.CUDAGraph()
    other.capture_begin()
    try:
        with pytest.raises(CaptureError, match="already being captured"):
            zero.cuda.CUDAGraph().capture_begin()
        with pytest.raises(CaptureError, match="while a CUDA graph is being captured"):
            graph.replay()
    finally:
        other.capture_end()
    graph.reset()
    with zero.cuda.graph(graph):   # after reset(), the graph captures again
        x.add_(2)
    graph.replay()
    assert x.tolist() == [3.0, 3.0]   # (the captures ran nothing: 1 + the one replay's 2)


def test_a_checkpointed_dropout_recomputes_its_forwards_mask_in_a_replay(cuda):
    """zero.utils.checkpoint recomputes its block in the backward with the generator put back,
    so its dropout drops what the forward dropped; a replay must too (the recomputation gets
    the forward's seed slot), and the capture itself draws nothing from the generator."""
    from zero.utils.checkpoint import checkpoint

    def build():
        zero.manual_seed(3)
        first, second = zero.nn.Linear(FEATURES, 16).to(cuda), zero.nn.Linear(16, CLASSES).to(cuda)
        return first, second, zero.optim.SGD([*first.parameters(), *second.parameters()], lr=0.1)

    def step(first, second, optimizer, x, y):
        hidden = checkpoint(lambda h: F.dropout(F.gelu(h), 0.4), first(x), use_reentrant=False)
        loss = F.cross_entropy(F.dropout(second(hidden), 0.2), y)
        loss.backward()
        optimizer.step()
        return loss

    batches = make_batches(4, seed=2)
    first, second, optimizer = build()
    eager = []
    for x, y in batches:
        optimizer.zero_grad()
        eager.append(step(first, second, optimizer, zero.tensor(x, device=cuda), zero.tensor(y, device=cuda)).item())
    eager_weights = first.weight.detach().cpu().numpy()

    first, second, optimizer = build()
    static_x, static_y = zero.zeros(ROWS, FEATURES, device=cuda), zero.zeros(ROWS, dtype=zero.long, device=cuda)
    optimizer.zero_grad(set_to_none=True)
    state = zero.random.get_rng_state()
    graph = zero.cuda.CUDAGraph()
    with zero.cuda.graph(graph):
        static_loss = step(first, second, optimizer, static_x, static_y)
    assert zero.random.get_rng_state() == state
    graphed = []
    for x, y in batches:
        static_x.copy_(zero.tensor(x, device=cuda))
        static_y.copy_(zero.tensor(y, device=cuda))
        graph.replay()
        graphed.append(static_loss.item())
    assert graphed == eager
    np.testing.assert_array_equal(first.weight.detach().cpu().numpy(), eager_weights)


@pytest.mark.parametrize("make", [lambda ps: zero.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: zero.optim.AdamW(ps, lr=zero.tensor(1e-3), capturable=True),
                                  lambda ps: zero.optim.RMSprop(ps, lr=1e-3)],
                         ids=["SGD-momentum", "AdamW-capturable", "RMSprop"])
def test_an_optimizer_s_first_step_inside_a_capture_is_refused(cuda, make):
    """The state made at a parameter's first step (zeros, a momentum buffer) would be made again
    by every replay: a clear error, and the same steps work once warmed up."""
    model = zero.nn.Linear(FEATURES, CLASSES).to(cuda)
    optimizer = make(list(model.parameters()))
    for group in optimizer.param_groups:   # (AdamW's tensor lr on the model's device)
        if isinstance(group["lr"], zero.Tensor):
            group["lr"] = group["lr"].to(cuda)
    model(zero.ones(2, FEATURES, device=cuda)).sum().backward()
    graph = zero.cuda.CUDAGraph()
    with pytest.raises(CaptureError, match="take one step before capturing"):
        with zero.cuda.graph(graph):
            optimizer.step()
    optimizer.step()   # the warm-up
    with zero.cuda.graph(graph):
        optimizer.step()
    graph.replay()
