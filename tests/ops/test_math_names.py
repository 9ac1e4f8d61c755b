"""PyTorch's math functions that issue 37 adds (special_math.py, statistics_extra.py,
windows.py, linalg_solvers.py), against PyTorch: values and dtypes in float32 and float64
(and integers where PyTorch takes them), gradients where PyTorch differentiates, errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zero
from tests.ops.torch_oracle import check_against_torch

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
FLOATS = ("float32", "float64")


def u(shape, lo=-2.0, hi=2.0, dtype="float64"):
    return rng.uniform(lo, hi, shape).astype(dtype)


def ints(shape, lo=-20, hi=20):
    return rng.integers(lo, hi, shape).astype(np.int64)


# -- elementwise ------------------------------------------------------------------------------------

UNARY = {
    "deg2rad": (lambda lib, x: lib.deg2rad(x), (-400, 400)),
    "rad2deg": (lambda lib, x: lib.rad2deg(x), (-7, 7)),
    "sinc": (lambda lib, x: lib.sinc(x), (-3, 3)),
    "logit": (lambda lib, x: lib.logit(x), (0.05, 0.95)),
    "logit eps": (lambda lib, x: lib.logit(x, 0.2), (0.0, 1.0)),
    "logit method": (lambda lib, x: x.logit(eps=0.1), (0.0, 1.0)),
    "mvlgamma p=1": (lambda lib, x: lib.mvlgamma(x, 1), (0.5, 6)),
    "mvlgamma p=3": (lambda lib, x: lib.mvlgamma(x, 3), (1.1, 6)),
    "mvlgamma method": (lambda lib, x: x.mvlgamma(2), (1.1, 6)),
    "polygamma 0": (lambda lib, x: lib.polygamma(0, x), (0.1, 8)),
    "polygamma 2": (lambda lib, x: lib.polygamma(2, x), (0.1, 8)),
    "polygamma 3 negative": (lambda lib, x: lib.polygamma(3, x), (-3.9, -0.1)),
    "polygamma method": (lambda lib, x: x.polygamma(4), (0.2, 30)),
    "isreal": (lambda lib, x: lib.isreal(x), (-1, 1)),
    "i0": (lambda lib, x: lib.i0(x), (-25, 25)),
    "i0 method": (lambda lib, x: x.i0(), (-3, 3)),
    "frexp": (lambda lib, x: lib.frexp(x), (-1e6, 1e6)),
    "frexp method": (lambda lib, x: x.frexp(), (-1e-3, 1e-3)),
    "msort": (lambda lib, x: lib.msort(x), (-1, 1)),
    "deg2rad method": (lambda lib, x: x.deg2rad(), (-400, 400)),
    "rad2deg method": (lambda lib, x: x.rad2deg(), (-7, 7)),
    "sinc method": (lambda lib, x: x.sinc(), (-3, 3)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype):
    fn, (lo, hi) = UNARY[name]
    x = u((3, 4), lo, hi, dtype)
    check_against_torch(fn, [x], context=name, rtol=2e-5 if dtype == "float32" else 1e-9)


def test_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, 0.75, -3.0, 1e-40, 3.4e38, 2.0 ** -126],
                 np.float32)
    check_against_torch(lambda lib, t: lib.frexp(t), [x], grad=False)
    check_against_torch(lambda lib, t: lib.sinc(t), [np.array([0.0, 1.0, -2.0, 0.5], np.float32)])
    check_against_torch(lambda lib, t: lib.logit(t), [np.array([0.0, 1.0, 0.5, 2.0], np.float64)])
    check_against_torch(lambda lib, t: lib.polygamma(1, t), [np.array([0.3, 1.5, 4.0, 7.2], np.float64)],
                        rtol=1e-8)   # (PyTorch's trigamma is good to about 1e-10)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "sinc", "logit", "isreal", "msort"])
def test_unary_of_integers(name):
    check_against_torch(lambda lib, x: getattr(lib, name)(x), [np.array([[0, 1, 2], [-1, 3, 180]], np.int64)])


BINARY = {
    "logaddexp2": (lambda lib, a, b: lib.logaddexp2(a, b), True),
    "logaddexp2 method": (lambda lib, a, b: a.logaddexp2(b), True),
    "float_power": (lambda lib, a, b: lib.float_power(lib.abs(a), b), True),
    "float_power scalar": (lambda lib, a, b: lib.float_power(lib.abs(a), 2.5), True),
    "float_power scalar base": (lambda lib, a, b: lib.float_power(2, b), True),
    "float_power method": (lambda lib, a, b: lib.abs(a).float_power(b), True),
    "ldexp": (lambda lib, a, b: lib.ldexp(a, b), True),
    "rsub": (lambda lib, a, b: lib.rsub(a, b), True),
    "rsub alpha": (lambda lib, a, b: lib.rsub(a, b, alpha=3), True),
    "rsub scalar": (lambda lib, a, b: lib.rsub(a, 2.0), True),
    "xlogy": (lambda lib, a, b: lib.xlogy(a, lib.abs(b)), True),
    "inner": (lambda lib, a, b: lib.inner(a, b), True),
    "inner method": (lambda lib, a, b: a.inner(b[0]), True),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype):
    fn, _ = BINARY[name]
    a, b = u((3, 4), dtype=dtype), u((2, 1, 4), dtype=dtype)
    if name.startswith("inner"):
        b = u((2, 4), dtype=dtype)
    check_against_torch(fn, [a, b], context=name, rtol=2e-5 if dtype == "float32" else 1e-9)


def test_logaddexp2_infinities():
    a = np.array([-np.inf, np.inf, -np.inf, 1.0, np.nan], np.float32)
    b = np.array([-np.inf, np.inf, 3.0, -np.inf, 1.0], np.float32)
    check_against_torch(lambda lib, x, y: lib.logaddexp2(x, y), [a, b], grad=False)


def test_ldexp_with_integer_exponents():
    e = np.array([3, -2, 0, 10], np.int64)
    for dtype in ("float32", "float64", "float16"):   # (PyTorch's gradient is 2 ** e in integers, 0 for e < 0)
        check_against_torch(lambda lib, x, k: lib.ldexp(x, k), [u(4, dtype=dtype), e], grad=False)
    check_against_torch(lambda lib, x, k: lib.ldexp(x, k), [np.array([1, 2, 3, 4]), e])
    check_against_torch(lambda lib, x, k: x.ldexp(k), [u(4), e], grad=False)
    x = zero.tensor(u(4), requires_grad=True)
    zero.ldexp(x, zero.tensor(e)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 ** e)


def test_float_power_is_float64():
    for a in (np.array([2, 3], np.int64), np.array([2.0, 3.0], np.float32)):
        check_against_torch(lambda lib, x: lib.float_power(x, 2), [a])
        check_against_torch(lambda lib, x: lib.float_power(x, -1), [a])


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm(name):
    a, b = ints((4, 5)), ints((5,))
    a[0, 0] = b[0] = 0
    check_against_torch(lambda lib, x, y: getattr(lib, name)(x, y), [a, b])
    check_against_torch(lambda lib, x, y: getattr(x, name)(y), [a, b])
    check_against_torch(lambda lib, x, y: getattr(lib, name)(x, y),
                        [np.array([12, 7], np.int32), np.array([18, 21], np.int32)])
    with pytest.raises(RuntimeError):
        getattr(zero, name)(zero.tensor([1.0]), zero.tensor([2.0]))
    x = zero.tensor([12, 9])
    in_place = x.gcd_ if name == "gcd" else x.lcm_
    assert in_place(zero.tensor([8, 6])) is x
    assert x.tolist() == getattr(torch, name)(torch.tensor([12, 9]), torch.tensor([8, 6])).tolist()


def test_heaviside():
    x = np.array([-1.5, 0.0, 2.0, 0.0], np.float32)
    v = np.array([0.5, 0.25, 0.5, 1.0], np.float32)
    check_against_torch(lambda lib, a, b: lib.heaviside(a, b), [x, v], grad=False)
    check_against_torch(lambda lib, a, b: a.heaviside(b), [np.array([-2, 0, 3]), np.array([7, 7, 7])])
    with pytest.raises(RuntimeError, match="dtypes"):
        zero.heaviside(zero.tensor([1.0]), zero.tensor([1.0], dtype=zero.float64))


def test_isin():
    e = np.array([[1, 2, 3], [4, 5, 6]])
    t = np.array([2, 6, 9])
    for kwargs in ({}, {"invert": True}, {"assume_unique": True}):
        check_against_torch(lambda lib, a, b: lib.isin(a, b, **kwargs), [e, t])
    check_against_torch(lambda lib, a: lib.isin(a, 5), [e])
    check_against_torch(lambda lib, b: lib.isin(6, b), [t])
    check_against_torch(lambda lib, a, b: lib.isin(a, b), [u(5, dtype="float32"), np.zeros(0, np.float32)])
    with pytest.raises(TypeError):
        zero.isin(1, 2)


@pytest.mark.parametrize("name", ["sinc", "logit", "logaddexp2", "polygamma", "deg2rad", "i0"])
def test_half_precision_computed_in_float32(name):
    x = np.array([0.25, 0.5, 1.0, 2.0, 3.0], np.float16)
    calls = {"logaddexp2": lambda lib, t: lib.logaddexp2(t, t * 2), "polygamma": lambda lib, t: lib.polygamma(2, t),
             "logit": lambda lib, t: lib.logit(t / 4)}
    check_against_torch(calls.get(name, lambda lib, t: getattr(lib, name)(t)), [x], grad=False, rtol=2e-3,
                        atol=1e-3)


def test_angle():
    x = np.array([-1.5, 0.0, -0.0, 2.0, np.nan, -np.inf, np.inf])
    for dtype in FLOATS:
        check_against_torch(lambda lib, t: lib.angle(t), [x.astype(dtype)])
        check_against_torch(lambda lib, t: t.angle(), [x.astype(dtype)])
    check_against_torch(lambda lib, t: lib.angle(t), [np.array([-3, 0, 4])])


@pytest.mark.parametrize("dtype", FLOATS)
def test_gradient(dtype):
    tol = 2e-5 if dtype == "float32" else 1e-10
    y = u((4, 6), dtype=dtype)
    for edge_order in (1, 2):
        check_against_torch(lambda lib, t: lib.gradient(t, edge_order=edge_order), [y], rtol=tol, atol=tol)
        check_against_torch(lambda lib, t: lib.gradient(t, dim=1, edge_order=edge_order), [y], rtol=tol, atol=tol)
        check_against_torch(lambda lib, t: lib.gradient(t, spacing=0.5, dim=-1, edge_order=edge_order), [y],
                            rtol=tol, atol=tol)
        check_against_torch(lambda lib, t: lib.gradient(t, spacing=[2.0, 0.25], edge_order=edge_order), [y],
                            rtol=tol, atol=tol)
        coords0, coords1 = np.cumsum(u(4, 0.1, 1, dtype)), np.cumsum(u(6, 0.1, 1, dtype))
        check_against_torch(lambda lib, t, c0, c1: lib.gradient(t, spacing=(c0, c1), edge_order=edge_order),
                            [y, coords0.astype(dtype), coords1.astype(dtype)], rtol=tol, atol=tol, grad=False)
        check_against_torch(lambda lib, t, c1: lib.gradient(t, spacing=[c1], dim=1, edge_order=edge_order),
                            [y, coords1.astype(dtype)], rtol=tol, atol=tol, grad=False)
    check_against_torch(lambda lib, t: lib.gradient(t), [np.array([1, 4, 9, 16, 25])])
    with pytest.raises(RuntimeError):
        zero.gradient(zero.ones(2, 4), edge_order=2)
    with pytest.raises(RuntimeError):
        zero.gradient(zero.ones(3, 4), spacing=[1.0, 2.0, 3.0])


def test_i0_edges():
    x = np.array([0.0, 19.99, 20.0, -20.0, 100.0, 700.0, np.inf, -np.inf, np.nan])
    check_against_torch(lambda lib, t: lib.i0(t), [x], grad=False)
    check_against_torch(lambda lib, t: lib.i0(t), [x.astype(np.float32)], grad=False)
    check_against_torch(lambda lib, t: lib.i0(t), [np.array([0, 1, -4])])


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter(dtype):
    a = np.array([0.0, 1.0, 1.0, -1.0, np.inf, 1.0, np.nan, 0.0, -0.0, 3.5, -2.0], dtype)
    b = np.array([-1.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, np.inf, -np.inf], dtype)
    check_against_torch(lambda lib, x, y: lib.nextafter(x, y), [a, b], grad=False)
    check_against_torch(lambda lib, x, y: x.nextafter(y), [a.reshape(1, -1), b.reshape(1, -1)], grad=False)
    z = zero.tensor(a[:4])
    assert z.nextafter_(zero.tensor(b[:4])) is z
    np.testing.assert_array_equal(z.numpy(), np.nextafter(a[:4], b[:4]))
    with pytest.raises(RuntimeError):
        zero.nextafter(zero.tensor([1.0]), zero.tensor([1.0], dtype=zero.float64))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma(name):
    a = np.array([0.5, 2.0, 0.0, 3.0, 10.0, 0.1, 50.0, 1.0, 5.0, 2.0, 3.0, -1.0, 0.0])
    x = np.array([1.0, 0.0, 1.0, 2.5, 12.0, 0.01, 40.0, 100.0, 1e-3, np.inf, 3.9, 1.0, 0.0])
    # (PyTorch's P(50, 40) is 9e-11 off the exact 0.0703350666593949544; Zero's within 1e-15)
    check_against_torch(lambda lib, s, t: getattr(lib, name)(s, t), [a, x], grad=False, rtol=1e-9, atol=1e-9)
    check_against_torch(lambda lib, s, t: getattr(lib, name)(s, t), [a.astype(np.float32), x.astype(np.float32)],
                        grad=False)
    check_against_torch(lambda lib, s, t: getattr(s, name)(t), [u((2, 3), 0.1, 5), u(3, 0.1, 5)], grad=False,
                        rtol=1e-9)
    # the gradient in x (PyTorch has none in a)
    s, t = u((2, 3), 0.5, 6), u((2, 3), 0.1, 8)
    zt, tt = zero.tensor(t, requires_grad=True), torch.tensor(t, requires_grad=True)
    getattr(zero, name)(zero.tensor(s), zt).sum().backward()
    getattr(torch, name)(torch.tensor(s), tt).sum().backward()
    np.testing.assert_allclose(zt.grad.numpy(), tt.grad.numpy(), rtol=1e-9)
    z = zero.tensor(s)
    assert getattr(z, name + "_")(zero.tensor(t)) is z
    np.testing.assert_allclose(z.numpy(), getattr(torch, name)(torch.tensor(s), torch.tensor(t)).numpy(), rtol=1e-9)
    z = zero.tensor(s)
    in_place = z.igamma_ if name == "igamma" else z.igammac_
    assert in_place(zero.tensor(t)) is z


def test_i0_in_place():
    z = zero.tensor([0.5, 1.5])
    assert z.i0_() is z
    np.testing.assert_allclose(z.numpy(), torch.i0(torch.tensor([0.5, 1.5])).numpy(), rtol=1e-6)


def test_poisson_binomial():
    rates = zero.tensor([0.0, 0.5, 3.0, 40.0] * 500)
    g = zero.Generator().manual_seed(7)
    draws = zero.poisson(rates, generator=g)
    assert draws.dtype is zero.float32 and draws.shape == rates.shape
    values = draws.numpy().reshape(500, 4)
    assert (values >= 0).all() and (values == np.round(values)).all() and (values[:, 0] == 0).all()
    np.testing.assert_allclose(values.mean(0), [0.0, 0.5, 3.0, 40.0], rtol=0.1, atol=0.05)
    np.testing.assert_allclose(values.var(0), [0.0, 0.5, 3.0, 40.0], rtol=0.2, atol=0.05)
    again = zero.poisson(rates, generator=zero.Generator().manual_seed(7))
    np.testing.assert_array_equal(again.numpy(), draws.numpy())   # the same seed, the same draws
    count = zero.tensor([10.0, 5.0, 0.0, 20.0] * 500, dtype=zero.float64)
    prob = zero.tensor([0.5, 1.0, 0.3, 0.1] * 500, dtype=zero.float64)
    zero.manual_seed(3)
    b = zero.binomial(count, prob)
    assert b.dtype is zero.float64
    values = b.numpy().reshape(500, 4)
    assert (values <= count.numpy().reshape(500, 4)).all() and (values[:, 1] == 5).all() and (values[:, 2] == 0).all()
    np.testing.assert_allclose(values.mean(0), [5.0, 5.0, 0.0, 2.0], rtol=0.1)
    zero.manual_seed(3)
    np.testing.assert_array_equal(zero.binomial(count, prob).numpy(), b.numpy())
    with pytest.raises(RuntimeError):
        zero.poisson(zero.tensor([-1.0]))
    with pytest.raises(NotImplementedError):
        zero.poisson(zero.tensor([1, 2]))
    with pytest.raises(ValueError):
        zero.binomial(zero.tensor([10, 5]), zero.tensor([0.5, 1.0]))
    # PyTorch refuses the same
    with pytest.raises(ValueError):
        torch.binomial(torch.tensor([10, 5]), torch.tensor([0.5, 1.0]))


def test_errors_of_the_special_functions():
    with pytest.raises(RuntimeError):
        zero.frexp(zero.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="greater than"):
        zero.mvlgamma(zero.tensor([0.5]), 3)
    with pytest.raises(RuntimeError):
        zero.polygamma(-1, zero.tensor([1.0]))


def test_in_place_methods():
    for name, args in (("deg2rad_", ()), ("rad2deg_", ()), ("sinc_", ()), ("logit_", ()), ("mvlgamma_", (1,)),
                       ("polygamma_", (2,)), ("float_power_", (2,)), ("ldexp_", ("e",)), ("heaviside_", ("v",))):
        base = np.array([0.25, 0.5, 0.75], np.float64)
        zx, tx = zero.tensor(base), torch.tensor(base)
        zargs = [zero.tensor([1, 2, 3]) if a == "e" else zero.tensor(base) if a == "v" else a for a in args]
        targs = [torch.tensor([1, 2, 3]) if a == "e" else torch.tensor(base) if a == "v" else a for a in args]
        assert getattr(zx, name)(*zargs) is zx
        getattr(tx, name)(*targs)
        np.testing.assert_allclose(zx.numpy(), tx.numpy(), rtol=1e-12, err_msg=name)
    with pytest.raises(RuntimeError):
        zero.tensor([1.0, 2.0]).float_power_(2)   # float32 cannot hold float_power's float64


# -- products and statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_products(dtype):
    check_against_torch(lambda lib, i, a, b: lib.addbmm(i, a, b), [u((3, 2), dtype=dtype), u((4, 3, 5), dtype=dtype),
                                                                 u((4, 5, 2), dtype=dtype)])
    check_against_torch(lambda lib, i, a, b: i.addbmm(a, b, beta=0.5, alpha=2),
                        [u((3, 2), dtype=dtype), u((4, 3, 5), dtype=dtype), u((4, 5, 2), dtype=dtype)])
    check_against_torch(lambda lib, i, a, b: lib.addr(i, a, b, alpha=3),
                        [u((3, 4), dtype=dtype), u(3, dtype=dtype), u(4, dtype=dtype)])
    check_against_torch(lambda lib, i, a, b: i.addr(a, b),
                        [u((3, 4), dtype=dtype), u(3, dtype=dtype), u(4, dtype=dtype)])
    check_against_torch(lambda lib, a, b: lib.inner(a, b), [u((2, 3, 4), dtype=dtype), u((5, 4), dtype=dtype)])
    check_against_torch(lambda lib, a, b: lib.inner(a, b), [u((), dtype=dtype), u((5, 4), dtype=dtype)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_against_torch(lambda lib, a, b, c: lib.chain_matmul(a, b, c),
                            [u((2, 3), dtype=dtype), u((3, 4), dtype=dtype), u((4, 2), dtype=dtype)])
        check_against_torch(lambda lib, a: lib.chain_matmul(a), [u((2, 3), dtype=dtype)])


def test_products_in_place():
    i, a, b = u((3, 2)), u((4, 3, 5)), u((4, 5, 2))
    zi, ti = zero.tensor(i), torch.tensor(i)
    assert zi.addbmm_(zero.tensor(a), zero.tensor(b), alpha=2) is zi
    ti.addbmm_(torch.tensor(a), torch.tensor(b), alpha=2)
    np.testing.assert_allclose(zi.numpy(), ti.numpy(), rtol=1e-12)
    i, a, b = u((3, 4)), u(3), u(4)
    zi, ti = zero.tensor(i), torch.tensor(i)
    assert zi.addr_(zero.tensor(a), zero.tensor(b), beta=0.5) is zi
    ti.addr_(torch.tensor(a), torch.tensor(b), beta=0.5)
    np.testing.assert_allclose(zi.numpy(), ti.numpy(), rtol=1e-12)


def test_product_errors():
    with pytest.raises(RuntimeError):
        zero.addbmm(zero.ones(3, 2), zero.ones(4, 3, 5), zero.ones(3, 5, 2))
    with pytest.raises(RuntimeError):
        zero.addr(zero.ones(3, 4), zero.ones(3, 1), zero.ones(4))
    with pytest.raises(RuntimeError):
        zero.inner(zero.ones(3), zero.ones(4))


def test_addmv_in_place():
    a, m, v = u(3), u((3, 4)), u(4)
    za, ta = zero.tensor(a), torch.tensor(a)
    assert zero.addmv_(za, zero.tensor(m), zero.tensor(v), beta=2) is za
    torch.addmv_(ta, torch.tensor(m), torch.tensor(v), beta=2)
    np.testing.assert_allclose(za.numpy(), ta.numpy(), rtol=1e-12)


def test_adjoint_views():
    x = u((2, 3, 4))
    check_against_torch(lambda lib, t: lib.adjoint(t), [x])
    check_against_torch(lambda lib, t: t.adjoint(), [x])
    check_against_torch(lambda lib, t: t.mH, [x])
    check_against_torch(lambda lib, t: t.H, [x[0]])
    z = zero.tensor(x)
    for view in (zero.adjoint(z), z.mH, z[0].H):
        view.zero_()
    assert not z.numpy().any()   # views: writing into them wrote into z
    for fn in (lambda t: t.H, lambda t: t.mH, lambda t: t.adjoint()):
        with pytest.raises(RuntimeError):
            fn(zero.ones(3))
    with pytest.raises(RuntimeError, match="mH"):
        zero.ones(2, 3, 4).H


@pytest.mark.parametrize("dtype", FLOATS)
def test_cov_corrcoef(dtype):
    x = u((3, 6), dtype=dtype)
    fw = np.array([1, 2, 1, 3, 1, 1])
    aw = u(6, 0.1, 1.0, dtype=dtype)
    check_against_torch(lambda lib, t: lib.cov(t), [x])
    check_against_torch(lambda lib, t: lib.cov(t, correction=0), [x])
    check_against_torch(lambda lib, t: lib.cov(t, correction=2), [x[0]])
    check_against_torch(lambda lib, t, f: lib.cov(t, fweights=f), [x, fw])
    check_against_torch(lambda lib, t, a: lib.cov(t, aweights=a), [x, aw])
    check_against_torch(lambda lib, t, f, a: t.cov(fweights=f, aweights=a, correction=1), [x, fw, aw])
    check_against_torch(lambda lib, t, f, a: lib.cov(t, fweights=f, aweights=a, correction=0), [x, fw, aw])
    check_against_torch(lambda lib, t: lib.corrcoef(t), [x])
    check_against_torch(lambda lib, t: t.corrcoef(), [x[:2]])
    check_against_torch(lambda lib, t: lib.corrcoef(t), [x[0]])
    check_against_torch(lambda lib, t: lib.cov(t), [x[:1]])
    check_against_torch(lambda lib, t: lib.corrcoef(t), [x[:1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_against_torch(lambda lib, t: lib.cov(t, correction=6), [x], grad=False)
        check_against_torch(lambda lib, t: lib.cov(t), [np.zeros((2, 0), dtype)], grad=False)
    check_against_torch(lambda lib, t: lib.cov(t), [np.array([[1, 2, 4], [1, 0, 5]])])
    with pytest.raises(RuntimeError):
        zero.cov(zero.ones(2, 2, 2))
    with pytest.raises(RuntimeError):
        zero.cov(zero.ones(2, 3), fweights=zero.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError):
        zero.cov(zero.ones(2, 3), aweights=zero.tensor([1.0, 2.0]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid(name, dtype):
    y = u((3, 5), dtype=dtype)
    xs = np.sort(u(5, dtype=dtype))
    xfull = np.sort(u((3, 5), dtype=dtype), axis=1)
    check_against_torch(lambda lib, t: getattr(lib, name)(t), [y])
    check_against_torch(lambda lib, t: getattr(lib, name)(t, dim=0), [y])
    check_against_torch(lambda lib, t, s: getattr(lib, name)(t, s), [y, xs])
    check_against_torch(lambda lib, t, s: getattr(lib, name)(t, s, dim=1), [y, xfull])
    if name != "trapz":
        check_against_torch(lambda lib, t: getattr(lib, name)(t, dx=0.5), [y])
    check_against_torch(lambda lib, t: getattr(lib, name)(t), [np.array([1, 2, 4])])
    check_against_torch(lambda lib, t: getattr(lib, name)(t), [np.zeros((2, 0), dtype)])


def test_trapz_with_dx():
    y = u((3, 5))
    assert np.allclose(zero.trapz(zero.tensor(y), dx=2.0).numpy(), torch.trapz(torch.tensor(y), dx=2.0).numpy())


def test_diagflat_vander_renorm():
    for offset in (0, 1, -2):
        check_against_torch(lambda lib, t: lib.diagflat(t, offset), [u((2, 2))])
        check_against_torch(lambda lib, t: t.diagflat(offset), [np.array([1, 2, 3])])
    for kwargs in ({}, {"N": 4}, {"increasing": True}, {"N": 1}, {"N": 0}):
        check_against_torch(lambda lib, t: lib.vander(t, **kwargs), [u(3)], grad=False)  # (PyTorch's fails)
        x = zero.tensor(u(3), requires_grad=True)
        n = kwargs.get("N", 3)
        if n <= 1:
            continue
        zero.vander(x, **kwargs).sum().backward()
        want = sum(k * x.detach().numpy() ** max(k - 1, 0) for k in range(1, n))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
        check_against_torch(lambda lib, t: lib.vander(t, **kwargs), [np.array([1, 2, 3])])
        check_against_torch(lambda lib, t: lib.vander(t, **kwargs), [np.array([1, 2, 3], np.int32)])
    x = u((3, 4))
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 0.5), (3, -1, 100.0)):
        check_against_torch(lambda lib, t: lib.renorm(t, p, dim, maxnorm), [x])
        check_against_torch(lambda lib, t: t.renorm(p, dim, maxnorm), [x.astype(np.float32)])
    z = zero.tensor(x)
    assert z.renorm_(2, 0, 1.0) is z
    np.testing.assert_allclose(z.numpy(), torch.tensor(x).renorm(2, 0, 1.0).numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError):
        zero.renorm(zero.ones(3), 2, 0, 1.0)


def test_unravel_index():
    for shape in ((3, 4), (2, 3, 4), 7, (5,)):
        n = int(np.prod(shape))
        check_against_torch(lambda lib, t: lib.unravel_index(t, shape), [np.array([[0, n - 1], [3, 5 % n]])])
    check_against_torch(lambda lib, t: lib.unravel_index(t, (3, 4)), [np.array(7)])
    check_against_torch(lambda lib, t: lib.unravel_index(t, (3, 4)), [np.array([-1, -12])])
    with pytest.raises(ValueError):
        zero.unravel_index(zero.tensor([12]), (3, 4))
    with pytest.raises(TypeError):
        zero.unravel_index(zero.tensor([1.0]), (3, 4))


def test_unique_consecutive():
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    for kwargs in ({}, {"return_inverse": True}, {"return_counts": True},
                   {"return_inverse": True, "return_counts": True}):
        check_against_torch(lambda lib, t: lib.unique_consecutive(t, **kwargs), [x])
        check_against_torch(lambda lib, t: t.unique_consecutive(**kwargs), [x.reshape(2, 4)])
        m = np.array([[1, 1], [1, 1], [2, 3], [2, 3], [1, 1]])
        check_against_torch(lambda lib, t: lib.unique_consecutive(t, dim=0, **kwargs), [m])
        check_against_torch(lambda lib, t: lib.unique_consecutive(t, dim=1, **kwargs), [m.T.copy()])
        check_against_torch(lambda lib, t: lib.unique_consecutive(t, **kwargs), [np.zeros(0, np.float32)],
                            grad=False)
    check_against_torch(lambda lib, t: lib.unique_consecutive(t), [np.array([0.5, 0.5, 1.5], np.float32)],
                        grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_histogram(dtype):
    x = u((4, 5), dtype=dtype)
    w = u((4, 5), 0.0, 1.0, dtype=dtype)
    edges = np.array([-2.0, -0.5, 0.0, 1.0, 1.5], dtype)
    for kwargs in ({}, {"density": True}, {"range": (-1.0, 1.0)}):
        check_against_torch(lambda lib, t: lib.histogram(t, 6, **kwargs), [x], grad=False)
        check_against_torch(lambda lib, t, ww: lib.histogram(t, 3, weight=ww, **kwargs), [x, w], grad=False)
        check_against_torch(lambda lib, t, e: lib.histogram(t, e, density=True), [x, edges], grad=False)
    check_against_torch(lambda lib, t, e: t.histogram(e), [x, edges], grad=False)
    check_against_torch(lambda lib, t: lib.histogram(t, 4), [np.full(5, 2.0, dtype)], grad=False)
    with pytest.raises(RuntimeError):
        zero.histogram(zero.tensor([1, 2]), 3)


@pytest.mark.parametrize("dtype", FLOATS)
def test_histogramdd(dtype):
    points = u((2, 6, 3), dtype=dtype)
    w = u((2, 6), 0.0, 1.0, dtype=dtype)
    for kwargs in ({}, {"density": True}, {"range": [-1.0, 1.0, -2.0, 0.0, 0.0, 2.0]}):
        check_against_torch(lambda lib, t: lib.histogramdd(t, 3, **kwargs), [points], grad=False)
        check_against_torch(lambda lib, t, ww: lib.histogramdd(t, [2, 3, 4], weight=ww, **kwargs), [points, w],
                            grad=False)
    e0, e1 = np.array([-2.0, 0.0, 2.0], dtype), np.array([-1.0, 0.5], dtype)
    check_against_torch(lambda lib, t, a, b: lib.histogramdd(t, [a, b], density=True), [points[0, :, :2], e0, e1],
                        grad=False)
    check_against_torch(lambda lib, t: lib.histogramdd(t, 2), [np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]], dtype)],
                        grad=False)
    with pytest.raises(RuntimeError):
        zero.histogramdd(zero.ones(4, 2), [2, 2, 2])
    with pytest.raises(RuntimeError):
        zero.histogramdd(zero.ones(4), 2)


def test_norms():
    x = u((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_against_torch(lambda lib, t: lib.frobenius_norm(t, (0, 1)), [x])
        check_against_torch(lambda lib, t: lib.frobenius_norm(t, (1,), True), [x])
        check_against_torch(lambda lib, t: lib.nuclear_norm(t), [x])
        check_against_torch(lambda lib, t: lib.nuclear_norm(t, True), [x])
        check_against_torch(lambda lib, t: lib.nuclear_norm(t, (1, 2)), [u((2, 3, 4))])
    for p, dim in ((2, 0), (2, 1), (3, 1), (2, -1)):
        check_against_torch(lambda lib, t: lib.norm_except_dim(t, p, dim), [x])


# -- windows ---------------------------------------------------------------------------------------------

WINDOWS = {
    "bartlett_window": {}, "blackman_window": {}, "hann_window": {}, "hamming_window": {},
    "kaiser_window": {},
}


@pytest.mark.parametrize("name", list(WINDOWS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_windows(name, dtype):
    f, t = getattr(zero, name), getattr(torch, name)
    for length in (0, 1, 2, 5, 8, 33):
        for periodic in (True, False):
            extra: tuple = ()
            if name == "hamming_window":
                extra = (0.6, 0.3)
            elif name == "kaiser_window":
                extra = (5.0,)
            for args in ((), extra):
                got = f(length, periodic, *args, dtype=getattr(zero, dtype))
                want = t(length, periodic, *args, dtype=getattr(torch, dtype))
                assert got.dtype.name == dtype and got.shape == tuple(want.shape)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0,
                                           atol=1e-6 if dtype == "float32" else 1e-13)
    assert f(4).dtype is zero.float32 and f(4, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        f(4, dtype=zero.int64)
    with pytest.raises(RuntimeError):
        f(-1)


# -- linear algebra ------------------------------------------------------------------------------------------


def _spd(n, dtype="float64", batch=()):
    a = u(batch + (n, n), dtype=dtype)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_solve_and_inverse(dtype):
    tol = 1e-4 if dtype == "float32" else 1e-9
    lower = np.linalg.cholesky(_spd(3, dtype, (2,))).astype(dtype)
    b = u((2, 3, 2), dtype=dtype)
    upper = np.swapaxes(lower, -1, -2).copy()
    check_against_torch(lambda lib, B, L: lib.cholesky_solve(B, L), [b, lower], rtol=tol)
    check_against_torch(lambda lib, B, L: lib.cholesky_solve(B, L, True), [b, upper], rtol=tol)
    check_against_torch(lambda lib, B, L: B.cholesky_solve(L), [b[0], lower[0]], rtol=tol)
    check_against_torch(lambda lib, L: lib.cholesky_inverse(L), [lower[0]], rtol=tol)
    check_against_torch(lambda lib, L: lib.cholesky_inverse(L, upper=True), [upper], rtol=tol)
    check_against_torch(lambda lib, L: L.cholesky_inverse(), [lower], rtol=tol)
    with pytest.raises(RuntimeError):
        zero.cholesky_solve(zero.ones(4, 2), zero.eye(3))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.filterwarnings("ignore:torch.lu")
def test_lu_family(dtype):
    tol = 1e-4 if dtype == "float32" else 1e-9
    a = u((2, 4, 4), dtype=dtype) + 3 * np.eye(4, dtype=dtype)
    b = u((2, 4, 3), dtype=dtype)
    check_against_torch(lambda lib, A: lib.lu(A), [a], rtol=tol)
    check_against_torch(lambda lib, A: A.lu(get_infos=True), [a], rtol=tol)
    check_against_torch(lambda lib, A, B: lib.lu_solve(B, *lib.linalg.lu_factor(A)), [a, b], rtol=tol)
    check_against_torch(lambda lib, A, B: B.lu_solve(*A.lu()), [a, b], rtol=tol)
    for shape in ((4, 4), (5, 3), (3, 5), (2, 4, 4)):
        m = u(shape, dtype=dtype)
        check_against_torch(lambda lib, A: lib.lu_unpack(*lib.linalg.lu_factor(A)), [m], rtol=tol)
        check_against_torch(lambda lib, A: lib.lu_unpack(*lib.linalg.lu_factor(A), unpack_pivots=False), [m],
                            rtol=tol)
        check_against_torch(lambda lib, A: lib.lu_unpack(*lib.linalg.lu_factor(A), unpack_data=False)[0], [m],
                            rtol=tol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.filterwarnings("ignore:torch.triangular_solve")
def test_triangular_solve(dtype):
    tol = 1e-4 if dtype == "float32" else 1e-9
    a = u((2, 3, 3), dtype=dtype) + 4 * np.eye(3, dtype=dtype)
    b = u((2, 3, 2), dtype=dtype)
    for upper in (True, False):
        for transpose in (False, True):
            for unitriangular in (False, True):
                check_against_torch(lambda lib, B, A: lib.triangular_solve(B, A, upper, transpose, unitriangular),
                                    [b, a], rtol=tol)
    check_against_torch(lambda lib, B, A: B.triangular_solve(A), [b[0], a], rtol=tol)
    with pytest.raises(RuntimeError):
        zero.triangular_solve(zero.ones(4, 2), zero.eye(3))


@pytest.mark.parametrize("dtype", FLOATS)
def test_geqrf(dtype):
    tol = 1e-4 if dtype == "float32" else 1e-10
    for shape in ((4, 3), (3, 3), (3, 5), (2, 4, 3), (0, 3), (2, 0, 0)):
        check_against_torch(lambda lib, A: lib.geqrf(A), [u(shape, dtype=dtype)], grad=False, rtol=tol, atol=tol)
        check_against_torch(lambda lib, A: A.geqrf(), [u(shape, dtype=dtype)], grad=False, rtol=tol, atol=tol)
    a = zero.tensor(u((5, 3), dtype=dtype))
    q = zero.orgqr(*zero.geqrf(a))   # the reflectors make Q; Q R is a
    r = zero.geqrf(a).a[:3].triu()
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), rtol=tol, atol=tol)
    with pytest.raises(RuntimeError):
        zero.geqrf(zero.tensor([[1, 2], [3, 4]]))


def test_deprecation_warnings_as_pytorch():
    a = zero.eye(3) * 2
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        lu, pivots = zero.lu(a)
    with pytest.warns(UserWarning, match="lu_solve is deprecated"):
        zero.lu_solve(zero.ones(3, 1), lu, pivots)
    with pytest.warns(UserWarning, match="triangular_solve is deprecated"):
        zero.triangular_solve(zero.ones(3, 1), a)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        zero.chain_matmul(a, a)


@pytest.mark.parametrize("dtype", FLOATS)
def test_orgqr_ormqr(dtype):
    tol = 1e-4 if dtype == "float32" else 1e-9
    for m, n in ((4, 3), (3, 3)):
        a = u((m, n), dtype=dtype)
        h, tau = torch.geqrf(torch.tensor(a))
        h, tau = h.numpy(), tau.numpy()
        check_against_torch(lambda lib, H, T: lib.orgqr(H, T), [h, tau], rtol=tol)
        check_against_torch(lambda lib, H, T: H.orgqr(T), [h, tau], rtol=tol)
        for left in (True, False):
            for transpose in (False, True):
                other = u((m, 2) if left else (2, m), dtype=dtype)
                check_against_torch(lambda lib, H, T, C: lib.ormqr(H, T, C, left, transpose), [h, tau, other],
                                    rtol=tol)
        check_against_torch(lambda lib, H, T, C: H.ormqr(T, C), [h, tau, u((m, 2), dtype=dtype)], rtol=tol)


# -- on another device (the GPU under ZERO_TEST_DEVICE=cuda; "cuda" played by the CPU elsewhere) ----------

ON_DEVICE = {
    "deg2rad": lambda x, y, i, s: zero.deg2rad(x), "sinc": lambda x, y, i, s: zero.sinc(x),
    "logit": lambda x, y, i, s: zero.logit(x, 0.1), "heaviside": lambda x, y, i, s: zero.heaviside(x - 0.5, y),
    "logaddexp2": lambda x, y, i, s: zero.logaddexp2(x, y), "rsub": lambda x, y, i, s: zero.rsub(x, y, alpha=2),
    "float_power": lambda x, y, i, s: zero.float_power(x, 2), "ldexp": lambda x, y, i, s: zero.ldexp(x, i),
    "gcd": lambda x, y, i, s: zero.gcd(i, i + 4), "lcm": lambda x, y, i, s: zero.lcm(i, i + 4),
    "frexp": lambda x, y, i, s: zero.frexp(x), "isin": lambda x, y, i, s: zero.isin(i, i[:1]),
    "isreal": lambda x, y, i, s: zero.isreal(x), "mvlgamma": lambda x, y, i, s: zero.mvlgamma(x + 1, 2),
    "polygamma": lambda x, y, i, s: zero.polygamma(2, x), "i0": lambda x, y, i, s: zero.i0(x * 30),
    "nextafter": lambda x, y, i, s: zero.nextafter(x, y), "igamma": lambda x, y, i, s: zero.igamma(x, y),
    "igammac": lambda x, y, i, s: zero.igammac(x, y * 10),
    "addbmm": lambda x, y, i, s: zero.addbmm(s, s.expand(2, 3, 3), s.expand(2, 3, 3)),
    "addr": lambda x, y, i, s: zero.addr(s, x[0, :3], y[0, :3]), "inner": lambda x, y, i, s: zero.inner(x, y),
    "cov": lambda x, y, i, s: zero.cov(x, aweights=y[0], fweights=i[0].abs()),
    "corrcoef": lambda x, y, i, s: zero.corrcoef(x), "trapezoid": lambda x, y, i, s: zero.trapezoid(x, y[0]),
    "cumulative_trapezoid": lambda x, y, i, s: zero.cumulative_trapezoid(x, dx=0.5),
    "diagflat": lambda x, y, i, s: zero.diagflat(x), "msort": lambda x, y, i, s: zero.msort(x),
    "vander": lambda x, y, i, s: zero.vander(x[0], 3), "renorm": lambda x, y, i, s: zero.renorm(x, 2, 0, 0.5),
    "unravel_index": lambda x, y, i, s: zero.unravel_index(i.abs(), (5, 5)),
    "unique_consecutive": lambda x, y, i, s: zero.unique_consecutive(i // 3, return_inverse=True,
                                                                     return_counts=True),
    "histogram": lambda x, y, i, s: zero.histogram(x, 3, weight=y),
    "nuclear_norm": lambda x, y, i, s: zero.nuclear_norm(x),
    "norm_except_dim": lambda x, y, i, s: zero.norm_except_dim(x, 2, 1),
    "cholesky_solve": lambda x, y, i, s: zero.cholesky_solve(x, s.tril() + 2 * zero.eye(3, device=s.device)),
    "triangular_solve": lambda x, y, i, s: zero.triangular_solve(x, s + zero.eye(3, device=s.device)),
    "lu_unpack": lambda x, y, i, s: zero.lu_unpack(*zero.lu(s)),
    "lu_solve": lambda x, y, i, s: zero.lu_solve(x, *zero.lu(s + zero.eye(3, device=s.device))),
    "ormqr": lambda x, y, i, s: zero.ormqr(s, x[0, :2], x), "geqrf": lambda x, y, i, s: zero.geqrf(x.t()),
}


@pytest.mark.filterwarnings("ignore:torch.lu", "ignore:torch.triangular_solve")   # (deprecated, as PyTorch's)
@pytest.mark.parametrize("name", list(ON_DEVICE))
def test_on_another_device(name, second_device):
    arrays = [u((3, 5), 0.1, 0.9), u((3, 5), 0.1, 0.9), ints((3, 5)), u((3, 3), 0.1, 0.9)]
    here = ON_DEVICE[name](*[zero.tensor(a) for a in arrays])
    there = ON_DEVICE[name](*[zero.tensor(a, device=second_device) for a in arrays])
    here, there = (here, there) if isinstance(here, tuple) else ((here,), (there,))
    for h, t in zip(here, there):
        assert t.device == second_device and t.dtype is h.dtype
        np.testing.assert_allclose(t.cpu().numpy(), h.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["hann_window", "kaiser_window"])
def test_windows_on_another_device(name, second_device):
    w = getattr(zero, name)(6, device=second_device, dtype=zero.float64)
    assert w.device == second_device
    np.testing.assert_allclose(w.cpu().numpy(), getattr(torch, name)(6, dtype=torch.float64).numpy(), atol=1e-13)


def test_draws_on_another_device(second_device):
    rates = zero.tensor([1.0, 2.0], device=second_device)
    assert zero.poisson(rates).device == second_device
    assert zero.binomial(rates * 3, rates / 4).device == second_device
