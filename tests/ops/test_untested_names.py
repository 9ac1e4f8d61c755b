"""Names Zero had that no test named (issue 37): each against PyTorch -- values, dtypes,
in-place methods returning self and bumping the version, gradients where they apply."""
from __future__ import annotations

import numpy as np
import pytest

import zero
import zero.nn.functional as ZF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def F(lib):
    return ZF if lib is zero else TF


def _array(r):
    if isinstance(r, (tuple, list)):
        return tuple(_array(x) for x in r)
    if isinstance(r, (bool, int, float)):
        return np.asarray(r)
    return r.detach().numpy()


def _same(fn, rtol=1e-5, atol=1e-6):
    z, t = _array(fn(zero)), _array(fn(torch))
    zs, ts = (z, t) if isinstance(z, tuple) else ((z,), (t,))
    assert len(zs) == len(ts)
    for a, b in zip(zs, ts, strict=True):
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


RNG = np.random.default_rng(37)
UNIT = RNG.uniform(0.1, 0.9, (3, 4))                  # inside every function's domain below
SIGNED = RNG.uniform(-3.0, 3.0, (3, 4))


# -- the in-place unary methods -----------------------------------------------------------------

IN_PLACE = {name: UNIT for name in (
    "acos_", "arccos_", "asin_", "arcsin_", "atan_", "arctan_", "atanh_", "arctanh_", "asinh_", "arcsinh_",
    "cosh_", "sinh_", "tan_", "erf_", "erfc_", "erfinv_", "exp2_", "expm1_", "log10_", "log2_", "reciprocal_")}
IN_PLACE.update({name: UNIT + 1.5 for name in ("acosh_", "arccosh_")})
IN_PLACE.update({name: SIGNED for name in ("ceil_", "floor_", "round_", "trunc_", "fix_", "frac_")})


@pytest.mark.parametrize("name", sorted(IN_PLACE))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_unary_method_returns_self_bumps_the_version_and_matches(name, dtype):
    def run(lib):
        x = lib.tensor(IN_PLACE[name], dtype=getattr(lib, dtype))
        if lib is zero:
            version = x._storage.version
            out = getattr(x, name)()
            assert out is x and x._storage.version > version
        else:
            version = x._version
            out = getattr(x, name)()
            assert out is x and x._version > version
        return x
    _same(run, rtol=2e-6 if dtype == "float32" else 1e-12)


# PyTorch 2.13 has no derivative for the in-place inverse hyperbolic functions ("the derivative
# for 'inplace version of acosh' is not implemented"); Zero's differentiate them as the
# out-of-place ones (checked against those below).
NO_TORCH_DERIVATIVE = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}


@pytest.mark.parametrize("name", sorted(set(IN_PLACE) - NO_TORCH_DERIVATIVE))
def test_in_place_unary_method_through_a_graph_differentiates_as_pytorch(name):
    """On a non-leaf, the in-place op differentiates as its out-of-place twin."""
    def run(lib):
        leaf = lib.tensor(IN_PLACE[name], dtype=lib.float64, requires_grad=True)
        y = leaf * 1.0
        getattr(y, name)()
        (y * y).sum().backward()
        return y, leaf.grad
    _same(run, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(NO_TORCH_DERIVATIVE))
def test_in_place_inverse_hyperbolic_gradient_equals_the_out_of_place_one(name):
    def run(lib, in_place):
        leaf = lib.tensor(IN_PLACE[name], dtype=lib.float64, requires_grad=True)
        y = leaf * 1.0
        y = getattr(y, name)() if in_place else getattr(lib, name[:-1])(y)
        (y * y).sum().backward()
        return y, leaf.grad
    for got, want in zip(_array(run(zero, True)), _array(run(torch, False)), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9)


def test_in_place_of_a_leaf_requiring_grad_refused_as_pytorch():
    for lib in (torch, zero):
        with pytest.raises(RuntimeError):
            lib.tensor([0.5], requires_grad=True).acos_()


def test_clip_addcdiv_celu_rrelu_in_place():
    def run(lib):
        x = lib.tensor(SIGNED, dtype=lib.float32)
        a = x.clone().clip_(-1.0, 2.0)
        b = x.clone().addcdiv_(lib.tensor(UNIT, dtype=lib.float32), lib.tensor(UNIT + 1, dtype=lib.float32), value=0.5)
        c = lib.celu_(x.clone(), alpha=0.7)
        d = lib.rrelu_(x.clone(), training=False)
        e = lib.rrelu(x, training=False)
        return a, b, c, d, e
    _same(run)
    x = zero.tensor([1.0, -2.0])
    assert x.clip_(0, 1) is x and zero.celu_(x) is x


def test_addcdiv_gradient():
    def run(lib):
        leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (SIGNED, UNIT, UNIT + 1)]
        out = leaves[0] * 1.0
        out.addcdiv_(leaves[1], leaves[2], value=-2.0)
        (out * out).sum().backward()
        return (out,) + tuple(t.grad for t in leaves)
    _same(run, rtol=1e-9)


def test_expand_as_and_type_as():
    def run(lib):
        x = lib.tensor([[1.0], [2.0]], dtype=lib.float64, requires_grad=True)
        wide = x.expand_as(lib.ones(2, 3))
        typed = lib.tensor([1, 2, 3]).type_as(lib.ones(1, dtype=lib.float16))
        same = lib.ones(2).type_as(lib.ones(1))
        (wide * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return wide, typed, same, x.grad
    _same(run)
    x = zero.ones(2, 1)
    assert x.expand_as(zero.ones(2, 3)).data_ptr() == x.data_ptr()      # a view, as PyTorch's


# -- top-level functions ------------------------------------------------------------------------


def test_atleast():
    def run(lib):
        out = []
        for value in (lib.tensor(2.0), lib.tensor([1.0, 2.0]), lib.ones(2, 3), lib.ones(2, 3, 4)):
            out += [lib.atleast_1d(value), lib.atleast_2d(value), lib.atleast_3d(value)]
        out += list(lib.atleast_2d(lib.tensor(1.0), lib.tensor([1, 2])))
        return tuple(out)
    _same(run)


def test_bitwise_functions_and_methods():
    a, b = [[5, -3, 0], [255, 7, 8]], [[3, 3, -1], [1, 2, 8]]

    def run(lib):
        x, y = lib.tensor(a), lib.tensor(b)
        u = lib.tensor(a, dtype=lib.uint8) if lib is torch else zero.tensor(np.array(a).astype(np.uint8))
        return (lib.bitwise_not(x), lib.bitwise_or(x, y), lib.bitwise_xor(x, y), x.bitwise_not(), x.bitwise_or(y),
                x.bitwise_xor(y), lib.bitwise_not(lib.tensor([True, False])), lib.bitwise_xor(lib.tensor([True]),
                                                                                          lib.tensor([True])),
                u.bitwise_not(), lib.bitwise_or(x, 4))
    _same(run)
    for lib in (torch, zero):
        with pytest.raises(NotImplementedError):     # a float operand
            lib.bitwise_or(lib.ones(2), lib.ones(2))


def test_comparison_aliases():
    def run(lib):
        x, y = lib.tensor(SIGNED), lib.tensor(SIGNED.T.reshape(3, 4))
        return (lib.greater(x, y), lib.greater_equal(x, 0.5), lib.less(x, y), lib.less_equal(x, x),
                lib.not_equal(x, y), x.greater(y), x.less_equal(0), x.not_equal(x))
    _same(run)


def test_flip_roll_tril_sort_topk_with_gradients():
    def run(lib):
        x = lib.tensor(SIGNED, dtype=lib.float64, requires_grad=True)
        values, indices = lib.sort(x, dim=1, descending=True)
        top, where = lib.topk(x, 2, dim=0, largest=False)
        outs = (lib.flip(x, (0, 1)), lib.roll(x, 2, 1), lib.roll(x, (1, -1), (0, 1)), lib.tril(x, -1), values, indices,
                top, where)
        weights = [lib.tensor(RNG_W[i], dtype=lib.float64) for i in range(4)]
        total = sum(((o * w).sum() for o, w in zip((outs[0], outs[1], outs[3], outs[4]), weights)))
        (total + top.sum()).backward()
        return outs + (x.grad,)
    _same(run)


RNG_W = RNG.standard_normal((4, 3, 4))


def test_numel_is_tensor_and_sign():
    for lib in (torch, zero):
        assert lib.numel(lib.ones(2, 3)) == 6 and lib.numel(lib.tensor(1.0)) == 1
        assert lib.is_tensor(lib.ones(1)) and not lib.is_tensor([1.0]) and not lib.is_tensor(np.ones(1))
    _same(lambda lib: (lib.sign(lib.tensor([-2.0, 0.0, 3.0, -0.0])), lib.sign(lib.tensor([-2, 0, 5])),
                     lib.sign(lib.tensor([True, False]))))


def test_prelu():
    def run(lib):
        x = lib.tensor(SIGNED.reshape(1, 3, 4), dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        out = lib.prelu(x, w)
        (out * out).sum().backward()
        return out, x.grad, w.grad
    _same(run)


# -- the loss functions at the top level -------------------------------------------------------


def _loss_case(lib, name):
    x = lib.tensor(SIGNED, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(SIGNED[::-1].copy(), dtype=lib.float64, requires_grad=True)
    if name == "binary_cross_entropy_with_logits":
        weights = lib.tensor(UNIT + 1, dtype=lib.float64), lib.tensor([1.0, 2.0, 0.5, 1.0], dtype=lib.float64)
        return lib.binary_cross_entropy_with_logits(x, lib.tensor(UNIT, dtype=lib.float64), *weights,
                                                    reduction=2), (x,)
    if name == "cosine_embedding_loss":
        return lib.cosine_embedding_loss(x, y, lib.tensor([1.0, -1.0, 1.0], dtype=lib.float64), 0.1, 2), (x, y)
    if name == "hinge_embedding_loss":
        return lib.hinge_embedding_loss(x, lib.tensor(np.sign(SIGNED), dtype=lib.float64), 0.5), (x,)
    if name == "margin_ranking_loss":
        return lib.margin_ranking_loss(x, y, lib.tensor(np.sign(SIGNED[::-1]), dtype=lib.float64), 0.2, 1), (x, y)
    if name == "poisson_nll_loss":
        return lib.poisson_nll_loss(x, lib.tensor(UNIT * 3, dtype=lib.float64), True, False, 1e-8, 2), (x,)
    return lib.triplet_margin_loss(x, y, x * 0.5 + 1.0, 1.0, 2.0, 1e-6, True, 1), (x, y)


def test_top_level_losses_take_pytorch_s_integer_reduction():
    """torch.<loss> is the ATen form: reduction an int, no reduction by default, a string refused."""
    for lib in (torch, zero):
        x, t = lib.tensor(SIGNED), lib.tensor(np.sign(SIGNED))
        assert lib.hinge_embedding_loss(x, t).shape == (3, 4) and lib.hinge_embedding_loss(x, t, 1.0, 1).shape == ()
        with pytest.raises(TypeError):
            lib.hinge_embedding_loss(x, t, 1.0, "mean")
    _same(lambda lib: lib.cosine_embedding_loss(lib.tensor(SIGNED), lib.tensor(UNIT), lib.tensor([1.0, -1.0, 1.0])))


@pytest.mark.parametrize("name", ["binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
                                  "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss"])
def test_top_level_losses_with_gradients(name):
    def run(lib):
        loss, leaves = _loss_case(lib, name)
        loss.sum().backward()
        return (loss,) + tuple(t.grad for t in leaves)
    _same(run, rtol=1e-9)
