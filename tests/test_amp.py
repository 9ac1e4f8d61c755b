"""zero.amp.GradScaler: dynamic loss scaling, in float32 on the CPU (and against PyTorch's when installed)."""
import math
import warnings

import numpy as np
import pytest

import zero
from zero import nn, optim
from zero.amp import GradScaler

INF, NAN = float("inf"), float("nan")


def model_and_optimizer(cls=optim.SGD, **options):
    zero.manual_seed(0)
    model = nn.Linear(3, 2)
    return model, cls(model.parameters(), **({"lr": 0.1} | options))


X = zero.tensor(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))


def loss_of(model):
    return (model(X) ** 2).mean()


def weights(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def poison(model, value):
    """Put ``value`` (inf or nan) into one gradient element, as an overflowing backward would."""
    grad = next(iter(model.parameters())).grad
    grad[0, 0] = value


def test_scaled_gradients_unscale_to_the_true_ones():
    model, opt = model_and_optimizer()
    loss_of(model).backward()
    true = [p.grad.numpy().copy() for p in model.parameters()]
    opt.zero_grad()
    scaler = GradScaler("cpu", init_scale=1024.0)
    scaled = scaler.scale(loss_of(model))
    assert scaled.item() == pytest.approx(1024.0 * loss_of(model).item(), rel=1e-6)
    scaled.backward()
    for p, g in zip(model.parameters(), true):
        np.testing.assert_allclose(p.grad.numpy(), 1024.0 * g, rtol=1e-6)
    scaler.unscale_(opt)
    for p, g in zip(model.parameters(), true):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6)


@pytest.mark.parametrize("bad", [INF, -INF, NAN])
def test_a_non_finite_gradient_skips_the_step_and_backs_off(bad):
    model, opt = model_and_optimizer(optim.Adam)
    scaler = GradScaler("cpu", init_scale=2.0 ** 10, backoff_factor=0.25)
    scaler.scale(loss_of(model)).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler._get_growth_tracker() == 1
    before, state_before = weights(model), opt.state_dict()["state"][0]["step"].item()

    opt.zero_grad()
    scaler.scale(loss_of(model)).backward()
    poison(model, bad)
    assert scaler.step(opt) is None
    for got, want in zip(weights(model), before):
        np.testing.assert_array_equal(got, want)  # not stepped ...
    assert opt.state_dict()["state"][0]["step"].item() == state_before  # ... not even counted
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 10 * 0.25 and scaler._get_growth_tracker() == 0

    opt.zero_grad()
    scaler.scale(loss_of(model)).backward()
    scaler.step(opt)  # finite again: steps
    assert any(not np.array_equal(got, want) for got, want in zip(weights(model), before))


def test_the_scale_grows_after_growth_interval_clean_steps():
    model, opt = model_and_optimizer()
    scaler = GradScaler("cpu", init_scale=8.0, growth_factor=4.0, growth_interval=3)
    scales = []
    for _ in range(7):
        opt.zero_grad()
        scaler.scale(loss_of(model)).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == [8.0, 8.0, 32.0, 32.0, 32.0, 128.0, 128.0]


def test_growth_stops_short_of_infinity():
    model, opt = model_and_optimizer()
    top = float(np.finfo(np.float32).max)
    scaler = GradScaler("cpu", init_scale=2.0 ** 127, growth_interval=1)
    scaler.scale(zero.tensor(1.0, requires_grad=True))
    next(iter(model.parameters())).grad = zero.zeros(2, 3)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 127 < top


def test_enabled_false_is_an_exact_pass_through():
    model, opt = model_and_optimizer()
    scaler = GradScaler("cpu", enabled=False)
    loss = loss_of(model)
    assert scaler.scale(loss) is loss
    loss.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    scaler.unscale_(opt)
    for p, g in zip(model.parameters(), grads):
        np.testing.assert_array_equal(p.grad.numpy(), g)
    poison(model, INF)  # not even checked: it steps (into inf), as optimizer.step() would
    assert scaler.step(opt) is None
    assert not np.isfinite(next(iter(model.parameters())).detach().numpy()).all()
    scaler.update()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()
    scaler.load_state_dict({})


def test_step_returns_what_the_optimizer_returns():
    model, opt = model_and_optimizer()
    scaler = GradScaler("cpu")
    scaler.scale(loss_of(model)).backward()
    opt.step = lambda *args, **kwargs: ("stepped", args, kwargs)
    assert scaler.step(opt, 1, key=2) == ("stepped", (1,), {"key": 2})
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        GradScaler("cpu").step(opt, closure=lambda: 0)


def test_the_iteration_order_is_enforced():
    model, opt = model_and_optimizer()
    scaler = GradScaler("cpu")
    with pytest.raises(RuntimeError, match="did not use scaler.scale"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="did not use scaler.scale"):
        scaler.update()
    scaler.scale(loss_of(model)).backward()
    with pytest.raises(RuntimeError, match="No inf checks were recorded prior to update"):
        scaler.update()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)  # (does not unscale a second time)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    scaler.scale(loss_of(model)).backward()
    scaler.step(opt)  # a new iteration


def test_unscale_before_clipping_then_step_unscales_once():
    model, opt = model_and_optimizer()
    loss_of(model).backward()
    true = weights(model)
    reference = [w - 0.1 * p.grad.numpy() for w, p in zip(true, model.parameters())]
    opt.zero_grad()
    scaler = GradScaler("cpu", init_scale=256.0)
    scaler.scale(loss_of(model)).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1e9)  # (sees true gradients; clips nothing)
    scaler.step(opt)
    for got, want in zip(weights(model), reference):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_overflow_is_found_per_device_with_one_read_each(second_device, monkeypatch):
    here, there = nn.Linear(3, 2), nn.Linear(3, 2).to(second_device)
    opt = optim.SGD(list(here.parameters()) + list(there.parameters()), lr=0.1)
    scaler = GradScaler("cpu")
    scaler.scale(loss_of(here) + loss_of(there.cpu()) * 0).backward()
    for p in there.parameters():
        p.grad = zero.ones(*p.shape, device=second_device)
    list(there.parameters())[1].grad[0] = INF
    before = weights(here)
    reads = []  # values read back to the host (float(t) reads through item())
    real_item = zero.Tensor.item
    monkeypatch.setattr(zero.Tensor, "item", lambda t: reads.append(t.device) or real_item(t))
    scaler.step(opt)
    assert sorted(map(str, reads)) == ["cpu", str(second_device)]  # one per device, none per parameter
    found = scaler._per_optimizer_states[id(opt)]["found_inf_per_device"]
    assert {str(d) for d in found} == {"cpu", str(second_device)}
    assert found[second_device].item() == 1.0 and found[zero.device("cpu")].item() == 0.0
    for got, want in zip(weights(here), before):
        np.testing.assert_array_equal(got, want)  # the overflow on one device skips the whole step


def test_float16_gradients_are_refused():
    p = nn.Parameter(zero.ones(2, dtype=zero.float16))
    opt = optim.SGD([p])
    scaler = GradScaler("cpu")
    scaler.scale(zero.tensor(1.0))
    p.grad = zero.ones(2, dtype=zero.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.unscale_(opt)


def test_scale_keeps_containers():
    scaler = GradScaler("cpu", init_scale=2.0)
    a, b = zero.tensor(1.0), zero.tensor(3.0)
    pair = scaler.scale((a, [b]))
    assert isinstance(pair, tuple) and isinstance(pair[1], list) and pair[1][0].item() == 6.0
    assert [t.item() for t in scaler.scale(t for t in (a, b))] == [2.0, 6.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor"):
        scaler.scale(1.0)


def test_state_dict_round_trips_and_an_empty_one_is_refused(tmp_path):
    model, opt = model_and_optimizer()
    scaler = GradScaler("cpu", init_scale=64.0, growth_interval=5)
    for _ in range(3):
        opt.zero_grad()
        scaler.scale(loss_of(model)).backward()
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 64.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 5,
                     "_growth_tracker": 3}
    zero.save(state, tmp_path / "s.safetensors")
    restored = GradScaler("cpu")
    restored.load_state_dict(zero.load(tmp_path / "s.safetensors"))
    assert restored.state_dict() == state
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        restored.load_state_dict({})
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff factor must be < 1.0"):
        GradScaler("cpu", backoff_factor=1.0)


def test_update_sets_a_new_scale():
    scaler = GradScaler("cpu")
    scaler.scale(zero.tensor(1.0))
    scaler.update(0.1)
    assert scaler.get_scale() == float(np.float32(0.1))
    scaler.update(zero.tensor([8.0]))
    assert scaler.get_scale() == 8.0
    with pytest.raises(ValueError, match="1-element float32 tensor"):
        scaler.update(zero.tensor([1.0, 2.0]))


@pytest.mark.skipif(zero.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_a_cuda_scaler_without_a_gpu_disables_itself_as_pytorchs():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = GradScaler()
    assert not scaler.is_enabled()
    from zero.cuda.amp import GradScaler as CudaGradScaler

    assert CudaGradScaler is zero.cuda.amp.GradScaler
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = zero.cuda.amp.GradScaler(init_scale=8.0)
    assert {w.category for w in caught} == {FutureWarning, UserWarning} and not old.is_enabled()


def test_the_same_iterations_as_pytorchs_grad_scaler():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w0 = rng.normal(size=(4, 3)).astype(np.float32)
    grads = [rng.normal(size=(4, 3)).astype(np.float32) for _ in range(12)]
    for i in (2, 3, 8):
        grads[i][1, 2] = [INF, NAN, -INF][(2, 3, 8).index(i)]
    runs = []
    for lib in (zero, torch):
        p = (nn.Parameter if lib is zero else torch.nn.Parameter)(lib.tensor(w0.copy()))
        opt = lib.optim.Adam([p], lr=0.01)
        scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_factor=2.0, backoff_factor=0.5,
                                    growth_interval=3)
        scales, trackers = [], []
        for g in grads:
            opt.zero_grad()
            (scaler.scale((p * lib.tensor(g)).sum())).backward()  # gradient = scale · g
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            trackers.append(scaler._get_growth_tracker())
        runs.append((p.detach().numpy(), scales, trackers, scaler.state_dict()))
    (zw, zs, zt, zd), (tw, ts, tt, td) = runs
    assert zs == ts and zt == tt and zd == td
    np.testing.assert_allclose(zw, tw, rtol=1e-6)
    assert math.isfinite(zw.sum())
