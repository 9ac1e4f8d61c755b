"""Memory: a training step leaves nothing behind but the gradients."""
from __future__ import annotations

import gc

import zero


def _live() -> int:
    return zero.cpu.memory_stats()["live_bytes"]


def _params():
    zero.manual_seed(0)
    return [zero.randn(8, 16, requires_grad=True), zero.zeros(16, requires_grad=True),
            zero.randn(16, 4, requires_grad=True), zero.zeros(4, requires_grad=True)]


def _loss(params):
    w1, b1, w2, b2 = params
    x = zero.randn(5, 8)
    target = zero.randint(0, 4, (5,))
    h = (x @ w1 + b1).relu()
    logits = (h @ w2 + b2).T.T  # a view in the graph too
    logits = logits - logits.logsumexp(1, keepdim=True)
    picked = logits.gather(1, target.unsqueeze(1))
    return -picked.mean() + (h * h).sum() * 1e-3 + w1[:2, ::3].abs().sum()


def test_live_bytes_return_to_their_value_after_backward_and_dropping_the_loss():
    params = _params()
    _loss(params).backward()  # a first step so that anything lazily created exists
    for p in params:
        p.grad = None
    gc.collect()
    before = _live()

    loss = _loss(params)
    assert _live() > before  # the graph holds activations
    loss.backward()
    grads = sum(p.grad.untyped_storage().handle.base.nbytes for p in params)
    del loss
    assert _live() == before + grads  # only the gradients are new
    for p in params:
        p.grad = None
    assert _live() == before


def test_a_graph_dropped_without_backward_frees_its_activations():
    params = _params()
    gc.collect()
    before = _live()
    loss = _loss(params)
    assert _live() > before
    del loss
    assert _live() == before  # reference counting alone, no cycles to collect


def test_backward_with_retain_graph_keeps_memory_until_the_loss_goes():
    params = _params()
    gc.collect()
    before = _live()
    loss = _loss(params)
    loss.backward(retain_graph=True)
    loss.backward()
    for p in params:
        p.grad = None
    del loss
    assert _live() == before


def test_no_grad_forward_keeps_nothing():
    params = _params()
    gc.collect()
    before = _live()
    with zero.no_grad():
        loss = _loss(params)
    assert loss.grad_fn is None
    del loss
    assert _live() == before
