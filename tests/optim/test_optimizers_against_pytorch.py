"""Optimizers against PyTorch's (an optional oracle: skipped without torch).

The same optimizer in both, from the same weights and gradients: the weights after
each step agree within 1e-6 relative in float32 (1e-12 in float64); the state dicts
have the same keys, and each library's state dict, carried over, continues the
other's run.
"""
import numpy as np
import pytest

import zero
from zero import nn, optim

torch = pytest.importorskip("torch")

SHAPES = [(4, 3), (5,), (2, 2, 2)]
STEPS = 5

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("AdamW", {"lr": 1e-3}),   # PyTorch's defaults, ε = 1e-8 outside the root
    ("AdamW", {"lr": 0.01, "eps": 1e-3, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.9, "centered": True, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.001, "centered": True, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1, "weight_decay": 0.1}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


def problem(dtype, steps=STEPS, seed=0):
    """Weights away from zero (so relative differences mean something) and gradients."""
    rng = np.random.default_rng(seed)
    weights = [(rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 1.5, s)).astype(dtype) for s in SHAPES]
    grads = [[rng.normal(0, 1, s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    return weights, grads


def zero_params(weights):
    return [nn.Parameter(zero.tensor(w.copy())) for w in weights]


def torch_params(weights):
    return [torch.nn.Parameter(torch.tensor(w.copy())) for w in weights]


def steps(optimizer, params, grads, to_tensor):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = to_tensor(g.copy())
        optimizer.step()


def run_both(name, options, dtype, n=STEPS):
    weights, grads = problem(dtype, n)
    zp, tp = zero_params(weights), torch_params(weights)
    zo, to = getattr(optim, name)(zp, **options), getattr(torch.optim, name)(tp, **options)
    steps(zo, zp, grads, zero.tensor)
    steps(to, tp, grads, torch.tensor)
    return zp, tp, zo, to


def max_relative_difference(zero_tensors, torch_tensors) -> float:
    return max(float(np.max(np.abs(z.detach().numpy() - t.detach().numpy()) / np.abs(t.detach().numpy())))
               for z, t in zip(zero_tensors, torch_tensors))


def to_torch(value):
    """A Zero state dict as PyTorch holds one: its tensors as torch tensors."""
    if isinstance(value, zero.Tensor):
        return torch.tensor(value.numpy())
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value


def to_zero(value):
    if isinstance(value, torch.Tensor):
        return zero.tensor(value.numpy())
    if isinstance(value, dict):
        return {k: to_zero(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_zero(v) for v in value)
    return value


@pytest.mark.parametrize("name, options", CASES, ids=IDS)
@pytest.mark.parametrize("dtype, n, tolerance", [(np.float32, STEPS, 1e-6), (np.float32, 50, 1e-5),
                                                 (np.float64, STEPS, 1e-12)],
                         ids=["float32-5", "float32-50", "float64-5"])
def test_weights_agree_with_pytorch(name, options, dtype, n, tolerance):
    """(Measured, float32: at most 5e-7 after 5 steps, 5e-6 after 50 -- rounding only.)"""
    zp, tp, _, _ = run_both(name, options, dtype, n)
    assert max_relative_difference(zp, tp) < tolerance


@pytest.mark.parametrize("name, options", CASES, ids=IDS)
def test_state_dict_has_pytorchs_layout(name, options):
    _, _, zo, to = run_both(name, options, np.float64)
    zs, ts = zo.state_dict(), to.state_dict()
    assert [sorted(g) for g in zs["param_groups"]] == [sorted(g) for g in ts["param_groups"]]
    assert [g["params"] for g in zs["param_groups"]] == [g["params"] for g in ts["param_groups"]]
    for key, value in ts["param_groups"][0].items():
        if key != "params":
            assert zs["param_groups"][0][key] == value, key
    assert sorted(zs["state"]) == sorted(ts["state"])
    for index, torch_state in ts["state"].items():
        zero_state = zs["state"][index]
        assert sorted(zero_state) == sorted(torch_state)
        for key, t in torch_state.items():
            z = zero_state[key]
            if key == "step":  # a 0-d float32 tensor, as PyTorch 2.x keeps it
                assert z.shape == () and z.dtype is zero.float32 and t.dtype == torch.float32
                assert z.item() == t.item() == STEPS
            else:
                np.testing.assert_allclose(z.numpy(), t.numpy(), rtol=1e-10, atol=1e-14, err_msg=key)


@pytest.mark.parametrize("name, options", CASES, ids=IDS)
def test_a_state_dict_continues_the_run_in_the_other_library(name, options):
    """Three steps in one library, its state dict loaded into the other, two more steps there:
    the weights are those of five steps in one go."""
    weights, grads = problem(np.float64, 5)
    whole = torch_params(weights)
    steps(getattr(torch.optim, name)(whole, **options), whole, grads, torch.tensor)

    # Zero, then PyTorch
    zp = zero_params(weights)
    zo = getattr(optim, name)(zp, **options)
    steps(zo, zp, grads[:3], zero.tensor)
    tp = torch_params([p.detach().numpy() for p in zp])
    to = getattr(torch.optim, name)(tp, **options)
    to.load_state_dict(to_torch(zo.state_dict()))
    steps(to, tp, grads[3:], torch.tensor)
    assert max_relative_difference(tp, whole) < 1e-12

    # PyTorch, then Zero
    tp = torch_params(weights)
    to = getattr(torch.optim, name)(tp, **options)
    steps(to, tp, grads[:3], torch.tensor)
    zp = zero_params([p.detach().numpy() for p in tp])
    zo = getattr(optim, name)(zp, **options)
    zo.load_state_dict(to_zero(to.state_dict()))
    steps(zo, zp, grads[3:], zero.tensor)
    assert max_relative_difference(zp, whole) < 1e-12


def test_adam_with_decoupled_decay_is_pytorchs_adamw():
    """PyTorch's AdamW update (ε outside the root), default ε, in Zero: Adam(decoupled_weight_decay=True)."""
    weights, grads = problem(np.float32)
    zp, tp = zero_params(weights), torch_params(weights)
    steps(optim.Adam(zp, lr=1e-3, weight_decay=0.01, decoupled_weight_decay=True), zp, grads, zero.tensor)
    steps(torch.optim.AdamW(tp, lr=1e-3), tp, grads, torch.tensor)
    assert max_relative_difference(zp, tp) < 1e-6


def test_param_groups_and_named_parameters_number_alike():
    weights, _ = problem(np.float32)
    zp, tp = zero_params(weights), torch_params(weights)
    zo = optim.Adam([{"params": zp[:2], "lr": 0.1}, {"params": zp[2:]}], lr=0.01)
    to = torch.optim.Adam([{"params": tp[:2], "lr": 0.1}, {"params": tp[2:]}], lr=0.01)
    assert [g["params"] for g in zo.state_dict()["param_groups"]] == \
        [g["params"] for g in to.state_dict()["param_groups"]] == [[0, 1], [2]]
    model, twin = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    zs = optim.SGD(model.named_parameters(), lr=0.1).state_dict()
    ts = torch.optim.SGD(twin.named_parameters(), lr=0.1).state_dict()
    assert zs["param_groups"][0]["param_names"] == ts["param_groups"][0]["param_names"] == ["weight", "bias"]
