"""Optimizer checkpoints: PyTorch's layout, exact resumption, Zero's older layout, and errors."""
import numpy as np
import pytest

import zero
from zero import nn, optim

ALL = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("SGD", {"lr": 0.1}), ("AdamW", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}), ("RMSprop", {"momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr_decay": 0.1}), ("Adadelta", {}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(ALL)]


def make(name, options):
    zero.manual_seed(3)
    model = nn.Linear(3, 2)
    return model, getattr(optim, name)(model.parameters(), **options)


X = zero.tensor(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))


def train(model, opt, n):
    for _ in range(n):
        opt.zero_grad()
        (model(X) ** 2).mean().backward()
        opt.step()


def weights(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("name, options", ALL, ids=IDS)
def test_resuming_through_a_checkpoint_file_is_exact(name, options, tmp_path):
    model, opt = make(name, options)
    train(model, opt, 4)
    uninterrupted = weights(model)

    model, opt = make(name, options)
    train(model, opt, 2)
    zero.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "c.safetensors")
    checkpoint = zero.load(tmp_path / "c.safetensors")
    model, opt = make(name, options)
    model.load_state_dict(checkpoint["model"])
    opt.load_state_dict(checkpoint["optimizer"])
    train(model, opt, 2)
    for got, want in zip(weights(model), uninterrupted):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, options", ALL[:1] + ALL[2:], ids=IDS[:1] + IDS[2:])
def test_loaded_state_is_a_copy_on_the_parameters_device_and_dtype(name, options, second_device):
    model, opt = make(name, options)
    train(model, opt, 1)
    saved = opt.state_dict()
    before = {k: v.numpy().copy() for k, v in saved["state"][0].items()}
    there = nn.Linear(3, 2).to(second_device).double()
    opt2 = getattr(optim, name)(there.parameters(), **options)
    opt2.load_state_dict(saved)
    for p in there.parameters():
        for key, value in opt2.state[p].items():
            if key == "step":
                assert value.device.type == "cpu" and value.dtype is zero.float32
            else:
                assert value.device is second_device and value.dtype is zero.float64, key
    train(model, opt, 1)  # the first optimizer moves on; what was loaded does not
    first = next(iter(there.parameters()))
    for key, value in opt2.state[first].items():
        np.testing.assert_allclose(value.cpu().numpy(), before[key], rtol=1e-7)


def test_sgd_without_momentum_keeps_no_state_as_pytorch():
    model, opt = make("SGD", {"lr": 0.1})
    train(model, opt, 2)
    assert opt.state_dict()["state"] == {}


def test_adagrad_makes_its_state_when_built():
    """As PyTorch's: every parameter has ``step`` and ``sum`` before the first step."""
    model, opt = make("Adagrad", {"initial_accumulator_value": 0.5})
    state = opt.state_dict()["state"]
    assert sorted(state) == [0, 1]
    assert state[0]["step"].item() == 0.0
    np.testing.assert_array_equal(state[0]["sum"].numpy(), np.full((2, 3), 0.5, np.float32))


def zero_01_layout(opt):
    """What Zero's optimizers saved before PyTorch's layout: ``step`` an int, groups with
    ``initial_lr`` and without ``maximize``/``foreach``/... ."""
    current = opt.state_dict()
    state = {i: {k: (int(v.item()) if k == "step" else v) for k, v in s.items()} for i, s in current["state"].items()}
    kept = ("lr", "betas", "eps", "weight_decay", "momentum", "dampening", "nesterov", "params")
    groups = [{k: v for k, v in g.items() if k in kept} | {"initial_lr": g["lr"]} for g in current["param_groups"]]
    return {"state": state, "param_groups": groups}


@pytest.mark.parametrize("name, options", [("AdamW", {"lr": 0.05, "weight_decay": 0.1}),
                                           ("SGD", {"lr": 0.1, "momentum": 0.9})], ids=["AdamW", "SGD"])
def test_zero_checkpoints_of_the_older_layout_still_resume(name, options, tmp_path):
    model, opt = make(name, options)
    train(model, opt, 4)
    uninterrupted = weights(model)

    model, opt = make(name, options)
    train(model, opt, 2)
    zero.save({"model": model.state_dict(), "optimizer": zero_01_layout(opt)}, tmp_path / "old.safetensors")
    checkpoint = zero.load(tmp_path / "old.safetensors")
    assert not isinstance(checkpoint["optimizer"]["state"][0].get("step", 0), zero.Tensor)
    model, opt = make(name, options)
    model.load_state_dict(checkpoint["model"])
    opt.load_state_dict(checkpoint["optimizer"])
    group = opt.param_groups[0]
    assert group["maximize"] is False and group["initial_lr"] == options["lr"]  # filled in / kept
    if name == "AdamW":
        step = opt.state[next(iter(model.parameters()))]["step"]
        assert step.dtype is zero.float32 and step.shape == () and step.item() == 2
    train(model, opt, 2)
    for got, want in zip(weights(model), uninterrupted):
        np.testing.assert_array_equal(got, want)


def test_mismatched_checkpoints_are_refused():
    model, opt = make("Adam", {})
    train(model, opt, 1)
    saved = opt.state_dict()
    other = optim.Adam([nn.Parameter(zero.ones(2, 3))])
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(saved)
    two_groups = optim.Adam([{"params": [nn.Parameter(zero.ones(2, 3))]}, {"params": [nn.Parameter(zero.ones(2))]}])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two_groups.load_state_dict({"state": {}, "param_groups": saved["param_groups"] * 3})
    swapped = nn.Linear(2, 3)  # same count, other shapes
    with pytest.raises(ValueError, match="'exp_avg' of parameter 0 has shape"):
        optim.Adam(swapped.parameters()).load_state_dict(saved)


def test_loaded_hyper_parameters_replace_the_optimizers():
    model, opt = make("Adam", {"lr": 0.5, "betas": (0.5, 0.6)})
    fresh = optim.Adam(nn.Linear(3, 2).parameters())
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["lr"] == 0.5 and fresh.param_groups[0]["betas"] == (0.5, 0.6)
    assert fresh.param_groups[0]["params"][0] is not opt.param_groups[0]["params"][0]


def test_state_not_tied_to_a_parameter_is_kept():
    model, opt = make("SGD", {"lr": 0.1, "momentum": 0.9})
    train(model, opt, 1)
    saved = opt.state_dict()
    saved["state"]["note"] = {"anything": 1}
    opt.load_state_dict(saved)
    assert opt.state["note"] == {"anything": 1}
