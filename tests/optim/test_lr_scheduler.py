"""Learning-rate schedules: each sequence against its closed form, and PyTorch's protocol
(initial_lr, last_epoch, the order warning, chaining, state_dict)."""
import math
import warnings

import numpy as np
import pytest

import zero
from zero import nn, optim
from zero.optim import lr_scheduler as S

BASE = 0.1


def optimizer(lr=BASE, groups=1, cls=optim.SGD, **options):
    params = [nn.Parameter(zero.ones(1)) for _ in range(groups)]
    return cls([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(params)], lr=lr, **options)


def lrs(opt, scheduler, n, group=0):
    """The lr of each of n steps, stepping as a training loop does (optimizer first)."""
    seen = []
    for _ in range(n):
        seen.append(opt.param_groups[group]["lr"])
        opt.step()
        scheduler.step()
    return seen


CLOSED_FORMS = {
    "StepLR": (lambda o: S.StepLR(o, step_size=3, gamma=0.5), lambda t: BASE * 0.5 ** (t // 3)),
    "MultiStepLR": (lambda o: S.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1),
                    lambda t: BASE * 0.1 ** sum(m <= t for m in [2, 5, 5])),
    "ExponentialLR": (lambda o: S.ExponentialLR(o, gamma=0.9), lambda t: BASE * 0.9 ** t),
    "CosineAnnealingLR": (lambda o: S.CosineAnnealingLR(o, T_max=6, eta_min=0.01),
                          lambda t: 0.01 + (BASE - 0.01) * (1 + math.cos(math.pi * t / 6)) / 2),
    "LinearLR": (lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=4),
                 lambda t: BASE * (0.25 + 0.5 * min(t, 4) / 4)),
    "ConstantLR": (lambda o: S.ConstantLR(o, factor=0.5, total_iters=3), lambda t: BASE * (0.5 if t < 3 else 1.0)),
    "LambdaLR": (lambda o: S.LambdaLR(o, lambda t: 1 / (t + 1)), lambda t: BASE / (t + 1)),
    "MultiplicativeLR": (lambda o: S.MultiplicativeLR(o, lambda t: 0.5 if t % 2 else 1.0),
                         lambda t: BASE * 0.5 ** ((t + 1) // 2)),
    "WarmupCosineLR": (lambda o: S.WarmupCosineLR(o, warmup_steps=3, total_steps=10, min_lr=0.01),
                       lambda t: S.warmup_cosine_lr(t, BASE, 0.01, 3, 10)),
}


@pytest.mark.parametrize("name", CLOSED_FORMS)
def test_each_schedule_follows_its_closed_form(name):
    make, formula = CLOSED_FORMS[name]
    opt = optimizer()
    scheduler = make(opt)
    n = 20  # cosine: more than three half-periods
    np.testing.assert_allclose(lrs(opt, scheduler, n), [formula(t) for t in range(n)], rtol=1e-12)
    assert scheduler.get_last_lr() == [opt.param_groups[0]["lr"]]
    assert opt.param_groups[0]["initial_lr"] == BASE


def test_one_cycle_follows_the_1cycle_formula_and_cycles_momentum():
    opt = optimizer(cls=optim.SGD, momentum=0.9)
    scheduler = S.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    low, top = 1.0 / 25, 1.0
    bottom = low / 1e4

    def cos(start, end, p):
        return end + (start - end) / 2 * (1 + math.cos(math.pi * p))

    want, momenta = [], []
    for t in range(10):
        p = t / 2.0 if t <= 2 else (t - 2.0) / 7.0
        want.append(cos(low, top, p) if t <= 2 else cos(top, bottom, p))
        momenta.append(cos(0.95, 0.85, p) if t <= 2 else cos(0.85, 0.95, p))
    got, seen_momenta = [], []
    for _ in range(10):
        got.append(opt.param_groups[0]["lr"])
        seen_momenta.append(opt.param_groups[0]["momentum"])
        opt.step()
        if len(got) < 10:
            scheduler.step()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(seen_momenta, momenta, rtol=1e-12)
    scheduler.step()
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        scheduler.step()


def test_one_cycle_moves_adams_beta1():
    opt = optimizer(cls=optim.Adam)
    S.OneCycleLR(opt, max_lr=0.01, total_steps=5)
    assert opt.param_groups[0]["betas"] == (0.95, 0.999)


def test_sequential_runs_one_schedule_after_another():
    opt = optimizer()
    warmup = S.LinearLR(opt, start_factor=0.1, total_iters=3)
    decay = S.ExponentialLR(opt, gamma=0.5)
    scheduler = S.SequentialLR(opt, [warmup, decay], milestones=[3])
    want = [BASE * 0.1, BASE * 0.4, BASE * 0.7] + [BASE * 0.5 ** k for k in range(5)]
    np.testing.assert_allclose(lrs(opt, scheduler, 8), want, rtol=1e-12)


def test_two_schedulers_on_one_optimizer_compose():
    opt = optimizer()
    step = S.StepLR(opt, step_size=2, gamma=0.1)
    exponential = S.ExponentialLR(opt, gamma=0.5)
    seen = []
    for _ in range(5):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        step.step()
        exponential.step()
    np.testing.assert_allclose(seen, [BASE * 0.1 ** (t // 2) * 0.5 ** t for t in range(5)], rtol=1e-12)
    opt = optimizer()
    chained = S.ChainedScheduler([S.StepLR(opt, step_size=2, gamma=0.1), S.ExponentialLR(opt, gamma=0.5)])
    np.testing.assert_allclose(lrs(opt, chained, 5), seen, rtol=1e-12)


def test_reduce_on_plateau_waits_patience_then_cools_down():
    opt = optimizer(groups=2)
    scheduler = S.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=[0.0, 0.15])
    seen = []
    for loss in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.8]:
        scheduler.step(zero.tensor(loss))  # a 0-d tensor is a metric too
        seen.append(scheduler.get_last_lr())
    first = [g[0] for g in seen]
    assert first == pytest.approx([0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025])
    assert seen[-1][1] == pytest.approx(0.15)  # floored by its min_lr
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=1.0)


def test_stepping_the_scheduler_first_warns_as_pytorch():
    opt = optimizer()
    scheduler = S.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        scheduler.step()
    opt = optimizer()
    scheduler = S.StepLR(opt, step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        scheduler.step()


def test_a_subclass_step_counts_for_the_order_rule():
    class Plain(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            return None

    opt = Plain([nn.Parameter(zero.ones(1))])
    scheduler = S.ExponentialLR(opt, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        scheduler.step()
    assert opt.param_groups[0]["lr"] == 0.05


def test_get_lr_outside_step_warns():
    scheduler = S.ExponentialLR(optimizer(), gamma=0.5)
    with pytest.warns(UserWarning, match="get_last_lr"):
        scheduler.get_lr()


def test_resuming_needs_initial_lr_and_continues_the_sequence():
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(optimizer(), step_size=2, last_epoch=4)
    opt = optimizer()
    scheduler = S.CosineAnnealingLR(opt, T_max=8)
    straight = lrs(opt, scheduler, 10)

    opt = optimizer()
    scheduler = S.CosineAnnealingLR(opt, T_max=8)
    first = lrs(opt, scheduler, 4)
    saved_optimizer = opt.state_dict()
    opt = optimizer()
    opt.load_state_dict(saved_optimizer)  # brings initial_lr and the current lr
    scheduler = S.CosineAnnealingLR(opt, T_max=8, last_epoch=3)
    np.testing.assert_allclose(first + lrs(opt, scheduler, 6), straight, rtol=1e-12)


@pytest.mark.parametrize("name", CLOSED_FORMS)
def test_state_dict_through_a_checkpoint_continues_the_sequence(name, tmp_path):
    make, _ = CLOSED_FORMS[name]
    opt = optimizer()
    scheduler = make(opt)
    straight = lrs(opt, scheduler, 12)

    opt = optimizer()
    scheduler = make(opt)
    first = lrs(opt, scheduler, 5)
    zero.save({"optimizer": opt.state_dict(), "scheduler": scheduler.state_dict()}, tmp_path / "c.safetensors")
    checkpoint = zero.load(tmp_path / "c.safetensors")
    opt = optimizer()
    scheduler = make(opt)
    opt.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    np.testing.assert_allclose(first + lrs(opt, scheduler, 7), straight, rtol=1e-12)


def test_state_dict_is_every_attribute_but_the_optimizer():
    opt = optimizer()
    scheduler = S.StepLR(opt, step_size=3, gamma=0.5)
    assert set(scheduler.state_dict()) == {"step_size", "gamma", "base_lrs", "last_epoch", "_step_count",
                                           "_is_initial", "_get_lr_called_within_step", "_last_lr"}
    sequential = S.SequentialLR(opt, [S.ConstantLR(opt), S.ExponentialLR(opt, 0.9)], milestones=[2])
    state = sequential.state_dict()
    assert set(state) == {"_milestones", "last_epoch", "_last_lr", "_schedulers"}
    assert len(state["_schedulers"]) == 2 and "factor" in state["_schedulers"][0]


def test_warmup_cosine_resumes_at_last_epoch_and_loads_the_old_state_layout():
    opt = optimizer()
    S.WarmupCosineLR(opt, warmup_steps=2, total_steps=10)  # sets initial_lr, as the jobs' fresh runs do
    resumed = S.WarmupCosineLR(opt, warmup_steps=2, total_steps=10, last_epoch=4)
    assert resumed.last_epoch == 5 and opt.param_groups[0]["lr"] == pytest.approx(S.warmup_cosine_lr(5, BASE, 0, 2,
                                                                                                       10))
    resumed.load_state_dict({"last_step": 7, "base_lrs": [BASE]})  # Zero's layout before PyTorch's
    assert resumed.last_epoch == 7


def test_warmup_cosine_boundaries():
    max_lr, min_lr, warmup, total = 1e-3, 1e-4, 100, 1000
    lr = lambda t: S.warmup_cosine_lr(t, max_lr, min_lr, warmup, total)  # noqa: E731
    assert lr(0) == pytest.approx(max_lr / warmup)
    assert lr(warmup - 1) == pytest.approx(max_lr)
    assert lr(warmup) == pytest.approx(max_lr)
    assert lr((warmup + total) // 2) == pytest.approx((max_lr + min_lr) / 2)
    assert lr(total) == pytest.approx(min_lr)
    assert lr(total + 500) == pytest.approx(min_lr)


def test_step_with_an_epoch_is_deprecated_and_uses_the_closed_form():
    opt = optimizer()
    scheduler = S.StepLR(opt, step_size=2, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning, match="deprecated"):
        scheduler.step(5)
    assert opt.param_groups[0]["lr"] == pytest.approx(BASE * 0.25)


def test_arguments_are_checked():
    opt = optimizer(groups=2)
    with pytest.raises(ValueError, match="between 0 and 1"):
        S.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        S.LambdaLR(opt, [lambda t: 1.0])
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), step_size=1)
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        S.OneCycleLR(opt, max_lr=[0.1], total_steps=10)
    with pytest.raises(ValueError, match="does not support"):
        S.SequentialLR(opt, [S.ReduceLROnPlateau(opt), S.ConstantLR(opt)], milestones=[1])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        S.SequentialLR(opt, [S.ConstantLR(opt)], milestones=[1])
