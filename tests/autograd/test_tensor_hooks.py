"""Tensor.register_hook: PyTorch's gradient hooks on leaves and on intermediate tensors."""
from __future__ import annotations

import pytest

import zero
from zero.errors import AutogradError


def test_a_leaf_hook_sees_the_gradient_and_may_replace_it():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0]] and x.grad.tolist() == [20.0, 40.0]


def test_a_hook_on_an_intermediate_changes_what_flows_upstream():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]      # 3 * (1 * 2)
    assert y.grad.tolist() == [2.0, 2.0]      # retain_grad keeps the hooked gradient, as in PyTorch


def test_hooks_run_in_order_each_on_the_previous_result():
    x = zero.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 3)
    (2 * x).sum().backward()
    assert x.grad.tolist() == [9.0]           # (2 + 1) * 3


def test_a_hook_runs_once_per_backward_with_the_summed_gradient():
    x = zero.tensor([1.0], requires_grad=True)
    y = x * 2
    calls = []
    y.register_hook(lambda g: calls.append(g.item()))
    (y + y * y).sum().backward()
    assert calls == [1.0 + 2 * 2.0]


def test_remove_takes_the_hook_off():
    x = zero.tensor([1.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    handle.remove()  # twice is harmless
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0]


def test_hooks_apply_to_autograd_grad_too():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 0.5)
    (grad,) = zero.autograd.grad(y.sum(), [x])
    assert grad.tolist() == [1.0, 2.0] and x.grad is None


def test_a_hook_returning_a_new_tensor_is_not_aliased_by_grad():
    kept = []
    x = zero.tensor([1.0, 2.0], requires_grad=True)

    def keep(g):
        kept.append(g * 1)
        return kept[-1]

    x.register_hook(keep)
    (x * 1).sum().backward()
    (x * 1).sum().backward()   # accumulates into .grad: the hook's tensor must not change
    assert kept[0].tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]


def test_bad_hooks_are_refused_by_name():
    with pytest.raises(AutogradError, match="does not require grad"):
        zero.ones(2).register_hook(lambda g: g)
    with pytest.raises(TypeError, match="must be callable"):
        zero.ones(2, requires_grad=True).register_hook(3)
    x = zero.ones(2, requires_grad=True)
    x.register_hook(lambda g: zero.ones(3))
    with pytest.raises(AutogradError, match=r"same shape, \[2\]"):
        (x * 2).sum().backward()


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (zero, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        h = x.tanh()
        h.register_hook(lambda g: g.clamp(-0.5, 0.5))
        x.register_hook(lambda g: g * 2)
        (h * h * 4).sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == pytest.approx(results[1], rel=1e-5)


def test_a_post_accumulate_hook_sees_the_leaf_with_its_grad_summed():
    w = zero.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda leaf: seen.append((leaf is w, leaf.grad.tolist())))
    (w * 3).sum().backward()
    (w * w).sum().backward()
    assert seen == [(True, [3.0, 3.0]), (True, [5.0, 7.0])]
    handle.remove()
    (w * 1).sum().backward()
    assert len(seen) == 2


def test_a_post_accumulate_hook_is_for_leaves_only():
    x = zero.ones(2, requires_grad=True)
    with pytest.raises(AutogradError, match="only a leaf tensor"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
