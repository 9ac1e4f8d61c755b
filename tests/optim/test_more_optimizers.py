"""NAdam, RAdam, Adamax, ASGD, Rprop and LBFGS against PyTorch's (the oracle): the same
parameters after 7 steps from the same start on a small least-squares model in float64,
every option that changes the update; the same state-dict layout, and PyTorch's state dict
continuing a Zero run; LBFGS with and without the strong-Wolfe line search on Rosenbrock's
function."""
import numpy as np
import pytest

import zero
from zero import optim

torch = pytest.importorskip("torch")

STEPS = 7

CASES = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.05}),   # ρ_t > 5 from step 6: both branches
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.1, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.02, "t0": 2, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.08)}),
    ("Rprop", {"lr": 0.05, "maximize": True}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


def data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=(6, 4)), rng.normal(size=(6, 3)))


def run(lib, name, options, steps=STEPS, state_dict=None):
    """A linear model y = x Wᵀ + b fitted by ``steps`` steps; returns params and optimizer."""
    w, b, x, y = data()
    params = [lib.nn.Parameter(lib.tensor(w)), lib.nn.Parameter(lib.tensor(b))]
    x, y = lib.tensor(x), lib.tensor(y)
    optimizer = getattr(lib.optim, name)(params, **options)
    if state_dict is not None:
        optimizer.load_state_dict(state_dict)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((x @ params[0].T + params[1] - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return params, optimizer


def numpy(values):
    return [v.detach().numpy() for v in values]


@pytest.mark.parametrize("name,options", CASES, ids=IDS)
def test_seven_steps_equal_pytorch(name, options):
    zp, zo = run(zero, name, options)
    tp, to = run(torch, name, options)
    for z, t in zip(numpy(zp), numpy(tp)):
        np.testing.assert_allclose(z, t, rtol=1e-12, atol=1e-14)
    start = data()[:2]
    assert not np.allclose(numpy(zp)[0], start[0])   # (it moved)
    zs, ts = zo.state_dict(), to.state_dict()
    assert zs["param_groups"] == [{k: v for k, v in g.items()} for g in ts["param_groups"]]
    for i in (0, 1):
        assert list(zs["state"][i]) == list(ts["state"][i])
        for key, value in ts["state"][i].items():
            np.testing.assert_allclose(zs["state"][i][key].numpy(), value.numpy(), rtol=1e-6, atol=1e-12)
            assert zs["state"][i][key].shape == tuple(value.shape)


def to_zero(value):
    if isinstance(value, torch.Tensor):
        return zero.tensor(value.numpy())
    if isinstance(value, dict):
        return {k: to_zero(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_zero(v) for v in value]
    return value


@pytest.mark.parametrize("name,options", CASES[::3], ids=IDS[::3])
def test_pytorch_state_dict_continues(name, options):
    """3 steps in PyTorch, its state dict loaded into Zero, 4 more steps there = 7 in PyTorch
    (from the 3-step parameters)."""
    tp3, to3 = run(torch, name, options, steps=3)
    saved = to_zero(to3.state_dict())
    w, b, x, y = data()
    params = [zero.nn.Parameter(zero.tensor(tp3[0].detach().numpy())),
              zero.nn.Parameter(zero.tensor(tp3[1].detach().numpy()))]
    optimizer = getattr(optim, name)(params, **options)
    optimizer.load_state_dict(saved)
    x, y = zero.tensor(x), zero.tensor(y)
    for _ in range(4):
        optimizer.zero_grad()
        ((x @ params[0].T + params[1] - y) ** 2).mean().backward()
        optimizer.step()
    tp, _ = run(torch, name, options)
    for z, t in zip(numpy(params), numpy(tp)):
        np.testing.assert_allclose(z, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,options,message", [
    ("NAdam", {"lr": -1.0}, "Invalid learning rate"),
    ("NAdam", {"momentum_decay": -1.0}, "momentum_decay"),
    ("RAdam", {"betas": (1.0, 0.9)}, "beta parameter at index 0"),
    ("Adamax", {"eps": -1.0}, "epsilon"),
    ("ASGD", {"weight_decay": -1.0}, "weight_decay"),
    ("Rprop", {"etas": (1.5, 1.2)}, "eta values"),
    ("LBFGS", {"lr": -1.0}, "Invalid learning rate"),
])
def test_bad_arguments_raise_value_error(name, options, message):
    p = [zero.nn.Parameter(zero.ones(2))]
    with pytest.raises(ValueError, match=message):
        getattr(optim, name)(p, **options)
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **options)


def rosenbrock(v):
    return ((1 - v[:-1]) ** 2).sum() + 100 * ((v[1:] - v[:-1] ** 2) ** 2).sum()


def lbfgs_run(lib, options, steps):
    v = lib.nn.Parameter(lib.tensor(np.array([-1.2, 1.0, -0.5, 0.8], dtype=np.float64)))
    optimizer = lib.optim.LBFGS([v], **options)
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = rosenbrock(v)
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(float(optimizer.step(closure).detach()))
    return v.detach().numpy(), losses, optimizer


@pytest.mark.parametrize("options,steps", [
    ({"lr": 0.1, "max_iter": 5}, 3),
    ({"lr": 1, "max_iter": 10, "history_size": 3, "line_search_fn": "strong_wolfe"}, 4),
    ({"max_iter": 7, "max_eval": 9, "line_search_fn": "strong_wolfe"}, 3),
    ({"line_search_fn": "strong_wolfe", "tolerance_grad": 1e-5, "tolerance_change": 1e-6}, 3),
], ids=["fixed-step", "wolfe-history3", "wolfe-max-eval", "wolfe-tolerances"])
def test_lbfgs_equals_pytorch_on_rosenbrock(options, steps):
    zv, zl, zo = lbfgs_run(zero, options, steps)
    tv, tl, to = lbfgs_run(torch, options, steps)
    np.testing.assert_allclose(zv, tv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(zl, tl, rtol=1e-9)
    zs, ts = zo.state_dict()["state"][0], to.state_dict()["state"][0]
    assert zs["func_evals"] == ts["func_evals"] and zs["n_iter"] == ts["n_iter"]
    assert sorted(zs) == sorted(ts)
    assert zl[-1] < zl[0]


def test_lbfgs_strong_wolfe_converges():
    v, losses, _ = lbfgs_run(zero, {"line_search_fn": "strong_wolfe", "max_iter": 100}, 2)
    np.testing.assert_allclose(v, np.ones(4), atol=1e-5)


def test_lbfgs_errors():
    p = zero.nn.Parameter(zero.ones(2))
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [p]}, {"params": [zero.nn.Parameter(zero.ones(1))], "lr": 0.1}])
    optimizer = optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        optimizer.zero_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="strong_wolfe"):
        optimizer.step(closure)


@pytest.mark.parametrize("name,options", CASES[::2] + [("LBFGS", {"line_search_fn": "strong_wolfe"})],
                         ids=IDS[::2] + ["LBFGS"])
def test_runs_where_the_parameters_are(name, options, second_device):
    """Written with tensor ops, they run on the parameters' device (here "cuda")."""
    results = []
    for device in ("cpu", second_device):
        w, b, x, y = data()
        params = [zero.nn.Parameter(zero.tensor(w, device=device)), zero.nn.Parameter(zero.tensor(b, device=device))]
        x, y = zero.tensor(x, device=device), zero.tensor(y, device=device)
        optimizer = getattr(optim, name)(params, **options)

        def closure():
            optimizer.zero_grad()
            loss = ((x @ params[0].T + params[1] - y) ** 2).mean()
            loss.backward()
            return loss

        for _ in range(3):
            optimizer.step(closure)
        assert params[0].device == zero.device(device) if device == "cpu" else params[0].device is device
        results.append([p.detach().cpu().numpy() for p in params])
    for here, there in zip(*results):
        np.testing.assert_allclose(there, here, rtol=1e-14)
