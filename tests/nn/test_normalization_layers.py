"""GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm and F.normalize against PyTorch:
values and gradients (input and affine parameters), running statistics, reprs, errors."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero import nn
from zero.nn import functional as F

torch = pytest.importorskip("torch")


def _pair(shape, seed=0):
    array = np.random.default_rng(seed).standard_normal(shape) * 2 + 0.5
    return (zero.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True))


def _same_parameters(ours, theirs, seed=1):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    ours.load_state_dict({k: zero.tensor(v.numpy()) for k, v in theirs.state_dict().items()})


def _compare(ours, theirs, x_shape, atol=1e-10):
    x, tx = _pair(x_shape)
    out, tout = ours(x), theirs(tx)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-9, atol=atol)
    upstream = np.random.default_rng(7).standard_normal(tout.shape)
    (out * zero.tensor(upstream)).sum().backward()
    (tout * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=atol)
    theirs_grads = {n: p.grad for n, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_grads[name].numpy(), rtol=1e-8, atol=atol)
    return out


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(3, 6, 5), (2, 6, 3, 4), (2, 6)])
def test_group_norm_matches_pytorch(affine, shape):
    ours = nn.GroupNorm(3, 6, affine=affine, dtype=zero.float64)
    theirs = torch.nn.GroupNorm(3, 6, affine=affine, dtype=torch.float64)
    _same_parameters(ours, theirs)
    _compare(ours, theirs, shape)
    assert repr(ours) == repr(theirs)


def test_group_norm_without_bias_and_errors():
    ours, theirs = nn.GroupNorm(2, 4, bias=False), torch.nn.GroupNorm(2, 4, bias=False)
    assert repr(ours) == repr(theirs) and [n for n, _ in ours.named_parameters()] == ["weight"]
    with pytest.raises(ValueError):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError):
        F.group_norm(zero.ones(2, 4, 3), 3)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_instance_norm_matches_pytorch(affine, dims):
    name = f"InstanceNorm{dims}d"
    ours = getattr(nn, name)(4, affine=affine, dtype=zero.float64)
    theirs = getattr(torch.nn, name)(4, affine=affine, dtype=torch.float64)
    _same_parameters(ours, theirs)
    _compare(ours, theirs, (2, 4) + (3,) * dims)
    assert repr(ours) == repr(theirs)
    # unbatched input (C, *)
    x, tx = _pair((4,) + (3,) * dims, seed=3)
    np.testing.assert_allclose(ours(x).detach().numpy(), theirs(tx).detach().numpy(), rtol=1e-9, atol=1e-10)


def test_instance_norm_running_statistics_match_pytorch():
    ours = nn.InstanceNorm1d(3, momentum=0.3, track_running_stats=True, dtype=zero.float64)
    theirs = torch.nn.InstanceNorm1d(3, momentum=0.3, track_running_stats=True, dtype=torch.float64)
    for seed in range(2):
        x, tx = _pair((4, 3, 5), seed)
        ours(x), theirs(tx)
    for key in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours, key).numpy(), getattr(theirs, key).numpy(), rtol=1e-10)
    assert repr(ours) == repr(theirs)
    ours.eval(), theirs.eval()
    x, tx = _pair((2, 3, 5), 9)
    np.testing.assert_allclose(ours(x).detach().numpy(), theirs(tx).detach().numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("normalized_shape, eps", [(5, None), ((4, 5), 1e-5)])
def test_rms_norm_matches_pytorch(affine, normalized_shape, eps):
    ours = nn.RMSNorm(normalized_shape, eps=eps, elementwise_affine=affine, dtype=zero.float64)
    theirs = torch.nn.RMSNorm(normalized_shape, eps=eps, elementwise_affine=affine, dtype=torch.float64)
    _same_parameters(ours, theirs)
    _compare(ours, theirs, (3, 4, 5))
    assert repr(ours) == repr(theirs)


def test_rms_norm_float32_default_eps_and_errors():
    x, tx = (zero.tensor(np.full((2, 3), 1e-5, np.float32)), torch.tensor(np.full((2, 3), 1e-5, np.float32)))
    np.testing.assert_allclose(F.rms_norm(x, (3,)).numpy(), torch.nn.functional.rms_norm(tx, (3,)).numpy(),
                               rtol=1e-5)
    with pytest.raises(RuntimeError):
        F.rms_norm(zero.ones(2, 3), (4,))


@pytest.mark.parametrize("p, dim", [(2.0, 1), (1.0, -1), (3.0, 0)])
def test_normalize_matches_pytorch(p, dim):
    x, tx = _pair((3, 4))
    out, tout = F.normalize(x, p, dim), torch.nn.functional.normalize(tx, p, dim)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10)
    (out * out).sum().backward(), (tout * tout).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-12)
    zeros = F.normalize(zero.zeros(2, 3))
    assert np.all(zeros.numpy() == 0)


@pytest.mark.parametrize("size, shape", [(3, (2, 5, 4)), (2, (2, 4, 3, 3)), (4, (1, 6, 2, 2, 2))])
def test_local_response_norm_matches_pytorch(size, shape):
    ours, theirs = nn.LocalResponseNorm(size, alpha=0.01, beta=0.6, k=2.0), \
        torch.nn.LocalResponseNorm(size, alpha=0.01, beta=0.6, k=2.0)
    _compare(ours, theirs, shape)
    assert repr(ours) == repr(theirs)
