"""Optimizers checked step by step against their formulas, computed here in NumPy (float64)."""
import math

import numpy as np
import pytest

import zero
from zero import nn, optim

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


@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_adamw_is_pytorchs_update_by_default(eps):
    lr, (b1, b2), wd = 0.01, (0.9, 0.99), 0.1
    history = run(lambda ps: optim.AdamW(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd))
    p, m, v = START.copy(), np.zeros(3), np.zeros(3)
    for t, (g, got) in enumerate(zip(GRADS, history), start=1):
        p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
        np.testing.assert_allclose(got, p, rtol=1e-12)


def test_adamw_moves_a_parameter_of_tiny_gradients_by_about_lr():
    # First step, g = 1e-6: PyTorch's ε outside the root moves lr · m̂ / (√v̂ + ε) =
    # lr · 1e-6 / (1e-6 + 1e-8); the book's ε inside moves lr · √(1-β2)/(1-β1) · m / √(v + ε)
    # = lr · √1e-3 / 0.1 · 1e-7 / √(1e-15 + 1e-8), about 3e-4 lr.
    moved = {}
    for inside in (False, True):
        p = nn.Parameter(zero.zeros(1, dtype=zero.float64))
        opt = optim.AdamW([p], lr=1e-3, weight_decay=0.0, eps_inside_sqrt=inside)
        p.grad = zero.tensor([1e-6], dtype=zero.float64)
        opt.step()
        moved[inside] = -p.item() / 1e-3
    assert moved[False] == pytest.approx(1 / 1.01, rel=1e-9)
    assert moved[True] == pytest.approx(math.sqrt(1e-3) / 0.1 * 1e-7 / math.sqrt(1e-15 + 1e-8), rel=1e-9)


@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_adamw_with_eps_inside_sqrt_follows_the_book(eps):
    lr, (b1, b2), wd = 0.01, (0.9, 0.99), 0.1
    history = run(lambda ps: optim.AdamW(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd,
                                         eps_inside_sqrt=True))
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


def test_adamw_updates_a_group_whose_parameters_have_taken_different_numbers_of_steps():
    """A group's parameters go to the kernels together, batched by their own step counts: a
    parameter that missed a step is corrected for its own count, as if it were alone."""
    together = [nn.Parameter(zero.tensor(START * (i + 1))) for i in range(3)]
    alone = [nn.Parameter(zero.tensor(START * (i + 1))) for i in range(3)]
    opt = optim.AdamW(together, lr=0.01, weight_decay=0.1)
    opts_alone = [optim.AdamW([p], lr=0.01, weight_decay=0.1) for p in alone]
    for step, g in enumerate(GRADS):
        for i, (p, q, opt_alone) in enumerate(zip(together, alone, opts_alone)):
            takes_part = not (i == 1 and step == 0)   # the second parameter misses the first step
            p.grad = zero.tensor(g * (i + 1)) if takes_part else None
            if takes_part:
                q.grad = zero.tensor(g * (i + 1))
                opt_alone.step()
        opt.step()
    for p, q in zip(together, alone):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert [opt.state[p]["step"].item() for p in together] == [len(GRADS), len(GRADS) - 1, len(GRADS)]


# -- the tensor-op optimizers, each against its formula in NumPy --------------------------------
GRADS5 = GRADS + [np.array([0.4, -0.6, 0.05]), np.array([2.5, 1.0, -0.3])]


def reference_adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
                   decoupled_weight_decay=False):
    p, m, v, vmax = START.copy(), np.zeros(3), np.zeros(3), np.zeros(3)
    for t, g in enumerate(GRADS5, start=1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        v_hat = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v_hat) + eps)
        yield p


def reference_rmsprop(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, maximize=False):
    p, v, mean, b = START.copy(), np.zeros(3), np.zeros(3), np.zeros(3)
    for g in GRADS5:
        g = (-g if maximize else g) + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        mean = alpha * mean + (1 - alpha) * g
        s = np.sqrt(v - mean * mean if centered else v) + eps
        if momentum > 0:
            b = momentum * b + g / s
            p = p - lr * b
        else:
            p = p - lr * g / s
        yield p


def reference_adagrad(lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                      maximize=False):
    p, total = START.copy(), np.full(3, initial_accumulator_value)
    for t, g in enumerate(GRADS5, start=1):
        g = (-g if maximize else g) + weight_decay * p
        total = total + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(total) + eps)
        yield p


def reference_adadelta(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    p, v, u = START.copy(), np.zeros(3), np.zeros(3)
    for g in GRADS5:
        g = (-g if maximize else g) + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
        yield p


RULES = {"Adam": reference_adam, "RMSprop": reference_rmsprop, "Adagrad": reference_adagrad,
         "Adadelta": reference_adadelta}
CASES = [
    ("Adam", {}), ("Adam", {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}), ("Adam", {"lr": 0.05, "maximize": True, "eps": 1e-3}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True, "amsgrad": True}),
    ("RMSprop", {}), ("RMSprop", {"alpha": 0.9, "weight_decay": 0.1, "eps": 1e-4}),
    ("RMSprop", {"momentum": 0.9, "centered": True}), ("RMSprop", {"momentum": 0.5, "maximize": True}),
    ("RMSprop", {"centered": True, "lr": 0.001}),
    ("Adagrad", {}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.5, "initial_accumulator_value": 0.3}),
    ("Adagrad", {"weight_decay": 0.1, "maximize": True, "eps": 1e-3}),
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-3, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
]


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_each_optimizer_follows_its_formula(name, options):
    history = run(lambda ps: getattr(optim, name)(ps, **options), steps=len(GRADS5))
    for step, (got, want) in enumerate(zip(history, RULES[name](**options)), start=1):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=f"step {step}")


def run5(factory, device=None):
    p = nn.Parameter(zero.tensor(START.copy(), dtype=zero.float64, device=device))
    opt = factory([p])
    for g in GRADS5:
        p.grad = zero.tensor(g, dtype=zero.float64, device=device)
        opt.step()
    return p


@pytest.mark.parametrize("name", ["SGD", "AdamW"])
def test_maximize_on_the_fused_optimizers_ascends(name):
    options = {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1} if name == "SGD" else {"lr": 0.1}
    up = run5(lambda ps: getattr(optim, name)(ps, maximize=True, **options))
    p = nn.Parameter(zero.tensor(START.copy(), dtype=zero.float64))
    down = getattr(optim, name)([p], **options)
    for g in GRADS5:  # maximizing f is minimizing −f
        p.grad = zero.tensor(-g, dtype=zero.float64)
        down.step()
    np.testing.assert_allclose(up.detach().numpy(), p.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("name, options", [("Adam", {"amsgrad": True, "weight_decay": 0.1}),
                                           ("RMSprop", {"momentum": 0.9, "centered": True}),
                                           ("Adagrad", {"lr_decay": 0.1}), ("Adadelta", {})])
def test_the_tensor_op_optimizers_run_on_any_device(name, options, second_device):
    """Written with tensor ops, they run where the parameter is (here "cuda")."""
    here = run5(lambda ps: getattr(optim, name)(ps, **options))
    there = run5(lambda ps: getattr(optim, name)(ps, **options), device=second_device)
    assert there.device is second_device
    np.testing.assert_allclose(there.detach().cpu().numpy(), here.detach().numpy(), rtol=1e-14)


@pytest.mark.parametrize("make, message", [
    (lambda ps: optim.Adam(ps, lr=-1), "Invalid learning rate: -1"),
    (lambda ps: optim.Adam(ps, eps=-1e-8), "Invalid epsilon value"),
    (lambda ps: optim.Adam(ps, betas=(1.0, 0.999)), "Invalid beta parameter at index 0"),
    (lambda ps: optim.AdamW(ps, betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
    (lambda ps: optim.Adam(ps, weight_decay=-1), "Invalid weight_decay value"),
    (lambda ps: optim.RMSprop(ps, alpha=-0.5), "Invalid alpha value"),
    (lambda ps: optim.RMSprop(ps, momentum=-0.5), "Invalid momentum value"),
    (lambda ps: optim.Adagrad(ps, lr_decay=-1), "Invalid lr_decay value"),
    (lambda ps: optim.Adagrad(ps, initial_accumulator_value=-1), "Invalid initial_accumulator_value value"),
    (lambda ps: optim.Adadelta(ps, rho=1.5), "Invalid rho value"),
    (lambda ps: optim.SGD(ps, momentum=0.0, nesterov=True), "Nesterov momentum requires a momentum"),
    (lambda ps: optim.SGD(ps, lr=float("nan")), "Invalid learning rate"),
])
def test_hyper_parameters_are_checked_in_pytorchs_words(make, message):
    with pytest.raises(ValueError, match=message):
        make([nn.Parameter(zero.ones(2))])


def test_defaults_are_pytorchs():
    p = [nn.Parameter(zero.ones(2))]
    assert optim.SGD(p).defaults["lr"] == 1e-3
    adam = optim.Adam(p).defaults
    assert (adam["lr"], adam["betas"], adam["eps"], adam["weight_decay"], adam["amsgrad"]) == (1e-3, (0.9, 0.999),
                                                                                             1e-8, 0.0, False)
    assert optim.AdamW(p).defaults["weight_decay"] == 0.01
    rms = optim.RMSprop(p).defaults
    assert (rms["lr"], rms["alpha"], rms["eps"], rms["momentum"], rms["centered"]) == (1e-2, 0.99, 1e-8, 0.0, False)
    ada = optim.Adagrad(p).defaults
    assert (ada["lr"], ada["lr_decay"], ada["eps"], ada["initial_accumulator_value"]) == (1e-2, 0.0, 1e-10, 0.0)
    delta = optim.Adadelta(p).defaults
    assert (delta["lr"], delta["rho"], delta["eps"]) == (1.0, 0.9, 1e-6)


def test_execution_options_are_accepted_and_change_nothing():
    fused = run5(lambda ps: optim.AdamW(ps, lr=0.1, fused=True, foreach=False))
    plain = run5(lambda ps: optim.AdamW(ps, lr=0.1))
    np.testing.assert_array_equal(fused.detach().numpy(), plain.detach().numpy())
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.Adam([nn.Parameter(zero.ones(2))], differentiable=True)
    with pytest.raises(NotImplementedError, match="amsgrad=True, decoupled_weight_decay=True"):
        optim.AdamW([nn.Parameter(zero.ones(2))], amsgrad=True)


def test_step_takes_a_closure_and_returns_its_loss():
    p = nn.Parameter(zero.tensor([3.0]))
    opt = optim.Adagrad([p], lr=0.5)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        calls.append(zero.is_grad_enabled())
        return loss

    with zero.no_grad():  # the closure runs with grad enabled whatever the caller's mode
        loss = opt.step(closure)
    assert loss.item() == 9.0 and calls == [True]
    assert p.item() == pytest.approx(3.0 - 0.5 * 6.0 / (6.0 + 1e-10))


def test_named_parameters_are_kept_as_param_names():
    model = nn.Linear(2, 1)
    opt = optim.Adam(model.named_parameters())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="with names or all without"):
        opt.add_param_group({"params": [nn.Parameter(zero.ones(1))]})


def test_parameter_lists_are_checked():
    p = nn.Parameter(zero.ones(2))
    with pytest.raises(TypeError, match="iterable of tensors"):
        optim.SGD(p)
    with pytest.raises(TypeError, match="not a set"):
        optim.SGD([{"params": {p}}])
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.Adam([p * 2])


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
    step = opt2.state[next(iter(model2.parameters()))]["step"]
    assert step.shape == () and step.dtype is zero.float32 and step.item() == 4


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
