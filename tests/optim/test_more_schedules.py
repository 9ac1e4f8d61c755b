"""CosineAnnealingWarmRestarts, CyclicLR, PolynomialLR (and again ConstantLR, MultiplicativeLR,
LinearLR, SequentialLR, ChainedScheduler, OneCycleLR) against PyTorch's: the same lrs -- and
momenta, where the schedule sets them -- over 30 steps, on two parameter groups."""
import math
import warnings

import numpy as np
import pytest

import zero

torch = pytest.importorskip("torch")

STEPS = 30

SCHEDULES = {
    "WarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4),
    "WarmRestarts-Tmult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
    "Cyclic-triangular": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.3], step_size_up=4),
    "Cyclic-triangular2": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=5,
                                                  mode="triangular2", base_momentum=0.7, max_momentum=0.95),
    "Cyclic-exp_range": lambda S, o: S.CyclicLR(o, [0.01, 0.02], 0.2, step_size_up=5, mode="exp_range",
                                                gamma=0.95, cycle_momentum=False),
    "Cyclic-scale_fn": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 1 / (1 + x),
                                               scale_mode="iterations"),
    "Polynomial": lambda S, o: S.PolynomialLR(o, total_iters=12, power=2.0),
    "Polynomial-defaults": lambda S, o: S.PolynomialLR(o),
    "Constant": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=7),
    "Multiplicative": lambda S, o: S.MultiplicativeLR(o, lambda t: 0.95),
    "Linear": lambda S, o: S.LinearLR(o, start_factor=0.1, total_iters=10),
    "Sequential": lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                                  S.CosineAnnealingWarmRestarts(o, T_0=6)], milestones=[5]),
    "Chained": lambda S, o: S.ChainedScheduler([S.PolynomialLR(o, total_iters=20),
                                                S.MultiplicativeLR(o, lambda t: 0.99)]),
    "OneCycle": lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=STEPS + 1),
}


def build(lib, optimizer="SGD"):
    params = [lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.2}]
    if optimizer == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


def trace(lib, make, optimizer="SGD"):
    opt = build(lib, optimizer)
    scheduler = make(lib.optim.lr_scheduler, opt)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(STEPS):
            rows.append([g["lr"] for g in opt.param_groups] + [g.get("momentum", g.get("betas", (0,))[0])
                                                               for g in opt.param_groups])
            opt.step()
            scheduler.step()
    rows.append(list(scheduler.get_last_lr()))
    return rows


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lrs_equal_pytorch_over_30_steps(name):
    ours, theirs = trace(zero, SCHEDULES[name]), trace(torch, SCHEDULES[name])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert len({tuple(r) for r in ours[:-1]}) > 1   # (the schedule moves)


def test_cyclic_momentum_on_adam_beta1():
    make = SCHEDULES["Cyclic-triangular2"]
    ours, theirs = trace(zero, make, "Adam"), trace(torch, make, "Adam")
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("epochs", [[0, 1.5, 3.2, 7, 12.25, 3], [2, 9, 21, 0.5]])
def test_warm_restarts_with_fractional_epochs(epochs):
    results = []
    for lib in (zero, torch):
        opt = build(lib)
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        lrs = []
        for epoch in epochs:
            opt.step()
            scheduler.step(epoch)
            lrs.append([g["lr"] for g in opt.param_groups] + [scheduler.last_epoch])
        results.append(lrs)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_polynomial_closed_form():
    opt = build(zero)
    s = zero.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.step(2)
    assert math.isclose(opt.param_groups[0]["lr"], 0.1 * 0.5 ** 3)


@pytest.mark.parametrize("make,message", [
    (lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0), "T_0"),
    (lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), "T_mult"),
    (lambda S, o: S.CyclicLR(o, 0.01, 0.1, mode="sawtooth"), "mode is invalid"),
    (lambda S, o: S.CyclicLR(o, [0.01], 0.1), "base_lr"),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make(zero.optim.lr_scheduler, build(zero))
    with pytest.raises(ValueError):
        make(torch.optim.lr_scheduler, build(torch))


def test_cyclic_needs_momentum():
    for lib in (zero, torch):
        p = [lib.nn.Parameter(lib.ones(1))]
        with pytest.raises(ValueError, match="momentum"):
            lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad(p), 0.01, 0.1)


def test_state_dict_resumes():
    opt = build(zero)
    s = zero.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="triangular2")
    for _ in range(5):
        opt.step()
        s.step()
    saved = s.state_dict()
    opt2 = build(zero)
    s2 = zero.optim.lr_scheduler.CyclicLR(opt2, 0.01, 0.1, step_size_up=3, mode="triangular2")
    s2.load_state_dict(saved)
    opt2.step()
    s2.step()
    opt.step()
    s.step()
    assert s2.get_last_lr() == s.get_last_lr()


class Shrink:
    """A callable object: CyclicLR saves its __dict__."""

    def __init__(self):
        self.rate = 0.5

    def __call__(self, x):
        return self.rate ** x


@pytest.mark.parametrize("scale_fn", [None, Shrink()], ids=["built-in", "callable-object"])
def test_cyclic_state_dict_moves_between_the_libraries(scale_fn):
    """PyTorch's CyclicLR state dict, loaded into Zero's, continues PyTorch's lrs (and back)."""
    def make(lib, fn):
        opt = build(lib)
        return opt, lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="triangular2",
                                                    scale_fn=fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topt, ts = make(torch, scale_fn)
        zopt, zs = make(zero, Shrink() if scale_fn is not None else None)
        for _ in range(4):
            topt.step()
            ts.step()
        if scale_fn is not None:
            scale_fn.rate = 0.25   # (saved with the state)
        saved = ts.state_dict()
        assert set(saved) == set(zs.state_dict())
        zs.load_state_dict(saved)
        for group, tgroup in zip(zopt.param_groups, topt.param_groups):
            group["lr"], group["momentum"] = tgroup["lr"], tgroup["momentum"]
        for _ in range(6):
            topt.step()
            ts.step()
            zopt.step()
            zs.step()
            assert zs.get_last_lr() == ts.get_last_lr()
        back = zs.state_dict()
        ts.load_state_dict(back)
        assert ts.last_epoch == zs.last_epoch


def test_a_schedule_of_one_s_own_on_lr_scheduler_gives_pytorch_s_rates():
    """A program's own schedule: a subclass of LRScheduler defining get_lr()."""
    import zero

    def halving(lib):
        class Halving(lib.optim.lr_scheduler.LRScheduler):
            def get_lr(self):
                return [group["lr"] * (0.5 if self.last_epoch % 3 == 0 and self.last_epoch else 1.0)
                        for group in self.optimizer.param_groups]
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.8)
        schedule = Halving(optimizer)
        rates = []
        for _ in range(10):
            optimizer.step()
            schedule.step()
            rates.append(schedule.get_last_lr()[0])
        return rates

    torch = pytest.importorskip("torch")
    assert halving(zero) == pytest.approx(halving(torch))
