"""Reductions through the harness: single dims, several dims, all dims, keepdim, negative dims."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import CONTIGUOUS, SLICED, STRIDED_LAYOUTS, TRANSPOSED, check_op

import zero

SHAPE = (2, 3, 4)
# (dim argument, keepdim): None = all dims.
DIMS = [(None, False), (1, False), (-1, True), ((0, 2), False), ((0, -1), True), ((0, 1, 2), False), (0, True)]


def _numpy_logsumexp(a, axis, keepdims):
    peak = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


def _axis(dim):
    return dim if dim is None or isinstance(dim, int) else tuple(dim)


REDUCTIONS = {
    "sum": (lambda a, d, k: a.sum(d, keepdim=k), lambda a, d, k: np.sum(a, axis=_axis(d), keepdims=k)),
    "mean": (lambda a, d, k: a.mean(d, keepdim=k), lambda a, d, k: np.mean(a, axis=_axis(d), keepdims=k)),
    "var": (lambda a, d, k: a.var(d, keepdim=k), lambda a, d, k: np.var(a, axis=_axis(d), ddof=1, keepdims=k)),
    "var_biased": (lambda a, d, k: a.var(d, keepdim=k, correction=0),
                   lambda a, d, k: np.var(a, axis=_axis(d), keepdims=k)),
    "std": (lambda a, d, k: a.std(d, keepdim=k), lambda a, d, k: np.std(a, axis=_axis(d), ddof=1, keepdims=k)),
    "amax": (lambda a, d, k: a.amax(d, keepdim=k), lambda a, d, k: np.amax(a, axis=_axis(d), keepdims=k)),
    "amin": (lambda a, d, k: a.amin(d, keepdim=k), lambda a, d, k: np.amin(a, axis=_axis(d), keepdims=k)),
    "logsumexp": (lambda a, d, k: a.logsumexp(d if d is not None else (0, 1, 2), keepdim=k),
                  lambda a, d, k: _numpy_logsumexp(a, _axis(d), k)),
}


@pytest.mark.parametrize("dim,keepdim", DIMS)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction(name, dim, keepdim):
    fn, ref = REDUCTIONS[name]
    # std over an expanded dim alone is sqrt at 0: not differentiable (nan, as in PyTorch).
    layouts = (CONTIGUOUS, TRANSPOSED, SLICED) if name == "std" else STRIDED_LAYOUTS
    check_op(lambda a: fn(a, dim, keepdim), lambda a: ref(a, dim, keepdim), [SHAPE], rtol=1e-4, atol=1e-5,
             layouts=layouts)


def test_reductions_of_a_zero_dim_tensor_and_functional_forms():
    check_op(lambda a: a.sum(), lambda a: np.sum(a), [()])
    check_op(lambda a: zero.sum(a, 1), lambda a: np.sum(a, 1), [(3, 4)])
    check_op(lambda a: zero.mean(a, -1), lambda a: np.mean(a, -1), [(3, 4)])
    check_op(lambda a: zero.logsumexp(a, 1), lambda a: _numpy_logsumexp(a, 1, False), [(3, 4)])


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False), (-3, True)])
def test_max_min_with_dim_give_values_and_indices(kind, dim, keepdim):
    pick = np.max if kind == "max" else np.min
    arg = np.argmax if kind == "max" else np.argmin

    def ref(a):
        values = pick(a, axis=dim, keepdims=keepdim)
        indices = arg(a, axis=dim)
        return values, (np.expand_dims(indices, dim) if keepdim else indices)

    check_op(lambda a: getattr(a, kind)(dim, keepdim=keepdim), ref, [SHAPE])


@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_min_over_everything(kind):
    check_op(lambda a: getattr(a, kind)(), getattr(np, kind), [SHAPE])
    check_op(lambda a: getattr(zero, kind)(a), getattr(np, kind), [SHAPE])


def test_max_with_dim_returns_a_named_pair():
    x = zero.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    result = x.max(1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert values.tolist() == [5.0, 7.0]
    assert indices.tolist() == [1, 0]  # the first of equal maxima
    assert indices.dtype is zero.int64 and not indices.requires_grad


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False), (None, True)])
def test_argmax_argmin(kind, dim, keepdim):
    def ref(a):
        result = getattr(np, kind)(a, axis=dim, keepdims=keepdim)
        return np.asarray(result)

    check_op(lambda a: getattr(a, kind)(dim, keepdim=keepdim), ref, [SHAPE], grad=False)
    check_op(lambda a: getattr(zero, kind)(a, dim, keepdim), ref, [SHAPE], grad=False)


# -- ties -----------------------------------------------------------------------------------------


def test_max_with_dim_gives_the_whole_gradient_to_the_returned_index():
    x = zero.tensor([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    values, indices = x.max(1)
    assert indices.tolist() == [0, 0]
    (values * zero.tensor([1.0, 10.0])).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [10.0, 0.0, 0.0]]


def test_min_with_dim_ties():
    x = zero.tensor([[0.0, 1.0, 0.0]], requires_grad=True)
    values, indices = x.min(-1, keepdim=True)
    assert values.shape == (1, 1) and indices.tolist() == [[0]]
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0]]


@pytest.mark.parametrize("method", ["amax", "max"])
def test_full_max_splits_the_gradient_between_equal_maxima(method):
    x = zero.tensor([[3.0, 1.0, 3.0], [2.0, 3.0, 0.0]], requires_grad=True)
    out = getattr(x, method)()
    assert out.item() == 3.0
    out.backward()
    third = 1.0 / 3.0
    np.testing.assert_allclose(x.grad.numpy(), [[third, 0, third], [0, third, 0]], rtol=1e-6)


def test_amin_over_a_dim_splits_ties_per_row():
    x = zero.tensor([[0.0, 1.0, 0.0], [5.0, 4.0, 6.0]], requires_grad=True)
    x.amin(1).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]]


def test_logsumexp_is_stable_and_handles_minus_infinity():
    x = zero.tensor([[1000.0, 1000.0], [-float("inf"), 0.0], [-float("inf"), -float("inf")]])
    out = x.logsumexp(1)
    assert out[0].item() == pytest.approx(1000.0 + np.log(2.0))
    assert out[1].item() == pytest.approx(0.0)
    assert out[2].item() == -float("inf")


def test_sum_of_integers_and_bools_is_int64():
    assert zero.tensor([1, 2, 3], dtype=zero.int32).sum().dtype is zero.int64
    assert zero.tensor([True, True, False]).sum().item() == 2
    assert zero.tensor([[1, 2], [3, 4]]).sum(0).tolist() == [4, 6]


def test_all_any():
    m = zero.tensor([[True, False], [True, True]])
    assert m.all().item() is False and m.any().item() is True
    assert m.all(1).tolist() == [False, True]
    assert zero.all(m, 0, keepdim=True).tolist() == [[True, False]]


def test_mean_of_an_integer_tensor_is_refused_with_a_clear_error():
    with pytest.raises(zero.errors.DTypeError, match="mean.*int64"):
        zero.tensor([1, 2]).mean()
    assert zero.tensor([1, 2]).mean(dtype=zero.float64).item() == 1.5


def test_reduction_matches_torch_when_available():
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(1).standard_normal((2, 3, 4))
    for name, kwargs in [("var", dict(dim=(0, 2), keepdim=True)), ("std", dict(dim=1)),
                         ("logsumexp", dict(dim=(1, 2)))]:
        x = zero.tensor(values, requires_grad=True)
        getattr(x, name)(**kwargs).sum().backward()
        tx = torch.tensor(values, requires_grad=True)
        getattr(tx, name)(**kwargs).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "logsumexp"])
@pytest.mark.parametrize("dim", [0, -1])
def test_reducing_a_zero_dim_tensor_over_dim_0_or_minus_1(name, dim):
    # PyTorch accepts dim 0 / -1 for a scalar and returns the scalar.
    x = zero.tensor(2.5, dtype=zero.float64, requires_grad=True)
    out = getattr(x, name)(dim)
    assert out.shape == () and out.item() == 2.5
    out.backward()
    assert x.grad.item() == 1.0
    assert getattr(x, name)(dim, keepdim=True).shape == ()


def test_variance_of_too_few_elements_is_nan_with_a_nan_gradient():
    x = zero.tensor([1.5], requires_grad=True)
    out = x.var()
    assert np.isnan(out.item())
    with np.errstate(all="ignore"):  # 0 * inf in the chain rule
        out.backward()
    assert np.isnan(x.grad.item())
    assert zero.tensor([1.0, 2.0]).var(correction=2).item() == float("inf")
    assert x.var(correction=0).item() == 0.0
