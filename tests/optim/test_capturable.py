"""``capturable=True`` for Adam and AdamW (issue 38: an optimizer step inside a CUDA graph).

- The step count is a 0-d tensor on the parameter's device, advanced there; the host reads
  nothing from the device during ``step()`` (checked with a backend whose ``to_numpy``
  raises, on "cuda" played by the CPU backend).
- The result is the plain step's (AdamW: to the bit where the CPU kernels run) and PyTorch's
  plain step's, with a float lr or a 0-d tensor lr, under a schedule.
- A step captured with ``zero.cuda.graph`` and replayed N times gives N eager steps, a tensor
  lr changed in place between replays included.
- Checkpoints: PyTorch's placement of ``step`` (the checkpoint's group decides).
"""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero import nn, optim
from zero.backends import cpu as cpu_backend
from zero.optim import lr_scheduler

torch = pytest.importorskip("torch")

SHAPES = [(4, 3), (5,), (2, 2, 2)]


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """The CPU, and "cuda": the GPU on a GPU machine, else played by the CPU backend."""
    if request.param == "cpu":
        return zero.device("cpu")
    return request.getfixturevalue("second_device")


def computed_on_cpu(device) -> bool:
    """Whether ``device``'s kernels are the CPU's (the CPU, or played cuda): results to the bit."""
    return device.backend is cpu_backend


def problem(steps, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    weights = [(rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 1.5, s)).astype(dtype) for s in SHAPES]
    grads = [[rng.normal(0, 1, s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    return weights, grads


def zero_params(weights, device):
    return [nn.Parameter(zero.tensor(w.copy(), device=device)) for w in weights]


def values(tensors) -> list:
    return [np.asarray(t.detach().cpu().numpy()).copy() for t in tensors]


def set_grads(params, step_grads, device):
    for p, g in zip(params, step_grads):
        p.grad = zero.tensor(g.copy(), device=device)


def assert_same(got, want, exact, rtol=1e-6):
    for index, (a, b) in enumerate(zip(got, want)):
        if exact:
            np.testing.assert_array_equal(a, b, err_msg=f"parameter {index}")
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-7, err_msg=f"parameter {index}")


ADAMW_OPTIONS = [{"lr": 0.01}, {"lr": 0.01, "eps": 1e-3, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True},
                 {"lr": 0.01, "eps_inside_sqrt": True}]
ADAM_OPTIONS = [{"lr": 0.01}, {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True},
                {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}]
FLOAT32_LR = float(np.float32(0.01))   # what a float32 tensor lr of 0.01 holds


def lr_for(kind: str, device):
    return zero.tensor(0.01, device=device) if kind == "tensor" else FLOAT32_LR


# -- the same result as the plain step, and as PyTorch's ------------------------------------------


@pytest.mark.parametrize("options", ADAMW_OPTIONS, ids=["defaults", "decay-maximize", "book-eps"])
@pytest.mark.parametrize("lr_kind", ["float", "tensor"])
def test_capturable_adamw_is_the_plain_step(device, options, lr_kind):
    """Five steps, a parameter skipping one (its count falls behind the others'): the
    capturable step equals the plain one, to the bit where the CPU kernels run."""
    weights, grads = problem(5)
    plain, captured = zero_params(weights, device), zero_params(weights, device)
    options = {**options, "lr": FLOAT32_LR}
    plain_optimizer = optim.AdamW(plain, **options)
    captured_optimizer = optim.AdamW(captured, **{**options, "lr": lr_for(lr_kind, device)}, capturable=True)
    for step, step_grads in enumerate(grads):
        for params, optimizer in ((plain, plain_optimizer), (captured, captured_optimizer)):
            set_grads(params, step_grads, device)
            if step == 2:
                params[1].grad = None
            optimizer.step()
    assert_same(values(captured), values(plain), computed_on_cpu(device))
    counts = [captured_optimizer.state[p]["step"] for p in captured]
    assert all(c.device == device and c.dtype is zero.float32 and c.shape == () for c in counts)
    assert [float(c) for c in counts] == [5.0, 4.0, 5.0]
    assert all(plain_optimizer.state[p]["step"].device == zero.device("cpu") for p in plain)


def steps_of_both(zp, tp, zo, to, zs, ts, grads, device):
    """Zero's and PyTorch's optimizers and schedules stepped on the same gradients; yields
    after each step."""
    for step_grads in grads:
        set_grads(zp, step_grads, device)
        for p, g in zip(tp, step_grads):
            p.grad = torch.tensor(g.copy())
        zo.step()
        to.step()
        zs.step()
        ts.step()
        yield


@pytest.mark.parametrize("name,options", [*(("AdamW", o) for o in ADAMW_OPTIONS[:2]),
                                          *(("Adam", o) for o in ADAM_OPTIONS)],
                         ids=["AdamW-defaults", "AdamW-decay-maximize", "Adam-defaults", "Adam-amsgrad",
                              "Adam-decoupled-maximize"])
@pytest.mark.parametrize("lr_kind", ["float", "tensor"])
def test_capturable_steps_under_a_schedule_match_pytorch(device, name, options, lr_kind):
    """Zero's capturable step against PyTorch's plain one (PyTorch's capturable wants a GPU),
    under StepLR then cosine annealing (chained): a tensor lr is written in place."""
    weights, grads = problem(6)
    zp = zero_params(weights, device)
    tp = [torch.nn.Parameter(torch.tensor(w.copy())) for w in weights]
    zlr = lr_for(lr_kind, device)
    tlr = torch.tensor(0.01) if lr_kind == "tensor" else FLOAT32_LR
    zo = getattr(optim, name)(zp, **{**options, "lr": zlr}, capturable=True)
    to = getattr(torch.optim, name)(tp, **{**options, "lr": tlr})
    zs = lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(zo, 2, 0.5), lr_scheduler.CosineAnnealingLR(zo, 8)])
    ts = torch.optim.lr_scheduler.ChainedScheduler([torch.optim.lr_scheduler.StepLR(to, 2, 0.5),
                                                    torch.optim.lr_scheduler.CosineAnnealingLR(to, 8)])
    for _ in steps_of_both(zp, tp, zo, to, zs, ts, grads, device):
        assert_same(values(zp), [p.detach().numpy() for p in tp], exact=False, rtol=2e-6)
        want = ts.get_last_lr()
        got = zs.get_last_lr()
        assert [type(v).__name__ for v in got] == [type(v).__name__ for v in want]   # tensors for a tensor lr
        np.testing.assert_allclose([float(v) for v in got], [float(v) for v in want], rtol=1e-6)
    if lr_kind == "tensor":
        assert zo.param_groups[0]["lr"] is zlr   # written in place, never replaced
        assert zs.get_last_lr()[0] is not zlr and zo.param_groups[0]["initial_lr"] is not zlr
        assert float(zo.param_groups[0]["initial_lr"]) == FLOAT32_LR


def test_a_tensor_lr_follows_pytorch_s_rules():
    p = nn.Parameter(zero.ones(3))
    with pytest.raises(ValueError, match="needs capturable=True"):
        optim.AdamW([p], lr=zero.tensor(0.01), foreach=True)
    with pytest.raises(ValueError, match="holds one number"):
        optim.Adam([p], lr=zero.tensor([0.01, 0.02]))
    optim.Adam([p], lr=zero.tensor(0.01), foreach=True, capturable=True)   # accepted
    plain = optim.AdamW([p], lr=zero.tensor([0.01]))   # a plain step reads a tensor lr on the host
    p.grad = zero.ones(3)
    plain.step()
    np.testing.assert_allclose(p.detach().numpy(), np.full(3, 1 - float(np.float32(0.01)) * (1 + 0.01)), rtol=1e-6)


# -- no host reads ------------------------------------------------------------------------------


class NoHostReads:
    """A backend that fails any read of the device's values by the host."""

    def __init__(self, backend):
        self._backend = backend

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def to_numpy(self, array):
        raise AssertionError("the host read a value from the device during a capturable step")


@pytest.mark.parametrize("name,options", [("AdamW", {}), ("AdamW", {"eps_inside_sqrt": True, "maximize": True}),
                                          ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
                                          ("Adam", {"decoupled_weight_decay": True, "weight_decay": 0.1})],
                         ids=["AdamW", "AdamW-book", "Adam-amsgrad", "Adam-decoupled"])
@pytest.mark.parametrize("lr_kind", ["float", "tensor"])
def test_a_capturable_step_reads_nothing_from_the_device(cpu_played_cuda, monkeypatch, name, options, lr_kind):
    weights, grads = problem(3)
    params = zero_params(weights, cpu_played_cuda)
    optimizer = getattr(optim, name)(params, lr=lr_for(lr_kind, cpu_played_cuda), capturable=True, **options)
    monkeypatch.setattr(cpu_played_cuda, "_backend", NoHostReads(cpu_backend))
    for step_grads in grads:   # the first step makes the state too
        for p, g in zip(params, step_grads):
            p.grad = zero.tensor(g.copy()).to(cpu_played_cuda)
        optimizer.step()
    counter = optimizer.state[params[0]]["step"]
    with pytest.raises(AssertionError, match="read a value"):   # the trap works
        float(counter)
    monkeypatch.undo()
    assert float(counter) == 3.0 and counter.device == cpu_played_cuda


def test_the_plain_step_would_read_a_tensor_lr(cpu_played_cuda, monkeypatch):
    """The trap above catches a host read in an optimizer step: the plain AdamW reads a tensor lr."""
    p = nn.Parameter(zero.ones(3, device=cpu_played_cuda))
    optimizer = optim.AdamW([p], lr=zero.tensor(0.01, device=cpu_played_cuda))
    p.grad = zero.ones(3, device=cpu_played_cuda)
    monkeypatch.setattr(cpu_played_cuda, "_backend", NoHostReads(cpu_backend))
    with pytest.raises(AssertionError, match="read a value"):
        optimizer.step()


# -- replays ------------------------------------------------------------------------------------


class GraphedStep:
    """``optimizer.step()`` captured as a CUDA graph (``zero.cuda.graph``; here "cuda" played by
    the CPU, whose capture records the kernel calls) at the first call, replayed at each call."""

    def __init__(self, optimizer):
        self.optimizer, self.graph = optimizer, None

    def __call__(self) -> None:
        if self.graph is None:
            self.graph = zero.cuda.CUDAGraph()
            with zero.cuda.graph(self.graph):   # (recorded, not run: the replay below runs it)
                self.optimizer.step()
        self.graph.replay()


def _run(name, options, device, grads, lrs, replay: bool):
    """A warm-up step, then one step per entry of grads[1:]: eager, or the first recorded
    and the rest replays of it. Gradients go into the same tensors (the graph's static
    inputs); before step i the tensor lr is filled with lrs[i]."""
    weights, _ = problem(1)
    params = zero_params(weights, device)
    lr = zero.tensor(lrs[0], device=device)
    optimizer = getattr(optim, name)(params, lr=lr, capturable=True, **options)
    set_grads(params, grads[0], device)
    optimizer.step()
    step = GraphedStep(optimizer) if replay else optimizer.step
    for i, step_grads in enumerate(grads[1:], start=1):
        for p, g in zip(params, step_grads):
            p.grad.copy_(zero.tensor(g.copy(), device=device))
        lr.fill_(lrs[i])
        step()
    return values(params), [float(optimizer.state[p]["step"]) for p in params]


@pytest.mark.parametrize("name,options", [("AdamW", {}), ("AdamW", {"eps_inside_sqrt": True, "weight_decay": 0.1}),
                                          ("Adam", {}), ("Adam", {"amsgrad": True, "maximize": True})],
                         ids=["AdamW", "AdamW-book", "Adam", "Adam-amsgrad-maximize"])
def test_replaying_a_recorded_step_is_stepping(cpu_played_cuda, name, options):
    """Six replays of a captured step are six eager steps, to the bit: the counts advance
    on the device, and the lr filled in between replays is read by each."""
    grads = problem(7, seed=1)[1]
    lrs = [0.01, 0.01, 0.005, 0.005, 0.02, 0.001, 0.001]
    replayed, replayed_counts = _run(name, options, cpu_played_cuda, grads, lrs, replay=True)
    eager, eager_counts = _run(name, options, cpu_played_cuda, grads, lrs, replay=False)
    assert replayed_counts == eager_counts == [7.0, 7.0, 7.0]
    assert_same(replayed, eager, exact=True)
    fixed, _ = _run(name, options, cpu_played_cuda, grads, [0.01] * 7, replay=True)
    assert not all(np.array_equal(a, b) for a, b in zip(fixed, replayed))   # the lr did change the updates


def test_a_schedule_between_replays_is_a_schedule_between_steps(cpu_played_cuda):
    """The lead's loop: a scheduler stepped between replays writes the tensor lr in place."""
    def run(replay: bool):
        weights, grads = problem(6, seed=2)
        params = zero_params(weights, cpu_played_cuda)
        optimizer = optim.AdamW(params, lr=zero.tensor(0.01, device=cpu_played_cuda), capturable=True)
        schedule = lr_scheduler.CosineAnnealingLR(optimizer, 5)
        set_grads(params, grads[0], cpu_played_cuda)
        optimizer.step()   # the warm-up, outside the graph
        schedule.step()
        step = GraphedStep(optimizer) if replay else optimizer.step
        for step_grads in grads[1:]:
            for p, g in zip(params, step_grads):
                p.grad.copy_(zero.tensor(g.copy(), device=cpu_played_cuda))
            step()
            schedule.step()
        return values(params)

    assert_same(run(replay=True), run(replay=False), exact=True)


# -- checkpoints --------------------------------------------------------------------------------


def _steps(optimizer, params, grads, device):
    for step_grads in grads:
        set_grads(params, step_grads, device)
        optimizer.step()


@pytest.mark.parametrize("name", ["AdamW", "Adam"])
@pytest.mark.parametrize("saved_capturable,loading_capturable", [(True, True), (False, True), (True, False)],
                         ids=["capturable", "plain-into-capturable", "capturable-into-plain"])
def test_checkpoints_place_the_step_as_pytorch_does(device, name, saved_capturable, loading_capturable):
    """The checkpoint's group decides (PyTorch's rule): its ``capturable`` replaces the
    optimizer's, and its steps go to the parameter's device when it is capturable, to the
    CPU otherwise. The resumed run equals the uninterrupted one."""
    weights, grads = problem(5)
    whole = zero_params(weights, device)
    whole_optimizer = getattr(optim, name)(whole, lr=0.01, capturable=saved_capturable)
    _steps(whole_optimizer, whole, grads, device)

    first = zero_params(weights, device)
    first_optimizer = getattr(optim, name)(first, lr=0.01, capturable=saved_capturable)
    _steps(first_optimizer, first, grads[:3], device)
    checkpoint = first_optimizer.state_dict()
    second = [nn.Parameter(p.detach().clone()) for p in first]
    second_optimizer = getattr(optim, name)(second, lr=0.01, capturable=loading_capturable)
    second_optimizer.load_state_dict(checkpoint)
    assert second_optimizer.param_groups[0]["capturable"] is saved_capturable
    for p in second:
        count = second_optimizer.state[p]["step"]
        assert count.device == (device if saved_capturable else zero.device("cpu"))
        assert count.dtype is zero.float32 and float(count) == 3.0
    _steps(second_optimizer, second, grads[3:], device)
    assert_same(values(second), values(whole), computed_on_cpu(device))


def test_a_group_made_capturable_later_moves_its_counts_to_the_device(device):
    weights, grads = problem(4)
    plain, switched = zero_params(weights, device), zero_params(weights, device)
    plain_optimizer, switched_optimizer = optim.AdamW(plain, lr=0.01), optim.AdamW(switched, lr=0.01)
    _steps(plain_optimizer, plain, grads, device)
    _steps(switched_optimizer, switched, grads[:2], device)
    switched_optimizer.param_groups[0]["capturable"] = True
    _steps(switched_optimizer, switched, grads[2:], device)
    assert all(switched_optimizer.state[p]["step"].device == device for p in switched)
    assert_same(values(switched), values(plain), computed_on_cpu(device))


def test_a_pytorch_capturable_checkpoint_loads(device):
    """PyTorch's checkpoint of a capturable AdamW (its steps as CPU tensors here: PyTorch's
    CPU cannot step capturably) continues in Zero's capturable AdamW."""
    weights, grads = problem(5)
    tp = [torch.nn.Parameter(torch.tensor(w.copy())) for w in weights]
    to = torch.optim.AdamW(tp, lr=0.01)
    for step_grads in grads[:3]:
        for p, g in zip(tp, step_grads):
            p.grad = torch.tensor(g.copy())
        to.step()
    saved = to.state_dict()
    saved["param_groups"][0]["capturable"] = True
    checkpoint = {"state": {i: {k: zero.tensor(v.numpy()) for k, v in s.items()} for i, s in saved["state"].items()},
                  "param_groups": saved["param_groups"]}
    zp = [nn.Parameter(zero.tensor(p.detach().numpy().copy(), device=device)) for p in tp]
    zo = optim.AdamW(zp, lr=0.01)
    zo.load_state_dict(checkpoint)
    assert all(zo.state[p]["step"].device == device for p in zp)
    for step_grads in grads[3:]:
        set_grads(zp, step_grads, device)
        for p, g in zip(tp, step_grads):
            p.grad = torch.tensor(g.copy())
        zo.step()
        to.step()
    assert_same(values(zp), [p.detach().numpy() for p in tp], exact=False, rtol=2e-6)


def test_sgd_takes_a_tensor_lr_as_pytorch_s_does():
    """SGD has no capturable step (PyTorch's neither); a tensor lr is read by the host, and a
    scheduler writes it in place."""
    weights, grads = problem(4)
    zp = zero_params(weights, "cpu")
    tp = [torch.nn.Parameter(torch.tensor(w.copy())) for w in weights]
    zlr, tlr = zero.tensor(0.1), torch.tensor(0.1)
    zo, to = optim.SGD(zp, lr=zlr, momentum=0.9), torch.optim.SGD(tp, lr=tlr, momentum=0.9)
    zs, ts = lr_scheduler.StepLR(zo, 1, 0.5), torch.optim.lr_scheduler.StepLR(to, 1, 0.5)
    for _ in steps_of_both(zp, tp, zo, to, zs, ts, grads, "cpu"):
        pass
    assert_same(values(zp), [p.detach().numpy() for p in tp], exact=False)
    assert zo.param_groups[0]["lr"] is zlr and float(zlr) == float(tlr)
    with pytest.raises(ValueError, match="holds one number"):
        optim.SGD(zp, lr=zero.tensor([0.1, 0.2]))


# -- every scheduler writes a tensor lr in place ------------------------------------------------

SCHEDULES = {
    "StepLR": lambda m, o: m.StepLR(o, 2, 0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, [1, 3], 0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, 0.9),
    "LinearLR": lambda m, o: m.LinearLR(o, 0.25, 1.0, 3),
    "ConstantLR": lambda m, o: m.ConstantLR(o, 0.5, 2),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda epoch: 1 / (epoch + 1)),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda epoch: 0.9),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, 4, 2.0),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, 3, 1e-4),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, 2, 2),
    "CyclicLR": lambda m, o: m.CyclicLR(o, 1e-3, 1e-2, 2, cycle_momentum=False),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, 0.05, 8, cycle_momentum=False),
    "SequentialLR": lambda m, o: m.SequentialLR(o, [m.ConstantLR(o, 0.1, 2), m.ExponentialLR(o, 0.8)], [2]),
    "ReduceLROnPlateau": lambda m, o: m.ReduceLROnPlateau(o, patience=0, factor=0.5),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_every_schedule_writes_a_tensor_lr_in_place(name):
    """PyTorch's rule: a group's tensor lr keeps its identity (``fill_``), and
    ``get_last_lr()`` gives copies of it, with PyTorch's values."""
    zlr, tlr = zero.tensor(0.01), torch.tensor(0.01)
    zo = optim.AdamW([nn.Parameter(zero.ones(2))], lr=zlr, capturable=True)
    to = torch.optim.AdamW([torch.nn.Parameter(torch.ones(2))], lr=tlr)
    zs, ts = SCHEDULES[name](lr_scheduler, zo), SCHEDULES[name](torch.optim.lr_scheduler, to)
    for step in range(7):
        zo.step()   # (no gradients: no update, but the order PyTorch asks for)
        to.step()
        if name == "ReduceLROnPlateau":
            zs.step(1.0)
            ts.step(1.0)
        else:
            zs.step()
            ts.step()
        assert zo.param_groups[0]["lr"] is zlr
        np.testing.assert_allclose(float(zlr), float(tlr), rtol=1e-6, err_msg=f"step {step}")
        got, want = zs.get_last_lr(), ts.get_last_lr()
        assert [isinstance(v, zero.Tensor) for v in got] == [isinstance(v, torch.Tensor) for v in want]
        assert got[0] is not zlr


def test_the_book_s_schedule_writes_a_tensor_lr_in_place():
    """WarmupCosineLR (Zero's own, the GPT job's) gives a tensor lr the float lr's values
    (within float32's rounding: a tensor base lr is scaled by tensor ops, as in PyTorch)."""
    lr = zero.tensor(0.01)
    with_tensor = optim.AdamW([nn.Parameter(zero.ones(2))], lr=lr, capturable=True)
    with_float = optim.AdamW([nn.Parameter(zero.ones(2))], lr=FLOAT32_LR)
    schedules = [lr_scheduler.WarmupCosineLR(o, 2, 6, min_lr=1e-4) for o in (with_tensor, with_float)]
    for _ in range(8):
        for optimizer, schedule in zip((with_tensor, with_float), schedules):
            optimizer.step()
            schedule.step()
        assert with_tensor.param_groups[0]["lr"] is lr
        np.testing.assert_allclose(float(lr), with_float.param_groups[0]["lr"], rtol=2e-7)

