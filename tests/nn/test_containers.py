"""ParameterList, ParameterDict, ModuleList's repr, Unflatten, Bilinear, the dropout layers,
and every exported zero.nn class's constructor signature against PyTorch's."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import zero
from zero import nn
from zero.nn import functional as F

torch = pytest.importorskip("torch")


# -- constructor signatures ---------------------------------------------------------------------

# Classes whose signature differs from PyTorch's on purpose (the test accepts these either way;
# remove an entry once the class matches).
KNOWN_DIFFERENCES = {  # PyTorch declares these (*args, **kwargs), its documented arguments in overloads
    name: "PyTorch's signature is (*args, **kwargs) with overloads; Zero's lists the documented arguments"
    for name in ("RNN", "LSTM", "GRU")
}


def _described(signature: inspect.Signature) -> list:
    def default(value):
        if value is inspect.Parameter.empty:
            return "<required>"
        return getattr(value, "__name__", value) if callable(value) else value
    described = [(p.name, p.kind.name, default(p.default)) for p in signature.parameters.values()]
    # PyTorch's layers without arguments of their own (Module, Tanh, LogSigmoid ...) show
    # Module.__init__'s (*args, **kwargs), which it takes only to refuse: no arguments
    if [kind for _, kind, _ in described] == ["VAR_POSITIONAL", "VAR_KEYWORD"]:
        return []
    return described


def _shared_classes():
    names = [n for n in nn.__all__ if isinstance(getattr(nn, n, None), type) and hasattr(torch.nn, n)]
    assert len(names) > 40
    return names


@pytest.mark.parametrize("name", _shared_classes())
def test_constructor_signature_matches_pytorch(name):
    ours = _described(inspect.signature(getattr(nn, name)))
    theirs = _described(inspect.signature(getattr(torch.nn, name)))
    if name in KNOWN_DIFFERENCES and ours != theirs:
        pytest.xfail(KNOWN_DIFFERENCES[name])
    assert ours == theirs


def test_subclass_passes_device_and_dtype_positionally():
    class Mine(nn.Linear):
        def __init__(self):
            super().__init__(3, 2, True, "cpu", zero.float64)

    assert Mine().weight.dtype is zero.float64
    assert nn.LayerNorm(4, 1e-5, True, True, None, zero.float64).weight.dtype is zero.float64


# -- parameter containers -----------------------------------------------------------------------

def test_parameter_list_registers_appends_and_prints_like_pytorch():
    values = [np.ones((2, 3)), np.zeros(2)]
    ours = nn.ParameterList([nn.Parameter(zero.tensor(values[0])), zero.tensor(values[1])])
    theirs = torch.nn.ParameterList([torch.nn.Parameter(torch.tensor(values[0])), torch.tensor(values[1])])
    assert isinstance(ours[1], nn.Parameter) and ours[1].requires_grad
    ours.append(zero.ones(4))
    theirs.append(torch.ones(4))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0", "1", "2"]
    assert len(list(ours.parameters())) == 3 and len(ours) == 3
    assert repr(ours).replace("zero", "torch") == repr(theirs)
    ours[0] = zero.zeros(1)
    assert ours[0].shape == (1,) and ours.state_dict()["0"].shape == (1,)
    assert len(ours[1:]) == 2 and ours[-1].shape == (4,)
    ours.extend([zero.ones(1)])
    assert len(ours) == 4
    with pytest.raises(IndexError):
        ours[7]


def test_parameter_dict_keys_order_and_repr():
    ours = nn.ParameterDict({"b": zero.zeros(3), "a": nn.Parameter(zero.zeros(2, 3))})
    theirs = torch.nn.ParameterDict({"b": torch.zeros(3), "a": torch.nn.Parameter(torch.zeros(2, 3))})
    assert list(ours.keys()) == list(theirs.keys())
    assert repr(ours).replace("zero", "torch") == repr(theirs)
    ours["c"] = zero.ones(1)
    assert "c" in ours and isinstance(ours["c"], nn.Parameter) and list(ours.state_dict()) == ["a", "b", "c"]
    assert ours.pop("a").shape == (2, 3) and "a" not in ours and len(ours) == 2
    assert len(list(ours.parameters())) == 2
    ours.update([("d", zero.ones(2))])
    assert list(ours) == ["b", "c", "d"] and ours.get("zz") is None


def test_parameters_in_containers_train():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList([zero.ones(2) for _ in range(2)])
            self.shifts = nn.ParameterDict({"x": zero.zeros(2)})

        def forward(self, x):
            return x * self.scales[0] * self.scales[1] + self.shifts["x"]

    model = Model()
    model(zero.ones(2)).sum().backward()
    assert [n for n, _ in model.named_parameters()] == ["scales.0", "scales.1", "shifts.x"]
    assert all(p.grad is not None for p in model.parameters())


def test_module_list_repr_groups_repeats_like_pytorch():
    ours = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 3)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), torch.nn.ReLU(),
                                  torch.nn.Linear(2, 3)])
    assert repr(ours) == repr(theirs)


# -- Unflatten, Bilinear, dropout layers ---------------------------------------------------------

def test_unflatten():
    ours, theirs = nn.Unflatten(1, (2, -1)), torch.nn.Unflatten(1, (2, -1))
    assert repr(ours) == repr(theirs)
    x = np.arange(24.0).reshape(2, 12)
    np.testing.assert_array_equal(ours(zero.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
    with pytest.raises(TypeError):
        nn.Unflatten(1, 6)


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_pytorch(bias):
    theirs = torch.nn.Bilinear(3, 4, 5, bias=bias, dtype=torch.float64)
    ours = nn.Bilinear(3, 4, 5, bias=bias, dtype=zero.float64)
    assert repr(ours) == repr(theirs)
    w = ours.weight.detach().numpy()
    assert np.abs(w).max() <= 1 / np.sqrt(3) and w.std() > 0.1
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 4))
    x1, x2 = zero.tensor(a, requires_grad=True), zero.tensor(b, requires_grad=True)
    t1, t2 = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, tout = ours(x1, x2), theirs(t1, t2)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10)
    (out * out).sum().backward(), (tout * tout).sum().backward()
    for z, t in ((x1, t1), (x2, t2), (ours.weight, theirs.weight)):
        np.testing.assert_allclose(z.grad.numpy(), t.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(F.bilinear(x1, x2, ours.weight).detach().numpy(),
                               torch.nn.functional.bilinear(t1, t2, theirs.weight).detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("name, shape", [("Dropout", (50, 40)), ("Dropout1d", (4, 50, 8)),
                                         ("Dropout2d", (4, 50, 3, 3)), ("Dropout3d", (4, 50, 2, 2, 2))])
def test_dropout_layers_in_place_and_by_channel(name, shape):
    layer = getattr(nn, name)(0.4, inplace=True)
    assert repr(layer) == repr(getattr(torch.nn, name)(0.4, inplace=True))
    leaf = zero.ones(shape, requires_grad=True)
    x = leaf * 1.0
    out = layer(x)
    assert out is x                                   # written into its input
    values = out.detach().numpy()
    assert np.all((values == 0) | np.isclose(values, 1 / 0.6)) and 0.2 < (values == 0).mean() < 0.6
    if name != "Dropout":                             # whole channels together
        per_channel = values.reshape(shape[0], shape[1], -1)
        assert np.all(per_channel.min(-1) == per_channel.max(-1))
    out.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), values)
    layer.eval()
    assert layer(x) is x


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_selu_statistics(name):
    zero.manual_seed(0)
    layer = getattr(nn, name)(0.2)
    assert repr(layer) == repr(getattr(torch.nn, name)(0.2))
    x = zero.randn(64, 64, 8)
    out = layer(x).numpy()
    assert abs(out.mean()) < 0.05 and abs(out.std() - 1) < 0.05
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * 0.2 + 1) * 0.8)
    dropped = np.isclose(out, alpha * a * (0.2 - 1))
    assert 0.15 < dropped.mean() < 0.25
    np.testing.assert_allclose(out[~dropped], x.numpy()[~dropped] * a + alpha * a * 0.2, rtol=1e-5, atol=1e-6)
    assert layer.eval()(x) is x
