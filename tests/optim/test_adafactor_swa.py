"""Adafactor (and Muon) against PyTorch's: the same parameters after 7 steps from the same start, for
each configuration (matrix, 3-d and vector parameters: the factored and unfactored second moments);
swa_utils: AveragedModel (default running mean, avg_fn, multi_avg_fn SWA/EMA, use_buffers), SWALR's
learning rates and update_bn's statistics equal to PyTorch's on a small model."""
import numpy as np
import pytest

import zero
from zero import optim
from zero.optim import swa_utils

torch = pytest.importorskip("torch")
import torch.optim.swa_utils as tswa

STEPS = 7


def data(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=(2, 3, 4)), rng.normal(size=())]


def run(lib, name, options, dtype, steps=STEPS, arrays=None):
    """Parameters of shapes (3, 4), (3,), (2, 3, 4) and () fitted by ``steps`` steps of a quartic loss."""
    arrays = data() if arrays is None else arrays
    params = [lib.nn.Parameter(lib.tensor(a, dtype=dtype)) for a in arrays]
    optimizer = getattr(lib.optim, name)(params, **options)
    for step in range(steps):
        optimizer.zero_grad()
        w, b, t, s = params
        loss = ((w * w).sum(dim=1) - b).pow(2).sum() + (t - 0.5 * step).pow(2).mean() * 3 + (s - 1) ** 2
        loss.backward()
        optimizer.step()
    return [p.detach().numpy() for p in params], optimizer


ADAFACTOR = [
    {},
    {"lr": 0.05, "beta2_decay": -0.5, "d": 1.5},
    {"lr": 0.05, "eps": (1e-6, 1e-2), "weight_decay": 0.1},
    {"lr": 0.5, "maximize": True, "foreach": False},
    {"lr": 0.02, "eps": (None, 0.0), "weight_decay": 0.05, "beta2_decay": 0.0},
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", ADAFACTOR, ids=[str(i) for i in range(len(ADAFACTOR))])
def test_adafactor_equals_pytorch(options, dtype):
    ours, optimizer = run(zero, "Adafactor", options, getattr(zero, dtype))
    theirs, reference = run(torch, "Adafactor", options, getattr(torch, dtype))
    tolerance = 1e-12 if dtype == "float64" else 2e-6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)
    assert not np.allclose(ours[0], data()[0])      # (it moved)
    ours_state = optimizer.state_dict()["state"]
    theirs_state = reference.state_dict()["state"]
    for i in range(4):
        assert sorted(ours_state[i]) == sorted(theirs_state[i])
        for key, value in theirs_state[i].items():
            np.testing.assert_allclose(ours_state[i][key].numpy(), value.numpy(), rtol=1e-5, atol=1e-12)
    assert optimizer.param_groups[0]["eps"] == reference.param_groups[0]["eps"]


def test_adafactor_argument_errors_like_pytorch():
    p = [zero.nn.Parameter(zero.zeros(2))]
    tp = [torch.nn.Parameter(torch.zeros(2))]
    for bad in ({"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)}, {"eps": (None, -1.0)}, {"d": 0.5},
                {"weight_decay": -0.1}):
        with pytest.raises(ValueError) as theirs:
            torch.optim.Adafactor(tp, **bad)
        with pytest.raises(ValueError) as ours:
            optim.Adafactor(p, **bad)
        assert str(ours.value) == str(theirs.value)


def test_muon_equals_pytorch():
    rng = np.random.default_rng(1)
    start = [rng.normal(size=(4, 6)), rng.normal(size=(5, 3))]
    target = rng.normal(size=(4, 6))
    for options in ({}, {"lr": 0.02, "nesterov": False, "weight_decay": 0.0, "adjust_lr_fn": "match_rms_adamw"},
                    {"lr": 0.05, "momentum": 0.5, "ns_steps": 3, "adjust_lr_fn": "original"}):
        results = []
        for lib in (zero, torch):
            params = [lib.nn.Parameter(lib.tensor(a, dtype=lib.float32)) for a in start]
            optimizer = lib.optim.Muon(params, **options)
            goal = lib.tensor(target, dtype=lib.float32)
            for _ in range(STEPS):
                optimizer.zero_grad()
                loss = ((params[0] - goal) ** 2).sum() + (params[1] ** 3).sum()
                loss.backward()
                optimizer.step()
            results.append([p.detach().numpy() for p in params])
        for a, b, s in zip(*results, start):
            # the Newton-Schulz iteration runs in bfloat16 (as PyTorch's), rounded where PyTorch's is
            # (measured: at most 2e-6 apart, on moves of 6e-3 to 0.3)
            np.testing.assert_allclose(a, b, atol=1e-5)
            assert not np.allclose(a, s)


def test_muon_errors_like_pytorch():
    for lib in (zero, torch):
        with pytest.raises(ValueError, match="only supports 2D parameters"):
            lib.optim.Muon([lib.nn.Parameter(lib.zeros(3))])
        with pytest.raises(ValueError, match="not supported"):
            lib.optim.Muon([lib.nn.Parameter(lib.zeros(3, 3))], adjust_lr_fn="other")
        with pytest.raises(ValueError, match="Learning rate"):
            lib.optim.Muon([lib.nn.Parameter(lib.zeros(3, 3))], lr=-1.0)


# -- swa_utils -----------------------------------------------------------------------------------------------

def small_model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def copy_weights(source, target):
    """The torch model's weights into the Zero one (same parameter names)."""
    target.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in source.state_dict().items()})


def perturbed(lib, model, scale):
    with lib.no_grad():
        for p in model.parameters():
            p.mul_(scale).add_(0.1)
        for b in model.buffers():
            if b.is_floating_point():
                b.add_(scale)
            else:
                b.add_(3)


def averaged_states(lib, averaged_model, model, updates=4):
    for i in range(updates):
        perturbed(lib, model, 0.9 + 0.05 * i)
        averaged_model.update_parameters(model)
    return {k: v.detach().numpy() for k, v in averaged_model.state_dict().items()}


AVERAGES = {
    "default": lambda sw: {},
    "avg_fn_ema": lambda sw: {"avg_fn": sw.get_ema_avg_fn(0.8)},
    "avg_fn_swa": lambda sw: {"avg_fn": sw.get_swa_avg_fn()},
    "multi_ema": lambda sw: {"multi_avg_fn": sw.get_ema_multi_avg_fn(0.7)},
    "multi_swa": lambda sw: {"multi_avg_fn": sw.get_swa_multi_avg_fn()},
    "ema_buffers": lambda sw: {"multi_avg_fn": sw.get_ema_multi_avg_fn(0.7), "use_buffers": True},
    "default_buffers": lambda sw: {"use_buffers": True},
}


@pytest.mark.parametrize("name", sorted(AVERAGES))
def test_averaged_model_equals_pytorch(name):
    reference = small_model(torch)
    model = small_model(zero)
    copy_weights(reference, model)
    theirs = averaged_states(torch, tswa.AveragedModel(reference, **AVERAGES[name](tswa)), reference)
    ours_model = swa_utils.AveragedModel(model, **AVERAGES[name](swa_utils))
    ours = averaged_states(zero, ours_model, model)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6, atol=1e-6, err_msg=key)
        assert ours[key].dtype == theirs[key].dtype, key
    assert int(ours["n_averaged"]) == 4
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    reference_average = tswa.AveragedModel(reference)
    ours_model.eval()
    np.testing.assert_allclose(ours_model(zero.tensor(x)).detach().numpy(),
                               _torch_forward(reference, theirs, x, reference_average), rtol=1e-5, atol=1e-6)


def _torch_forward(reference, state, x, holder):
    holder.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    holder.eval()
    return holder(torch.tensor(x)).detach().numpy()


def test_averaged_model_errors():
    for lib, sw in ((zero, swa_utils), (torch, tswa)):
        with pytest.raises(AssertionError, match="Only one of"):
            sw.AveragedModel(small_model(lib), avg_fn=sw.get_swa_avg_fn(), multi_avg_fn=sw.get_swa_multi_avg_fn())
        with pytest.raises(ValueError, match="Invalid decay"):
            sw.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay"):
            sw.get_ema_avg_fn(-0.1)


@pytest.mark.parametrize("strategy,epochs", [("cos", 5), ("linear", 3), ("cos", 0), ("linear", 1)])
def test_swalr_learning_rates_equal_pytorch(strategy, epochs):
    rates = []
    for lib, sw in ((zero, swa_utils), (torch, tswa)):
        params = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(1))]
        optimizer = lib.optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.3}], lr=0.1)
        scheduler = sw.SWALR(optimizer, swa_lr=[0.02, 0.05], anneal_epochs=epochs, anneal_strategy=strategy)
        history = [scheduler.get_last_lr()]
        for _ in range(12):
            optimizer.step()
            scheduler.step()
            history.append(scheduler.get_last_lr())
        rates.append(history)
    np.testing.assert_allclose(np.array(rates[0]), np.array(rates[1]), rtol=1e-12)


def test_swalr_errors_like_pytorch():
    for lib, sw in ((zero, swa_utils), (torch, tswa)):
        optimizer = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy"):
            sw.SWALR(optimizer, 0.05, anneal_strategy="step")
        with pytest.raises(ValueError, match="anneal_epochs"):
            sw.SWALR(optimizer, 0.05, anneal_epochs=-1)
        with pytest.raises(ValueError):
            sw.SWALR(optimizer, [0.05, 0.01])


def test_update_bn_equals_pytorch():
    rng = np.random.default_rng(3)
    batches = [rng.normal(size=(6, 3)).astype(np.float32) * (i + 1) for i in range(3)]
    reference = small_model(torch)
    model = small_model(zero)
    copy_weights(reference, model)
    reference.eval()
    model.eval()
    momentum = model[1].momentum
    tswa.update_bn([(torch.tensor(b), 0) for b in batches], reference)
    swa_utils.update_bn([(zero.tensor(b), 0) for b in batches], model)
    theirs = {k: v.numpy() for k, v in reference.state_dict().items()}
    ours = {k: v.numpy() for k, v in model.state_dict().items()}
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6, err_msg=key)
    assert not model.training and model[1].momentum == momentum
    assert int(ours["1.num_batches_tracked"]) == 3
    # a model without BatchNorm: nothing to do, nothing iterated
    swa_utils.update_bn(iter(()), zero.nn.Linear(2, 2))
    # an AveragedModel's BatchNorm, with the device argument
    averaged = swa_utils.AveragedModel(model)
    swa_utils.update_bn([zero.tensor(b) for b in batches], averaged, device="cpu")
    np.testing.assert_allclose(averaged.module[1].running_mean.numpy(), theirs["1.running_mean"], rtol=1e-5,
                               atol=1e-6)


# -- swap_in_optimizer_params_and_state ------------------------------------------------------------------------

def swapped_step(lib):
    """Adam on two parameters for two steps, then one step on copies and a copied state with another lr."""
    import copy

    rng = np.random.default_rng(5)
    start = [rng.normal(size=(2, 3)), rng.normal(size=3)]
    params = [lib.nn.Parameter(lib.tensor(a)) for a in start]
    optimizer = lib.optim.Adam([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.2}], lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        (params[0].sum() ** 2 + (params[1] ** 3).sum()).backward()
        optimizer.step()
    live = [p.detach().clone() for p in params]
    saved = optimizer.state_dict()
    saved = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in saved["state"].items()},
             "param_groups": copy.deepcopy(saved["param_groups"])}
    saved["param_groups"][1]["lr"] = 0.05
    copies = {}
    for name, a in (("w", start[0] * 2), ("b", start[1] - 1)):
        p = lib.nn.Parameter(lib.tensor(a))
        p.grad = lib.tensor(np.full(a.shape, 0.5))
        copies[name] = p
    params_list = optimizer.param_groups[0]["params"]
    with lib.optim.swap_in_optimizer_params_and_state(optimizer, copies, saved):
        assert optimizer.param_groups[1]["lr"] == 0.05 and optimizer.param_groups[0]["params"][0] is copies["w"]
        optimizer.step()
    assert optimizer.param_groups[1]["lr"] == 0.2 and optimizer.param_groups[0]["params"] is params_list
    for p, before in zip(params, live):
        np.testing.assert_array_equal(p.detach().numpy(), before.numpy())   # the live model untouched
    return ([p.detach().numpy() for p in copies.values()], saved["state"][1]["exp_avg"].numpy(),
            float(saved["state"][0]["step"]), optimizer)


def test_swap_in_optimizer_params_and_state_equals_pytorch():
    ours_params, ours_avg, ours_step, optimizer = swapped_step(zero)
    theirs_params, theirs_avg, theirs_step, _ = swapped_step(torch)
    for a, b in zip(ours_params, theirs_params):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ours_avg, theirs_avg, rtol=1e-12)   # the caller's state updated in place
    assert ours_step == theirs_step == 3.0
    assert float(optimizer.state[optimizer.param_groups[0]["params"][0]]["step"]) == 2.0   # live state kept


def test_swap_in_errors_like_pytorch():
    for lib in (zero, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        optimizer = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with lib.optim.swap_in_optimizer_params_and_state(optimizer, {"p": p}, optimizer.state_dict()):
                pass
        p.grad = lib.ones(2)
        optimizer.step()
        good = optimizer.state_dict()
        bad_cases = [
            ("not a dict", "DCP-style"),
            ({"state": [], "param_groups": good["param_groups"]}, "to be a dict mapping"),
            ({"state": {0: 1}, "param_groups": good["param_groups"]}, "entries to be dictionaries"),
            ({"state": good["state"], "param_groups": {}}, "list of param-group"),
            ({"state": good["state"], "param_groups": []}, "different number of parameter groups"),
            ({"state": good["state"], "param_groups": [dict(good["param_groups"][0], params=[])]},
             "different number of params"),
            ({"state": good["state"], "param_groups": [dict(good["param_groups"][0], extra=1)]}, "Keys only in"),
            ({"state": {**good["state"], 7: {}}, "param_groups": good["param_groups"]}, "extra keys"),
        ]
        for bad, message in bad_cases:
            with pytest.raises(RuntimeError, match=message):
                with lib.optim.swap_in_optimizer_params_and_state(optimizer, {"p": p}, bad):
                    pass
        with pytest.raises(RuntimeError, match="ordering"):
            with lib.optim.swap_in_optimizer_params_and_state(optimizer, {}, good):
                pass


@pytest.mark.parametrize("name,options", [("Adafactor", {"lr": 0.05, "weight_decay": 0.1}),
                                          ("Muon", {"lr": 0.02})])
def test_runs_where_the_parameters_are(name, options, second_device):
    """Written with tensor ops, they run on the parameters' device (here "cuda"), with the same result."""
    rng = np.random.default_rng(2)
    start, target = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    results = []
    for device in ("cpu", second_device):
        params = [zero.nn.Parameter(zero.tensor(start, dtype=zero.float32, device=device))]
        goal = zero.tensor(target, dtype=zero.float32, device=device)
        optimizer = getattr(optim, name)(params, **options)
        for _ in range(3):
            optimizer.zero_grad()
            ((params[0] - goal) ** 2).sum().backward()
            optimizer.step()
        assert params[0].device == zero.device(device) if device == "cpu" else params[0].device is device
        results.append(params[0].detach().cpu().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)


def test_averaged_model_on_the_parameters_device(second_device):
    model = zero.nn.Linear(3, 2).to(second_device)
    averaged = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    start = model.weight.detach().cpu().numpy().copy()
    averaged.update_parameters(model)
    with zero.no_grad():
        model.weight.add_(1.0)
    averaged.update_parameters(model)
    assert averaged.module.weight.device is second_device
    np.testing.assert_allclose(averaged.module.weight.detach().cpu().numpy(), start + 0.5, rtol=1e-6)


@pytest.mark.parametrize("name,options", [("Adafactor", {"lr": 0.05, "weight_decay": 0.1}),
                                          ("Muon", {"lr": 0.02})])
def test_pytorch_state_dict_continues_in_zero(name, options):
    """PyTorch's checkpoint (3 steps) loads into Zero's optimizer, and 4 more steps give PyTorch's result."""
    rng = np.random.default_rng(4)
    start, target = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))

    def steps(lib, params, optimizer, n):
        goal = lib.tensor(target, dtype=lib.float32)
        for _ in range(n):
            optimizer.zero_grad()
            ((params[0] - goal) ** 4).sum().backward()
            optimizer.step()

    tparams = [torch.nn.Parameter(torch.tensor(start, dtype=torch.float32))]
    toptimizer = getattr(torch.optim, name)(tparams, **options)
    steps(torch, tparams, toptimizer, 3)
    saved = toptimizer.state_dict()
    zparams = [zero.nn.Parameter(zero.tensor(tparams[0].detach().numpy()))]
    zoptimizer = getattr(optim, name)(zparams, **options)
    zoptimizer.load_state_dict({"state": {k: {n: zero.tensor(v.numpy()) for n, v in s.items()}
                                          for k, s in saved["state"].items()},
                                "param_groups": saved["param_groups"]})
    steps(torch, tparams, toptimizer, 4)
    steps(zero, zparams, zoptimizer, 4)
    np.testing.assert_allclose(zparams[0].detach().numpy(), tparams[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    assert sorted(zoptimizer.state_dict()["state"][0]) == sorted(toptimizer.state_dict()["state"][0])
