"""zero.utils.checkpoint: equal gradients, replayed dropout masks, less memory, PyTorch's errors."""
import warnings

import numpy as np
import pytest

import zero
from zero import nn
from zero.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def mlp(depth=8, width=32, p=0.0, seed=0):
    zero.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()] + ([nn.Dropout(p)] if p else [])
    return nn.Sequential(*layers)


def grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + ([x.grad.numpy().copy()] if x.grad is not None
                                                                  else [])


def run(model, x, how, seed=7):
    zero.manual_seed(seed)
    model.zero_grad()
    x.grad = None
    if how == "plain":
        y = model(x)
    elif how == "segments":
        y = checkpoint_sequential(model, 4, x, use_reentrant=False)
    else:
        y = checkpoint(model, x, use_reentrant=how == "reentrant")
    (y * y).sum().backward()
    return y.detach().numpy().copy(), grads(model, x)


@pytest.mark.parametrize("how", ["reentrant", "non-reentrant", "segments"])
@pytest.mark.parametrize("p", [0.0, 0.5])
def test_gradients_equal_the_plain_run_with_the_same_dropout_masks(how, p):
    model = mlp(p=p)
    x = zero.randn(5, 32, requires_grad=True)
    y0, g0 = run(model, x, "plain")
    y1, g1 = run(model, x, how)
    np.testing.assert_allclose(y1, y0, rtol=1e-6, atol=1e-6)
    assert len(g1) == len(g0)
    for a, b in zip(g1, g0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_the_forward_keeps_no_activations_and_backward_recomputes():
    calls = []

    def block(x):
        calls.append(zero.is_grad_enabled())
        return (x * 2).tanh()

    x = zero.randn(3, requires_grad=True)
    y = checkpoint(block, x, use_reentrant=False)
    assert calls == [False] and y.requires_grad and y.grad_fn.name == "CheckpointBackward"
    y.sum().backward()
    assert calls == [False, True]
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(2 * x.detach().numpy()) ** 2), rtol=1e-5)


def test_like_pytorch_values_and_gradients_with_several_outputs_and_kwargs():
    w = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    xv = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    results = []
    for lib in (zero, torch):
        weight = lib.tensor(w, requires_grad=True)
        x = lib.tensor(xv, requires_grad=True)

        def f(x, scale=1.0, weight=None):
            h = x @ weight
            return h.tanh() * scale, h.sum(1), 3

        a, b, three = lib.utils.checkpoint.checkpoint(f, x, use_reentrant=False, scale=2.0, weight=weight)
        (a.sum() + (b * b).sum()).backward()
        results.append([a.detach().numpy(), b.detach().numpy(), x.grad.numpy(), weight.grad.numpy(), three])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_plain_data_input_still_trains_the_parameters_without_reentrant():
    model = mlp(depth=2)
    x = zero.randn(4, 32)  # data: no grad
    checkpoint(model, x, use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_reentrant_rules_and_warnings_like_pytorch():
    for lib in (zero, torch):
        cp = lib.utils.checkpoint.checkpoint
        lin = lib.nn.Linear(3, 3)
        x = lib.ones(2, 3)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            cp(lin, x.requires_grad_())
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = cp(lin, lib.ones(2, 3), use_reentrant=True)
        assert not y.requires_grad
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            cp(lin, x, use_reentrant=True, foo=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert cp(lin, lib.ones(2, 3), use_reentrant=False).requires_grad
        with lib.no_grad():
            assert not cp(lin, x, use_reentrant=False).requires_grad


def test_backward_twice_with_retain_graph():
    x = zero.randn(3, requires_grad=True)
    y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy(), rtol=1e-6)


def test_checkpoint_sequential_like_pytorch():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(*[torch.nn.Linear(6, 6) if i % 2 == 0 else torch.nn.ReLU() for i in range(7)])
    ours = nn.Sequential(*[nn.Linear(6, 6) if i % 2 == 0 else nn.ReLU() for i in range(7)])
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    xv = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    for segments in (1, 2, 3):
        out = []
        for lib, model in ((zero, ours), (torch, theirs)):
            model.zero_grad()
            x = lib.tensor(xv, requires_grad=True)
            y = lib.utils.checkpoint.checkpoint_sequential(model, segments, x, use_reentrant=False)
            y.sum().backward()
            out.append([y.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy()])
        for a, b in zip(*out):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for lib, model in ((zero, ours), (torch, theirs)):
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            lib.utils.checkpoint.checkpoint_sequential(model, 2, lib.ones(2, 6), use_reentrant=False, bad=1)


def peak_bytes(model, x, how):
    zero.cpu.empty_cache()
    zero.cpu.reset_peak_memory_stats()
    base = zero.cpu.memory_stats()["live_bytes"]
    if how == "plain":
        y = model(x)
    else:
        y = checkpoint_sequential(model, 8, x, use_reentrant=False)
    y.sum().backward()
    del y
    return zero.cpu.memory_stats()["peak_bytes"] - base


def test_checkpointing_lowers_the_peak_memory_of_a_deep_mlp():
    model = mlp(depth=32, width=64)
    x = zero.randn(512, 64, requires_grad=True)
    plain = peak_bytes(model, x, "plain")
    model.zero_grad()
    saved = peak_bytes(model, x, "checkpointed")
    print(f"peak above the start: plain {plain / 2**20:.2f} MiB, checkpoint_sequential(8 segments) "
          f"{saved / 2**20:.2f} MiB")
    assert saved < 0.5 * plain, (plain, saved)


def test_on_another_device_the_same_gradients_and_masks(second_device):
    model = mlp(depth=3, width=8, p=0.5).to(second_device)
    x = zero.randn(4, 8, device=second_device, requires_grad=True)

    def run_on(how):
        zero.manual_seed(3)
        model.zero_grad()
        x.grad = None
        y = model(x) if how == "plain" else checkpoint(model, x, use_reentrant=False)
        (y * y).sum().backward()
        return [y.detach().cpu().numpy()] + [p.grad.cpu().numpy() for p in model.parameters()] + [x.grad.cpu().numpy()]

    for a, b in zip(run_on("checkpoint"), run_on("plain")):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_nested_checkpoints_like_pytorch():
    xv = np.random.default_rng(3).standard_normal(5)
    results = []
    for lib in (zero, torch):
        cp = lib.utils.checkpoint.checkpoint
        x = lib.tensor(xv, requires_grad=True)

        def inner(t):
            return t.sin() * t

        def outer(t, cp=cp, inner=inner):
            return cp(inner, t.exp(), use_reentrant=False).cos()

        y = cp(outer, x, use_reentrant=False)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)
