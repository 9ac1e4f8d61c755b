"""Schedules against PyTorch's (an optional oracle: skipped without torch): the same lrs step
by step (chainable forms included), the same state_dict keys, and each library's state
dict continuing the other's sequence."""
import copy
import math

import numpy as np
import pytest

import zero
from zero import nn, optim

torch = pytest.importorskip("torch")


class Halve:
    """A callable object: LambdaLR saves its __dict__."""

    def __init__(self):
        self.every = 3

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


SCHEDULES = {
    "StepLR": lambda S, o: S.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.8),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.001),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=4),
    "ConstantLR-defaults": lambda S, o: S.ConstantLR(o),
    "LambdaLR": lambda S, o: S.LambdaLR(o, [lambda t: 1 / (1 + t), Halve()]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda t: 0.9 if t % 3 else 1.1),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=16),
    "OneCycleLR-three-phase-linear": lambda S, o: S.OneCycleLR(o, max_lr=0.5, epochs=4, steps_per_epoch=4,
                                                               pct_start=0.25, anneal_strategy="linear",
                                                               three_phase=True, div_factor=10.0),
    "SequentialLR": lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=4),
                                                    S.CosineAnnealingLR(o, T_max=6),
                                                    S.ExponentialLR(o, gamma=0.9)], milestones=[4, 10]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3),
                                                         S.ExponentialLR(o, gamma=0.9)]),
    "CosineAnnealingLR+StepLR": lambda S, o: S.ChainedScheduler([S.CosineAnnealingLR(o, T_max=4),
                                                                 S.StepLR(o, step_size=5, gamma=0.5)]),
}
STEPS = 16


def build(lib, optimizer_name="SGD", options=None):
    """Two groups (lr 0.1 and 0.2), an optimizer of ``lib`` (zero or torch)."""
    tensors = lib.optim.__name__ == "zero.optim"
    Parameter = nn.Parameter if tensors else torch.nn.Parameter
    make = zero.ones if tensors else torch.ones
    params = [Parameter(make(1)), Parameter(make(1))]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.2}]
    options = {"momentum": 0.9} if options is None and optimizer_name == "SGD" else (options or {})
    return getattr(lib.optim, optimizer_name)(groups, lr=0.1, **options)


def sequence(opt, scheduler, n):
    """lr and momentum (or beta1) of both groups at each step, the loop's order."""
    seen = []
    for _ in range(n):
        seen.append([(g["lr"], g["momentum"] if "momentum" in g else g["betas"][0]) for g in opt.param_groups])
        opt.step()
        scheduler.step()
    return np.array(seen)


@pytest.mark.parametrize("name", SCHEDULES)
@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam"])
def test_the_same_learning_rates_as_pytorch(name, optimizer_name):
    make = SCHEDULES[name]
    n = STEPS if name.startswith("OneCycle") else 2 * STEPS
    zo, to = build(zero, optimizer_name), build(torch, optimizer_name)
    zs, ts = make(optim.lr_scheduler, zo), make(torch.optim.lr_scheduler, to)
    np.testing.assert_allclose(sequence(zo, zs, n), sequence(to, ts, n), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(zs.get_last_lr(), ts.get_last_lr(), rtol=1e-12)
    assert sorted(zo.param_groups[0]) == sorted(to.param_groups[0])  # initial_lr, max_lr ... as PyTorch


def hyper_parameters(opt) -> list:
    return copy.deepcopy([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])


def restore(opt, groups) -> None:
    for group, saved in zip(opt.param_groups, groups):
        group.update(saved)


@pytest.mark.parametrize("name", SCHEDULES)
def test_state_dict_has_pytorchs_keys_and_moves_between_the_two(name):
    make = SCHEDULES[name]
    zo, to = build(zero), build(torch)
    zs, ts = make(optim.lr_scheduler, zo), make(torch.optim.lr_scheduler, to)
    sequence(zo, zs, 5)
    sequence(to, ts, 5)
    zero_state, torch_state = copy.deepcopy(zs.state_dict()), copy.deepcopy(ts.state_dict())
    zero_groups, torch_groups = hyper_parameters(zo), hyper_parameters(to)
    assert sorted(zero_state) == sorted(torch_state)
    for key in ("last_epoch", "base_lrs", "_step_count", "_last_lr"):
        if key in torch_state:
            assert zero_state[key] == pytest.approx(torch_state[key]), key
    if "_schedulers" in torch_state:
        assert [sorted(s) for s in zero_state["_schedulers"]] == [sorted(s) for s in torch_state["_schedulers"]]
    zero_rest, torch_rest = sequence(zo, zs, 8), sequence(to, ts, 8)

    # PyTorch's state (its scheduler's and its optimizer's groups) continues in Zero ...
    opt = build(zero)
    scheduler = make(optim.lr_scheduler, opt)
    restore(opt, torch_groups)
    scheduler.load_state_dict(torch_state)
    np.testing.assert_allclose(sequence(opt, scheduler, 8), torch_rest, rtol=1e-12, atol=1e-15)
    # ... and Zero's in PyTorch
    opt = build(torch)
    scheduler = make(torch.optim.lr_scheduler, opt)
    restore(opt, zero_groups)
    scheduler.load_state_dict(zero_state)
    np.testing.assert_allclose(sequence(opt, scheduler, 8), zero_rest, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                                  "ConstantLR", "MultiplicativeLR"])
def test_resuming_with_last_epoch_as_pytorch(name):
    """An optimizer state with initial_lr, a scheduler built with last_epoch=k: the lrs that follow."""
    make = SCHEDULES[name]
    runs = []
    for lib in (optim, torch.optim):
        opt = build(zero if lib is optim else torch)
        scheduler = make(lib.lr_scheduler, opt)
        sequence(opt, scheduler, 4)
        groups = hyper_parameters(opt)
        resumed = build(zero if lib is optim else torch)
        restore(resumed, groups)
        resumed_scheduler = make(_WithLastEpoch(lib.lr_scheduler, 3), resumed)
        runs.append(sequence(resumed, resumed_scheduler, 10))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-12, atol=1e-15)


class _WithLastEpoch:
    """The scheduler module, with last_epoch= added to every constructor call."""

    def __init__(self, module, last_epoch):
        self.module, self.last_epoch = module, last_epoch

    def __getattr__(self, name):
        cls = getattr(self.module, name)
        return lambda *args, **kwargs: cls(*args, last_epoch=self.last_epoch, **kwargs)


def test_reduce_on_plateau_as_pytorch():
    losses = [1.0, 0.9, 0.91, 0.92, 0.899, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
    results = []
    for lib, metric in ((zero, zero.tensor), (torch, torch.tensor)):
        opt = build(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, threshold=0.01,
                                                             cooldown=1, min_lr=[0.0, 0.04])
        seen = []
        for loss in losses:
            opt.step()
            scheduler.step(metric(loss))
            seen.append(scheduler.get_last_lr())
        results.append((np.array(seen), scheduler.state_dict()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    zero_state, torch_state = results[0][1], results[1][1]
    assert sorted(zero_state) == sorted(torch_state)
    for key, value in torch_state.items():
        if isinstance(value, float) and math.isinf(value):
            assert zero_state[key] == value
        else:
            assert zero_state[key] == pytest.approx(value), key
