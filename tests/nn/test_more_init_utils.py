"""nn.init's truncated-normal, orthogonal, sparse, identity and Dirac initialisers (shapes,
statistics, PyTorch's exact values where deterministic, errors) and nn.utils's
parameters_to_vector / vector_to_parameters / clip_grad_value_ against PyTorch."""
import math
import warnings

import numpy as np
import pytest

import zero
from zero import nn
from zero.nn import init

torch = pytest.importorskip("torch")


def test_trunc_normal_statistics():
    zero.manual_seed(0)
    w = init.trunc_normal_(zero.empty(200, 100, dtype=zero.float64), mean=0.5, std=2.0, a=-1.0, b=3.0)
    values = w.numpy()
    assert w.shape == (200, 100)
    assert values.min() >= -1.0 and values.max() <= 3.0
    t = torch.distributions.Normal(0.5, 2.0)   # the truncated distribution's mean and std
    alpha, beta = (-1.0 - 0.5) / 2.0, (3.0 - 0.5) / 2.0
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    z = float(t.cdf(torch.tensor(3.0)) - t.cdf(torch.tensor(-1.0)))
    mean = 0.5 + 2.0 * (phi(alpha) - phi(beta)) / z
    variance = 4.0 * (1 + (alpha * phi(alpha) - beta * phi(beta)) / z - ((phi(alpha) - phi(beta)) / z) ** 2)
    assert abs(values.mean() - mean) < 0.02
    assert abs(values.std() - math.sqrt(variance)) < 0.02
    default = init.trunc_normal_(zero.empty(5000))
    assert -2.0 <= default.numpy().min() and default.numpy().max() <= 2.0
    assert abs(float(default.numpy().std()) - float(torch.nn.init.trunc_normal_(torch.empty(200000)).std())) < 0.03


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(zero.empty(3), mean=10.0)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (8, 2, 3), (5, 5)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal(shape, gain):
    w = init.orthogonal_(zero.empty(*shape, dtype=zero.float64), gain=gain)
    assert w.shape == shape
    flat = w.numpy().reshape(shape[0], -1) / gain
    rows, columns = flat.shape
    product = flat @ flat.T if rows <= columns else flat.T @ flat
    np.testing.assert_allclose(product, np.eye(min(rows, columns)), atol=1e-12)
    w32 = init.orthogonal_(zero.empty(*shape))
    assert w32.dtype == zero.float32


def test_orthogonal_is_random_and_seeded():
    zero.manual_seed(3)
    a = init.orthogonal_(zero.empty(4, 4)).numpy()
    zero.manual_seed(3)
    b = init.orthogonal_(zero.empty(4, 4)).numpy()
    c = init.orthogonal_(zero.empty(4, 4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(b, c)


def test_sparse():
    w = init.sparse_(zero.empty(10, 7, dtype=zero.float64), sparsity=0.25, std=0.5)
    zeros = (w.numpy() == 0).sum(axis=0)
    np.testing.assert_array_equal(zeros, [3] * 7)   # ⌈0.25 · 10⌉ per column
    assert 0.2 < w.numpy()[w.numpy() != 0].std() < 1.0


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_eye_equals_pytorch(shape):
    np.testing.assert_array_equal(init.eye_(zero.empty(*shape)).numpy(),
                                  torch.nn.init.eye_(torch.empty(*shape)).numpy())


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 5, 3, 2, 3), 1),
                                          ((8, 2, 5, 5), 4), ((3, 6, 1), 3)])
def test_dirac_equals_pytorch(shape, groups):
    ours = init.dirac_(zero.empty(*shape, dtype=zero.float64), groups)
    theirs = torch.nn.init.dirac_(torch.empty(*shape, dtype=torch.float64), groups)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name,args", [("orthogonal_", ((3,), {})), ("eye_", ((2, 2, 2), {})),
                                       ("sparse_", ((3,), {"sparsity": 0.1})), ("dirac_", ((3, 3), {})),
                                       ("dirac_", ((3, 3, 3), {"groups": 2}))])
def test_bad_shapes_raise_value_error(name, args):
    shape, kwargs = args
    with pytest.raises(ValueError):
        getattr(init, name)(zero.empty(*shape), **kwargs)
    with pytest.raises(ValueError):
        getattr(torch.nn.init, name)(torch.empty(*shape), **kwargs)


@pytest.mark.parametrize("name", ["conv1d", "conv2d", "conv_transpose3d", "selu", "linear", "tanh"])
def test_calculate_gain(name):
    assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)


def test_init_does_not_record_graph():
    p = nn.Parameter(zero.empty(4, 4))
    for fn in (init.orthogonal_, init.trunc_normal_, init.eye_):
        fn(p)
        assert p.grad_fn is None and p.requires_grad


# -- nn.utils ----------------------------------------------------------------------------------------

def params(lib):
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.tensor(rng.normal(size=s))) for s in ((3, 2), (4,), (2, 1, 2))]


def test_parameters_to_vector_values_and_gradient():
    zp, tp = params(zero), params(torch)
    zv, tv = nn.utils.parameters_to_vector(zp), torch.nn.utils.parameters_to_vector(tp)
    np.testing.assert_array_equal(zv.detach().numpy(), tv.detach().numpy())
    weights = np.arange(14.0)
    (zv * zero.tensor(weights)).sum().backward()
    (tv * torch.tensor(weights)).sum().backward()
    for z, t in zip(zp, tp):
        np.testing.assert_array_equal(z.grad.numpy(), t.grad.numpy())


def test_vector_to_parameters():
    zp, tp = params(zero), params(torch)
    vec = np.linspace(-1, 1, 14)
    nn.utils.vector_to_parameters(zero.tensor(vec), zp)
    torch.nn.utils.vector_to_parameters(torch.tensor(vec), tp)
    for z, t in zip(zp, tp):
        np.testing.assert_array_equal(z.detach().numpy(), t.detach().numpy())
        assert z.requires_grad and z.grad_fn is None
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters(vec, zp)
    with pytest.raises(TypeError):
        torch.nn.utils.vector_to_parameters(vec, tp)


@pytest.mark.parametrize("clip", [0.3, 1, 5.0])
def test_clip_grad_value(clip):
    zp, tp = params(zero), params(torch)
    grads = [np.random.default_rng(i).normal(0, 2, p.shape) for i, p in enumerate(zp)]
    for z, t, g in zip(zp, tp, grads):
        z.grad, t.grad = zero.tensor(g), torch.tensor(g)
    zp[1].grad = None
    tp[1].grad = None
    assert nn.utils.clip_grad_value_(zp, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip)
    for z, t in zip(zp, tp):
        if t.grad is None:
            assert z.grad is None
        else:
            np.testing.assert_array_equal(z.grad.numpy(), t.grad.numpy())
    single = nn.Parameter(zero.ones(2))
    single.grad = zero.tensor([3.0, -3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.utils.clip_grad_value_(single, 1.0)
    np.testing.assert_array_equal(single.grad.numpy(), [1.0, -1.0])
