"""Optimizers checked step by step against their formulas computed by hand."""
import math

import numpy as np
import pytest

import zero
from zero import nn, optim
from zero.optim.lr_scheduler import ConstantLR, StepLR, WarmupCosineLR, warmup_cosine_lr

GRADS = [np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.3, -0.2]), np.array([-1.5, 0.0, 0.7])]
START = np.array([1.0, -2.0, 0.5])


def run(optimizer_factory, steps=3):
    p = nn.Parameter(zero.tensor(START.copy(), dtype=zero.float64))
    opt = optimizer_factory([p])
    history = []
    for g in GRADS[:steps]:
        p.grad = zero.tensor(g, dtype=zero.float64)
        opt.step()
        history.append(p.detach().numpy().copy())
    return history


def test_plain_sgd():
    history = run(lambda ps: optim.SGD(ps, lr=0.1))
    expected = START.copy()
    for g, got in zip(GRADS, history):
        expected = expected - 0.1 * g
        np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_and_weight_decay(nesterov):
    lr, mu, wd = 0.1, 0.9, 0.01
    history = run(lambda ps: optim.SGD(ps, lr=lr, momentum=mu, weight_decay=wd, nesterov=nesterov))
    p, buf = START.copy(), None
    for g, got in zip(GRADS, history):
        g = g + wd * p
        buf = g if buf is None else mu * buf + g
        p = p - lr * (g + mu * buf if nesterov else buf)
        np.testing.assert_allclose(got, p, rtol=1e-12)


def test_adamw_follows_the_book():
    lr, (b1, b2), eps, wd = 0.01, (0.9, 0.99), 1e-8, 0.1
    history = run(lambda ps: optim.AdamW(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd))
    p, m, v = START.copy(), np.zeros(3), np.zeros(3)
    for t, (g, got) in enumerate(zip(GRADS, history), start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        p = p - (alpha * m / np.sqrt(v + eps) + lr * wd * p)
        np.testing.assert_allclose(got, p, rtol=1e-12)


def test_adamw_float32_kernel_matches_float64_reference():
    p = nn.Parameter(zero.tensor(START.astype(np.float32)))
    opt = optim.AdamW([p], lr=0.01)
    ref = nn.Parameter(zero.tensor(START, dtype=zero.float64))
    ref_opt = optim.AdamW([ref], lr=0.01)
    for g in GRADS:
        p.grad, ref.grad = zero.tensor(g.astype(np.float32)), zero.tensor(g, dtype=zero.float64)
        opt.step()
        ref_opt.step()
    np.testing.assert_allclose(p.detach().numpy(), ref.detach().numpy(), rtol=1e-5)


def test_param_groups_have_their_own_lr_and_skip_missing_grads():
    a = nn.Parameter(zero.ones(2, dtype=zero.float64))
    b = nn.Parameter(zero.ones(2, dtype=zero.float64))
    c = nn.Parameter(zero.ones(2, dtype=zero.float64))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}, {"params": [c]}], lr=0.1)
    a.grad = zero.ones(2, dtype=zero.float64)
    b.grad = zero.ones(2, dtype=zero.float64)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0])
    np.testing.assert_allclose(c.detach().numpy(), [1.0, 1.0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}])


def test_step_is_not_recorded_and_refuses_nothing():
    p = nn.Parameter(zero.ones(3))
    opt = optim.AdamW([p])
    (p * 2).sum().backward()
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_optimizer_state_dict_resumes_exactly():
    def make():
        zero.manual_seed(3)
        model = nn.Linear(3, 2)
        return model, optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)

    x = zero.randn(4, 3)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            (model(x) ** 2).mean().backward()
            opt.step()

    model, opt = make()
    train(model, opt, 4)
    uninterrupted = [p.detach().numpy().copy() for p in model.parameters()]

    model, opt = make()
    train(model, opt, 2)
    saved_model, saved_opt = model.state_dict(), opt.state_dict()
    model2, opt2 = make()
    model2.load_state_dict(saved_model)
    opt2.load_state_dict(saved_opt)
    train(model2, opt2, 2)
    for got, want in zip(model2.parameters(), uninterrupted):
        np.testing.assert_array_equal(got.detach().numpy(), want)
    assert opt2.state[next(iter(model2.parameters()))]["step"] == 4


def test_warmup_cosine_boundaries():
    max_lr, min_lr, warmup, total = 1e-3, 1e-4, 100, 1000
    lr = lambda t: warmup_cosine_lr(t, max_lr, min_lr, warmup, total)  # noqa: E731
    assert lr(0) == pytest.approx(max_lr / warmup)
    assert lr(warmup - 1) == pytest.approx(max_lr)
    assert lr(warmup) == pytest.approx(max_lr)
    assert lr((warmup + total) // 2) == pytest.approx((max_lr + min_lr) / 2)
    assert lr(total) == pytest.approx(min_lr)
    assert lr(total + 500) == pytest.approx(min_lr)


def test_schedulers_set_group_lr():
    p = nn.Parameter(zero.ones(1))
    opt = optim.SGD([p], lr=0.1)
    sched = WarmupCosineLR(opt, warmup_steps=10, total_steps=100, min_lr=0.01)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)  # step 0 of warm-up
    for _ in range(9):
        sched.step()
    assert sched.get_last_lr()[0] == pytest.approx(0.1)
    opt = optim.SGD([p], lr=0.1)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    assert lrs == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025])
    opt = optim.SGD([p], lr=0.3)
    sched = ConstantLR(opt)
    sched.step()
    assert opt.param_groups[0]["lr"] == 0.3


def test_clip_grad_norm():
    a = nn.Parameter(zero.zeros(2))
    b = nn.Parameter(zero.zeros(1))
    a.grad, b.grad = zero.tensor([3.0, 0.0]), zero.tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    clipped = math.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in (a, b)))
    assert clipped == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), [0.6, 0.0], rtol=1e-5)  # direction kept
    a.grad, b.grad = zero.tensor([0.3, 0.0]), zero.tensor([0.4])
    assert nn.utils.clip_grad_norm_([a, b], max_norm=1.0).item() == pytest.approx(0.5)
    np.testing.assert_allclose(a.grad.numpy(), [0.3, 0.0], rtol=1e-6)  # below the threshold: untouched
