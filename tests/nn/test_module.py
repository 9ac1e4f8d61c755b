"""Module: registration, names, modes, state dicts, moving and printing."""
import math

import numpy as np
import pytest

import zero
from zero.models import GPT, MLP, GPTConfig
from zero import nn
from zero.errors import ShapeError


class TwoLayer(nn.Module):
    """Registers its layers by attribute assignment (the book's Python front end)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


class Explicit(nn.Module):
    """Registers explicitly (the book's C++ RegisterParameter / RegisterModule)."""

    def __init__(self):
        super().__init__()
        self.register_parameter("scale", nn.Parameter(zero.ones(3)))
        self.register_module("inner", TwoLayer())
        self.register_buffer("steps", zero.zeros(1))
        self.register_buffer("scratch", zero.zeros(2), persistent=False)


def test_attribute_assignment_registers_parameters_and_modules():
    model = TwoLayer()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [name for name, _ in model.named_children()] == ["fc1", "fc2"]
    assert len(list(model.modules())) == 3
    assert all(p.requires_grad and p.is_leaf for p in model.parameters())


def test_explicit_registration_and_buffers():
    model = Explicit()
    assert [n for n, _ in model.named_parameters()] == [
        "scale", "inner.fc1.weight", "inner.fc1.bias", "inner.fc2.weight", "inner.fc2.bias"]
    assert [n for n, _ in model.named_buffers()] == ["steps", "scratch"]
    keys = list(model.state_dict())
    assert "steps" in keys and "scratch" not in keys  # non-persistent buffers are not saved
    assert model.inner.fc1.weight.shape == (8, 4)


def test_shared_parameter_listed_once():
    model = TwoLayer()
    model.fc3 = nn.Linear(3, 8)
    model.fc3.weight = model.fc1.weight  # tied: one Parameter under two names
    params = list(model.parameters())
    assert sum(p is model.fc1.weight for p in params) == 1


def test_unnamed_walks_follow_the_named_ones():
    """modules(), parameters() and buffers() build no names, yet list what the named walks
    list, in their order: shared modules and tied parameters once, None slots skipped."""
    model = Explicit()
    model.shared = model.inner.fc1                  # one module under two names
    model.inner.tied = nn.Linear(4, 8)
    model.inner.tied.weight = model.inner.fc1.weight
    model.inner.register_module("empty", None)
    model.inner.fc2.bias = None
    assert list(model.modules()) == [m for _, m in model.named_modules()]
    assert len(list(model.modules())) == 5          # model, inner, fc1, fc2, tied
    assert [id(p) for p in model.parameters()] == [id(p) for _, p in model.named_parameters()]
    assert [id(b) for b in model.buffers()] == [id(b) for _, b in model.named_buffers()]
    assert [id(p) for p in model.parameters(recurse=False)] == [id(model.scale)]


def test_walks_reach_any_depth():
    """The walks are loops, not recursion: a chain deeper than Python's recursion limit."""
    root = node = nn.Module()
    for _ in range(3000):
        node.child = nn.Module()
        node = node.child
    node.weight = nn.Parameter(zero.ones(2))
    assert len(list(root.modules())) == 3001
    assert [p is node.weight for p in root.parameters()] == [True]


def test_registration_errors():
    class NoInit(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match="Module.__init__"):
        NoInit()
    model = TwoLayer()
    with pytest.raises(TypeError, match="parameter"):
        model.register_parameter("w", zero.ones(2))
    with pytest.raises(KeyError):
        model.register_parameter("a.b", nn.Parameter(zero.ones(2)))
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        model.missing


def test_forward_and_backward_reach_every_parameter():
    zero.manual_seed(0)
    model = TwoLayer()
    model(zero.randn(5, 4)).sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_zero_grad_can_keep_buffers():
    model = TwoLayer()
    model(zero.randn(2, 4)).sum().backward()
    grad = model.fc1.weight.grad
    model.zero_grad(set_to_none=False)
    assert model.fc1.weight.grad is grad
    assert np.all(grad.numpy() == 0)


def test_train_eval_and_eval_guard_restore_even_on_exception():
    model = TwoLayer()
    model.fc2.eval()  # a mixed state that the guard must restore exactly
    with pytest.raises(RuntimeError):
        with nn.eval_mode(model):
            assert not model.training and not model.fc1.training
            raise RuntimeError("boom")
    assert model.training and model.fc1.training and not model.fc2.training

    with pytest.raises(ValueError):
        with nn.eval_mode():  # the book's global EvalGuard
            assert not model.training and not model.fc1.training
            raise ValueError("boom")
    assert model.training


def test_dropout_follows_mode():
    zero.manual_seed(0)
    drop = nn.Dropout(0.5)
    x = zero.ones(1000)
    assert (drop(x).numpy() == 0).sum() > 300
    drop.eval()
    assert drop(x) is x
    drop.train()
    with nn.eval_mode():
        assert drop(x) is x


def test_state_dict_round_trip_and_strict_errors():
    zero.manual_seed(1)
    a, b = TwoLayer(), TwoLayer()
    b.load_state_dict(a.state_dict())
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy(), err_msg=name)
    # state_dict values are detached copies of references: loading copies into place
    assert b.fc1.weight.untyped_storage() is not a.fc1.weight.untyped_storage()

    state = a.state_dict()
    del state["fc2.bias"]
    state["extra.weight"] = zero.ones(1)
    with pytest.raises(ShapeError, match="missing keys: fc2.bias.*unexpected keys: extra.weight"):
        b.load_state_dict(state)
    result = b.load_state_dict(state, strict=False)
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["extra.weight"]

    state = a.state_dict()
    state["fc1.weight"] = zero.ones(3, 3)
    with pytest.raises(ShapeError, match=r"fc1.weight: checkpoint \[3, 3\], model \[8, 4\]"):
        b.load_state_dict(state)


def test_to_keeps_parameter_objects_and_moves_grads():
    model = TwoLayer()
    params = list(model.parameters())
    model(zero.randn(2, 4)).sum().backward()
    model.double()
    assert [p is q for p, q in zip(params, model.parameters())] == [True] * 4
    assert all(p.dtype is zero.float64 and p.grad.dtype is zero.float64 for p in model.parameters())
    assert model(zero.randn(2, 4, dtype=zero.float64)).dtype is zero.float64


def test_linear_and_embedding_initialise_as_pytorch_does():
    zero.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
        assert values.min() >= -bound and values.max() <= bound
        assert abs(float(values.std()) - bound / math.sqrt(3)) < 0.1 * bound  # uniform on ±bound
    embedding = nn.Embedding(500, 64)
    assert abs(float(embedding.weight.detach().numpy().std()) - 1.0) < 0.02


def test_the_books_models_keep_the_books_initialisation():
    zero.manual_seed(0)
    mlp = MLP(hidden=300)
    std = float(mlp.fc1.weight.detach().numpy().std())
    assert abs(std - math.sqrt(2 / 784)) < 0.05 * math.sqrt(2 / 784)   # He: N(0, 2 / fan_in)
    assert np.all(mlp.fc1.bias.detach().numpy() == 0)
    gpt = GPT(GPTConfig(vocab_size=500, n_embd=64, n_head=2, n_layer=1))
    assert abs(float(gpt.token_embedding.weight.detach().numpy().std()) - 0.02) < 0.002


def test_containers_name_their_members():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert seq(zero.randn(4, 2)).shape == (4, 1)
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and [n for n, _ in layers.named_parameters()][-1] == "2.bias"
    heads = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.Linear(2, 1)})
    assert sorted(n for n, _ in heads.named_parameters()) == ["a.bias", "a.weight", "b.bias", "b.weight"]


def test_repr_shows_the_tree():
    text = repr(TwoLayer())
    assert "(fc1): Linear(in_features=4, out_features=8, bias=True)" in text
    assert text.startswith("TwoLayer(") and text.endswith(")")
