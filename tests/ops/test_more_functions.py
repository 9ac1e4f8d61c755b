"""Issue 37's missing torch functions and Tensor conveniences, each against PyTorch: values,
dtypes, errors and gradients (tests/ops/torch_oracle.py)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import zero
from torch_oracle import check_against_torch

torch = pytest.importorskip("torch")

rng = np.random.default_rng(37)
A = rng.standard_normal((3, 5)).astype(np.float32)
A64 = rng.standard_normal((4, 6))
NAN = np.float32(np.nan)
WITH_NAN = A.copy()
WITH_NAN[1, 2] = NAN
TIES = np.array([[3, 1, 1, 3, 2], [1, 2, 2, 5, 5], [4, 4, 4, 0, 0]], dtype=np.float32)
INTS = np.array([[3, 1, 1, 3], [-2, 7, 7, 0]], dtype=np.int64)


# -- scans ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("data,dim", [(A, 1), (A, 0), (TIES, 1), (WITH_NAN, 1), (INTS, 1), (A64, -1),
                                      (np.array(2.5, dtype=np.float32), 0)])
def test_cummax_cummin(name, data, dim):
    check_against_torch(lambda lib, x: getattr(lib, name)(x, dim), [data], context=name)
    check_against_torch(lambda lib, x: getattr(x, name)(dim), [data], context=name)


def test_cummax_nan_positions_and_bool():
    x = np.array([1, 3, 3, 2, np.nan, 5, np.nan, 1], dtype=np.float32)
    got = check_against_torch(lambda lib, t: lib.cummax(t, 0), [x])
    assert got[1].tolist() == [0, 1, 2, 2, 4, 4, 6, 6]
    check_against_torch(lambda lib, t: lib.cummin(t, 0), [np.array([True, False, True])])


@pytest.mark.parametrize("data,dim", [(A, 1), (A64, 0), (np.array([-1000.0, 0.0, 1.0, 2.0]), 0),
                                      (np.array([-np.inf, -np.inf, 0.0]), 0)])
def test_logcumsumexp(data, dim):
    check_against_torch(lambda lib, x: lib.logcumsumexp(x, dim), [data])
    check_against_torch(lambda lib, x: x.logcumsumexp(dim), [data], grad=False)


def test_logcumsumexp_refuses_integers():
    check_against_torch(lambda lib, x: lib.logcumsumexp(x, 0), [INTS])


@pytest.mark.parametrize("n,dim", [(1, -1), (2, 1), (1, 0), (3, 1), (0, 1), (7, 1)])
def test_diff(n, dim):
    check_against_torch(lambda lib, x: lib.diff(x, n, dim), [A])
    check_against_torch(lambda lib, x: x.diff(n, dim), [INTS])


def test_diff_prepend_append_and_bool():
    pre, app = rng.standard_normal((3, 2)), rng.standard_normal((3, 1))
    check_against_torch(lambda lib, x, p, a: lib.diff(x, 2, 1, prepend=p, append=a), [A64[:3, :4], pre, app])
    check_against_torch(lambda lib, x: lib.diff(x), [np.array([True, True, False, True])])
    check_against_torch(lambda lib, x: lib.diff(x), [np.array(1.0)])


# -- order statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize("k,dim,keepdim", [(1, 1, False), (3, 1, True), (2, 0, False), (5, -1, False)])
def test_kthvalue(k, dim, keepdim):
    check_against_torch(lambda lib, x: lib.kthvalue(x, k, dim, keepdim), [A])
    check_against_torch(lambda lib, x: x.kthvalue(k, dim, keepdim), [A64])


def test_kthvalue_out_of_range():
    check_against_torch(lambda lib, x: lib.kthvalue(x, 6, 1), [A])
    check_against_torch(lambda lib, x: lib.kthvalue(x, 0, 1), [A])


@pytest.mark.parametrize("dim,keepdim", [(1, False), (-1, True), (0, False)])
def test_mode(dim, keepdim):
    check_against_torch(lambda lib, x: lib.mode(x, dim, keepdim), [TIES])
    check_against_torch(lambda lib, x: x.mode(dim, keepdim), [INTS])


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True)])
def test_nanmedian(dim, keepdim):
    if dim is None:
        check_against_torch(lambda lib, x: lib.nanmedian(x), [WITH_NAN])
    else:
        check_against_torch(lambda lib, x: lib.nanmedian(x, dim, keepdim), [WITH_NAN])
        check_against_torch(lambda lib, x: x.nanmedian(dim, keepdim), [A64])


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), (None, True), (-1, True)])
def test_quantile_and_nanquantile(interpolation, dim, keepdim):
    qs = np.array([0.0, 0.25, 0.5, 0.9, 1.0], dtype=np.float32)
    for data in (A, WITH_NAN):
        for name in ("quantile", "nanquantile"):
            check_against_torch(lambda lib, x: getattr(lib, name)(x, 0.3, dim, keepdim, interpolation=interpolation),
                                [data], context=f"{name} {interpolation}")
            check_against_torch(lambda lib, x, q: getattr(x, name)(q, dim, keepdim, interpolation=interpolation),
                                [data, qs], context=f"{name} {interpolation}")


def test_quantile_errors():
    check_against_torch(lambda lib, x: lib.quantile(x, 1.5), [A])
    check_against_torch(lambda lib, x: lib.quantile(x, 0.5), [INTS])
    check_against_torch(lambda lib, x: lib.quantile(x, 0.5, interpolation="cubic"), [A])
    check_against_torch(lambda lib, x, q: lib.quantile(x, q), [A, np.ones((2, 2), np.float32) / 2])


# -- special functions, shifts, copysign ----------------------------------------------------------


SPECIAL = np.array([-3.5, -2.0, -1.0, -0.5, -1e-8, 0.0, 1e-8, 0.5, 1.0, 1.5, 2.0, 3.0, 7.25, 12.0, 30.0, 150.0,
                    np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_family_values(name):
    check_against_torch(lambda lib, x: getattr(lib, name)(x), [SPECIAL], grad=False, rtol=1e-12, atol=1e-10)
    check_against_torch(lambda lib, x: getattr(lib, name)(x), [SPECIAL.astype(np.float32)], grad=False)
    check_against_torch(lambda lib, x: getattr(x, name)(), [INTS], grad=False)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_family_gradients(name):
    smooth = np.array([-2.5, -0.3, 0.2, 0.9, 1.7, 4.0, 11.0, 25.0])
    check_against_torch(lambda lib, x: getattr(lib, name)(x), [smooth], rtol=1e-8, atol=1e-8)
    check_against_torch(lambda lib, x: getattr(lib, name)(x), [smooth.astype(np.float32)])


def test_gamma_in_place():
    x = zero.tensor([0.5, 2.0, 3.0])
    x.lgamma_()
    np.testing.assert_allclose(x.numpy(), torch.tensor([0.5, 2.0, 3.0]).lgamma().numpy(), rtol=1e-6)


SHIFT_A = np.array([5, -5, 1, 0, 127, -128, 3], dtype=np.int64)
SHIFT_B = np.array([2, 1, 63, 5, 64, 65, -1], dtype=np.int64)


@pytest.mark.parametrize("name,op", [("bitwise_left_shift", "__lshift__"), ("bitwise_right_shift", "__rshift__")])
def test_shifts(name, op):
    check_against_torch(lambda lib, a, b: getattr(lib, name)(a, b), [SHIFT_A, SHIFT_B])
    check_against_torch(lambda lib, a: getattr(a, op)(3), [SHIFT_A])
    check_against_torch(lambda lib, a: getattr(lib, name)(a, 2), [SHIFT_A.astype(np.int32)])
    check_against_torch(lambda lib, a: getattr(lib, name)(a, 3), [np.array([1, 200, 255], dtype=np.uint8)])
    check_against_torch(lambda lib, a: getattr(lib, name)(a, 1), [A])   # floats refused
    check_against_torch(lambda lib, b: getattr(lib, name)(16, b), [SHIFT_B[:4]])


def test_shift_operators_and_in_place():
    x = zero.tensor([1, 2, 3])
    y = 1 << x
    assert y.tolist() == [2, 4, 8]
    assert (256 >> x).tolist() == [128, 64, 32]
    x <<= 2
    assert x.tolist() == [4, 8, 12]
    x >>= 1
    assert x.tolist() == [2, 4, 6]
    x.bitwise_left_shift_(1)
    assert x.tolist() == [4, 8, 12]


def test_copysign():
    b = np.array([[-1.0, 0.0, -0.0, 2.0, np.inf]], dtype=np.float32)
    a = np.array([[1.5, -2.0, 3.0, -0.0, 0.0]], dtype=np.float32)
    check_against_torch(lambda lib, x, y: lib.copysign(x, y), [a, b])
    check_against_torch(lambda lib, x, y: x.copysign(y), [A, A64[:3, :5].astype(np.float32)])
    check_against_torch(lambda lib, x: lib.copysign(x, -1.0), [A64])
    check_against_torch(lambda lib, x, y: lib.copysign(x, y), [INTS, -INTS])


# -- comparisons and broadcasting -----------------------------------------------------------------


def test_equal():
    for a, b in [(A, A.copy()), (A, A + 1), (A, A[:2]), (WITH_NAN, WITH_NAN.copy()), (INTS, INTS.astype(np.float32))]:
        check_against_torch(lambda lib, x, y: lib.equal(x, y), [a, b], grad=False)
        check_against_torch(lambda lib, x, y: x.equal(y), [a, b], grad=False)


def test_broadcast_shapes():
    for shapes in [((2, 1), (3,)), ((1,), (4, 1, 5), (5,)), (3, (2, 3)), ((0, 1), (1, 4)), ((),)]:
        got, want = zero.broadcast_shapes(*shapes), torch.broadcast_shapes(*shapes)
        assert tuple(got) == tuple(want) and isinstance(got, zero.Size)
    with pytest.raises(RuntimeError):
        zero.broadcast_shapes((2, 3), (4,))
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2, 3), (4,))


def test_broadcast_tensors_are_views():
    check_against_torch(lambda lib, a, b, c: lib.broadcast_tensors(a, b, c),
                        [A[:, :1], A64[0, :5].astype(np.float32), np.array(2.0, np.float32)])
    check_against_torch(lambda lib, a, b: lib.broadcast_tensors(a, b), [A, A64])
    x = zero.zeros(3, 1)
    y, _ = zero.broadcast_tensors(x, zero.zeros(4))
    assert y.shape == (3, 4) and y.data_ptr() == x.data_ptr()


# -- gathers of indices -------------------------------------------------------------------------


@pytest.mark.parametrize("repeats,dim", [(2, None), (3, 1), (0, 0), ("tensor", 0), ("tensor", 1),
                                         ("scalar_tensor", 1)])
def test_repeat_interleave(repeats, dim):
    if repeats == "tensor":
        counts = np.array([1, 0, 2] if dim == 0 else [2, 1, 0, 3, 1])
        check_against_torch(lambda lib, x, r: lib.repeat_interleave(x, r, dim), [A, counts])
        check_against_torch(lambda lib, x, r: x.repeat_interleave(r, dim, output_size=int(counts.sum())), [A, counts])
    elif repeats == "scalar_tensor":
        check_against_torch(lambda lib, x, r: lib.repeat_interleave(x, r, dim), [A, np.array(2)])
    else:
        check_against_torch(lambda lib, x: lib.repeat_interleave(x, repeats, dim), [A])
        check_against_torch(lambda lib, x: x.repeat_interleave(repeats, dim=dim), [INTS])


def test_repeat_interleave_counts_only_and_errors():
    check_against_torch(lambda lib, r: lib.repeat_interleave(r), [np.array([2, 0, 1, 3])])
    check_against_torch(lambda lib, x, r: lib.repeat_interleave(x, r, 1), [A, np.array([1, 2])])
    check_against_torch(lambda lib, x, r: lib.repeat_interleave(x, r, 0), [A, np.array([1, -1, 2])])
    check_against_torch(lambda lib, x: lib.repeat_interleave(x, 2, 0, output_size=5), [A])


@pytest.mark.parametrize("r,with_replacement", [(2, False), (3, False), (2, True), (3, True), (0, False),
                                                (6, False), (1, True)])
def test_combinations(r, with_replacement):
    check_against_torch(lambda lib, x: lib.combinations(x, r, with_replacement), [A[0]])
    check_against_torch(lambda lib, x: lib.combinations(x, r=r, with_replacement=with_replacement), [INTS[0]])


def test_combinations_needs_a_vector():
    check_against_torch(lambda lib, x: lib.combinations(x), [A])


def test_block_diag_against_torch():
    check_against_torch(lambda lib, a, b, c: lib.block_diag(a, b, c),
                        [A[:2, :3], A64[:1, :2].astype(np.float32), np.array(3.0, np.float32)])


def test_masked_scatter():
    mask = rng.random((3, 5)) > 0.5
    source = rng.standard_normal((4, 5)).astype(np.float32)
    check_against_torch(lambda lib, x, m, s: lib.masked_scatter(x, m, s), [A, mask, source])
    check_against_torch(lambda lib, x, m, s: x.masked_scatter(m, s), [A, mask[0], source])   # a broadcast mask
    check_against_torch(lambda lib, x, m, s: x.masked_scatter(m, s), [A, np.zeros((3, 5), bool), source])
    check_against_torch(lambda lib, x, m, s: x.masked_scatter(m, s), [A, np.ones((3, 5), bool), source[:2]])
    check_against_torch(lambda lib, x, m, s: x.masked_scatter(m, s), [A, mask.astype(np.int64), source])
    x = zero.tensor(A.copy())
    x.masked_scatter_(zero.tensor(mask), zero.tensor(source))
    np.testing.assert_array_equal(x.numpy(), torch.tensor(A).masked_scatter(torch.tensor(mask),
                                                                           torch.tensor(source)).numpy())


# -- cross, cdist -----------------------------------------------------------------------------------


def test_cross():
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    check_against_torch(lambda lib, x, y: lib.cross(x, y, dim=1), [a, b])
    check_against_torch(lambda lib, x, y: lib.linalg.cross(x, y), [a, b])
    check_against_torch(lambda lib, x, y: lib.linalg.cross(x, y, dim=0), [a.T.copy(), b.T.copy()])
    check_against_torch(lambda lib, x, y: x.cross(y, 1), [a[:1], b])          # broadcast
    check_against_torch(lambda lib, x, y: lib.linalg.cross(x, y), [A, A])     # no size 3 there: refused
    check_against_torch(lambda lib, x, y: lib.cross(x, y, dim=1), [INTS[:, :3], INTS[:, 1:]])


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, 0.5, float("inf")])
def test_cdist(p):
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    x2[0] = x1[1]                         # a zero distance: PyTorch's gradient is 0 there
    check_against_torch(lambda lib, a, b: lib.cdist(a, b, p=p), [x1, x2], rtol=1e-9, atol=1e-9)
    check_against_torch(lambda lib, a, b: lib.cdist(a, b, p),
                        [rng.standard_normal((2, 3, 4)).astype(np.float32),
                         rng.standard_normal((2, 2, 4)).astype(np.float32)], rtol=1e-5, atol=1e-5)


def test_cdist_errors():
    check_against_torch(lambda lib, a, b: lib.cdist(a, b), [A, A64])
    check_against_torch(lambda lib, a, b: lib.cdist(a, b), [INTS, INTS])
    check_against_torch(lambda lib, a, b: lib.cdist(a, b, p=-1.0), [A, A])


# -- random functions -------------------------------------------------------------------------------


def test_bernoulli():
    zero.manual_seed(0)
    p = zero.full((2000,), 0.3)
    drawn = zero.bernoulli(p)
    assert drawn.dtype is zero.float32 and set(np.unique(drawn.numpy())) <= {0.0, 1.0}
    assert abs(drawn.mean().item() - 0.3) < 0.05
    g = zero.Generator().manual_seed(5)
    first = zero.bernoulli(p, generator=g)
    g.manual_seed(5)
    assert zero.equal(first, zero.bernoulli(p, generator=g))
    assert zero.bernoulli(zero.tensor([0.0, 1.0], dtype=zero.float64)).tolist() == [0.0, 1.0]
    assert zero.bernoulli(zero.zeros(500), p=0.5).sum().item() > 150
    x = zero.empty(1000, dtype=zero.int64)
    assert x.bernoulli_(0.5) is x and 350 < x.sum().item() < 650
    probabilities = zero.tensor([0.0, 1.0, 0.0])
    assert zero.zeros(4, 3).bernoulli_(probabilities).sum(0).tolist() == [0.0, 4.0, 0.0]
    with pytest.raises(RuntimeError):
        zero.bernoulli(zero.tensor([1.5]))
    with pytest.raises(RuntimeError):
        torch.bernoulli(torch.tensor([1.5]))


def test_normal_overloads():
    zero.manual_seed(1)
    mean = zero.arange(4.0).reshape(4, 1)
    x = zero.normal(mean, zero.full((1, 3000), 0.1))
    assert x.shape == (4, 3000) and x.dtype is zero.float32
    np.testing.assert_allclose(x.mean(1).numpy(), [0, 1, 2, 3], atol=0.02)
    np.testing.assert_allclose(x.std(1).numpy(), [0.1] * 4, rtol=0.1)
    y = zero.normal(zero.zeros(3000, dtype=zero.float64), 2.0)
    assert y.dtype is zero.float64 and abs(y.std().item() - 2.0) < 0.15
    z = zero.normal(5.0, zero.full((3000,), 0.5))
    assert abs(z.mean().item() - 5.0) < 0.05
    w = zero.normal(1.0, 0.5, (2, 3))
    assert w.shape == (2, 3) == tuple(torch.normal(1.0, 0.5, (2, 3)).shape)
    g = zero.Generator().manual_seed(3)
    first = zero.normal(mean, 1.0, generator=g)
    g.manual_seed(3)
    assert zero.equal(first, zero.normal(mean, 1.0, generator=g))
    with pytest.raises(RuntimeError):
        zero.normal(zero.zeros(2), zero.tensor([1.0, -1.0]))


def test_randint_like_and_logspace():
    x = zero.zeros(3, 400, dtype=zero.int32)
    r = zero.randint_like(x, 5)
    assert r.shape == (3, 400) and r.dtype is zero.int32 and r.min().item() == 0 and r.max().item() == 4
    r = zero.randint_like(zero.zeros(500), 3, 6)
    assert r.dtype is zero.float32 and set(np.unique(r.numpy())) == {3.0, 4.0, 5.0}
    for args, kwargs in [((0, 3, 4), {}), ((-2, 2, 5), {"base": 2.0}), ((1, 0, 3), {"dtype": zero.float64}),
                         ((0, 1, 1), {}), ((0, 2, 0), {})]:
        t_kwargs = {k: (torch.float64 if v is zero.float64 else v) for k, v in kwargs.items()}
        got, want = zero.logspace(*args, **kwargs), torch.logspace(*args, **t_kwargs)
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


# -- Size, dtype aliases, legacy types, Tensor.type, new_*, unfold -------------------------------


def test_size():
    x = zero.zeros(2, 3, 4)
    assert isinstance(x.shape, zero.Size) and isinstance(x.size(), zero.Size) and isinstance(x.shape, tuple)
    assert x.shape == (2, 3, 4) == torch.zeros(2, 3, 4).shape and x.size(1) == 3
    assert x.shape.numel() == 24 == torch.Size([2, 3, 4]).numel()
    assert isinstance(x.shape[1:], zero.Size) and x.shape[1:] == (3, 4)
    assert isinstance(x.shape + (5,), zero.Size)
    assert repr(x.shape) == "zero.Size([2, 3, 4])"
    assert zero.Size([2, 3]) == (2, 3) and hash(zero.Size([2, 3])) == hash((2, 3))
    assert pickle.loads(pickle.dumps(x.shape)) == x.shape
    assert zero.zeros(zero.Size([2, 2])).shape == (2, 2)
    with pytest.raises(TypeError):
        zero.Size([2.5])


def test_dtype_aliases():
    assert zero.int is zero.int32 and zero.long is zero.int64 and zero.float is zero.float32
    assert zero.double is zero.float64 and zero.half is zero.float16
    assert zero.ones(2, dtype=zero.int).dtype is zero.int32


def test_legacy_tensor_types():
    assert zero.FloatTensor([1, 2]).dtype is zero.float32 and zero.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert zero.LongTensor([1.7, -2.2]).tolist() == torch.LongTensor([1.7, -2.2]).tolist()
    assert zero.DoubleTensor(2, 3).shape == (2, 3) and zero.DoubleTensor(2, 3).dtype is zero.float64
    assert zero.IntTensor([[1, 2]]).dtype is zero.int32 and zero.ByteTensor([1]).dtype is zero.uint8
    assert zero.BoolTensor([1, 0]).tolist() == [True, False]
    assert zero.FloatTensor().shape == (0,) == tuple(torch.FloatTensor().shape)
    assert zero.FloatTensor(zero.Size([2])).shape == (2,)
    assert isinstance(zero.ones(2), zero.FloatTensor) and not isinstance(zero.ones(2), zero.LongTensor)
    assert isinstance(zero.ones(2, dtype=zero.int64), zero.LongTensor)
    assert not isinstance(zero.ones(2, dtype=zero.float64), zero.FloatTensor)
    assert not isinstance(np.ones(2), zero.FloatTensor)


def test_tensor_type():
    for dtype, name in [(zero.float32, "torch.FloatTensor"), (zero.float64, "torch.DoubleTensor"),
                        (zero.int64, "torch.LongTensor"), (zero.int32, "torch.IntTensor"),
                        (zero.uint8, "torch.ByteTensor"), (zero.bool, "torch.BoolTensor"),
                        (zero.float16, "torch.HalfTensor")]:
        x = zero.ones(2, dtype=dtype)
        assert x.type() == name == torch.ones(2, dtype=getattr(torch, dtype.name)).type()
    x = zero.tensor([1.5, -2.5])
    assert x.type(zero.int64).tolist() == torch.tensor([1.5, -2.5]).type(torch.int64).tolist()
    assert x.type("torch.LongTensor").dtype is zero.int64
    assert x.type(zero.DoubleTensor).dtype is zero.float64
    assert x.type(zero.float32) is x and x.type("torch.FloatTensor") is x
    with pytest.raises(ValueError):
        x.type("torch.NoSuchTensor")


def test_new_factories_take_sizes_as_arguments():
    x = zero.ones(2, dtype=zero.float64)
    t = torch.ones(2, dtype=torch.float64)
    for name in ("new_zeros", "new_ones", "new_empty"):
        assert getattr(x, name)(2, 3).shape == getattr(t, name)(2, 3).shape
        assert getattr(x, name)((2, 3)).dtype is zero.float64
        assert getattr(x, name)([4]).shape == (4,)
    assert x.new_full((2, 2), 7).tolist() == t.new_full((2, 2), 7).tolist()
    assert x.new_zeros(3, dtype=zero.int64).dtype is zero.int64


@pytest.mark.parametrize("dim,size,step", [(1, 3, 1), (1, 2, 2), (0, 2, 1), (-1, 5, 3), (1, 1, 4), (0, 3, 2)])
def test_unfold(dim, size, step):
    check_against_torch(lambda lib, x: x.unfold(dim, size, step), [A])
    check_against_torch(lambda lib, x: x.t().unfold(dim, min(size, 3), step), [A])


def test_unfold_is_a_view_and_errors():
    x = zero.arange(6.0)
    windows = x.unfold(0, 2, 1)
    windows[0, 1] = 100.0
    assert x[1].item() == 100.0
    check_against_torch(lambda lib, t: t.unfold(0, 7, 1), [np.arange(6.0)])
    check_against_torch(lambda lib, t: t.unfold(0, 2, 0), [np.arange(6.0)])
    check_against_torch(lambda lib, t: t.unfold(0, 1, 1), [np.array(3.0)])


# -- on another device (the GPU under scripts/gpu-check.sh; "cuda" played by the CPU here) ------


DEVICE_CASES = {
    "cummax": lambda lib, x: lib.cummax(x, 1),
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 1),
    "diff": lambda lib, x: lib.diff(x, 2, 0),
    "kthvalue": lambda lib, x: lib.kthvalue(x, 2, 1),
    "mode": lambda lib, x: lib.mode(x.round(), 1),
    "nanmedian": lambda lib, x: lib.nanmedian(x, 1),
    "quantile": lambda lib, x: lib.quantile(x, 0.4, 1),
    "lgamma": lambda lib, x: lib.lgamma(x),
    "digamma": lambda lib, x: lib.digamma(x),
    "copysign": lambda lib, x: lib.copysign(x, -1.0),
    "repeat_interleave": lambda lib, x: lib.repeat_interleave(x, 2, 1),
    "cross": lambda lib, x: lib.linalg.cross(x[:, :3], x[:, 1:4]),
    "scatter_reduce": lambda lib, x: x.scatter_reduce(1, (x * 3).abs().long() % 5, x, "amax"),
    "cdist": lambda lib, x: lib.cdist(x, x, 3.0),
    "combinations": lambda lib, x: lib.combinations(x[0]),
    "masked_scatter": lambda lib, x: x.masked_scatter(x > 0, x * 2),
    "unfold": lambda lib, x: x.unfold(1, 2, 1),
    "shift": lambda lib, x: (x * 10).long() << 2,
}


@pytest.mark.parametrize("name", sorted(DEVICE_CASES))
def test_on_another_device(name, second_device):
    function = DEVICE_CASES[name]
    on_cpu = zero.tensor(A, requires_grad=True)
    there = zero.tensor(A, device=second_device, requires_grad=True)
    want, got = function(zero, on_cpu), function(zero, there)
    want, got = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
    assert got.device == second_device
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-6, equal_nan=True)
    if want.requires_grad:
        want.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(there.grad.cpu().numpy(), on_cpu.grad.numpy(), rtol=1e-6, atol=1e-6)


# -- scatter_reduce -------------------------------------------------------------------------------


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    x = rng.standard_normal((3, 4))
    src = rng.standard_normal((3, 6))
    index = rng.integers(0, 4, (3, 5))
    src[0, 1] = 0.0
    src[1, 0] = src[1, 3] = 5.0     # ties for amax (and their places may hold x's 5.0)
    x[1, 2] = 0.0
    x[2, 1] = 5.0
    check_against_torch(lambda lib, a, i, s: lib.scatter_reduce(a, 1, i, s, reduce, include_self=include_self),
                        [x, index, src[:, :5]], rtol=1e-10, atol=1e-10)
    check_against_torch(lambda lib, a, i, s: a.scatter_reduce(0, i, s, reduce, include_self=include_self),
                        [x.astype(np.float32), index[:2, :3] % 3, src[:2, :3].astype(np.float32)])
    # a src larger than index (only its leading window is read; PyTorch's own backward fails there)
    check_against_torch(lambda lib, a, i, s: a.scatter_reduce(1, i, s, reduce, include_self=include_self),
                        [x, index, src], grad=False)
    ints = (rng.integers(-5, 5, (2, 4))).astype(np.int64)
    check_against_torch(lambda lib, a, i, s: a.scatter_reduce(1, i, s, reduce, include_self=include_self),
                        [ints, index[:2, :4], ints * 3])


def test_scatter_reduce_in_place_and_errors():
    x = zero.zeros(2, 3)
    x.scatter_reduce_(1, zero.tensor([[0, 0], [2, 1]]), zero.tensor([[1.0, 2.0], [3.0, 4.0]]), "sum")
    assert x.tolist() == [[3.0, 0.0, 0.0], [0.0, 4.0, 3.0]]
    check_against_torch(lambda lib, a, i, s: lib.scatter_reduce(a, 0, i, s, "max"), [A, INTS[:, :2] % 3, A], grad=False)
    check_against_torch(lambda lib, a, i, s: lib.scatter_reduce(a, 0, i, s, "median"), [A, INTS[:, :2] % 3, A])
    check_against_torch(lambda lib, a, i, s: lib.scatter_reduce(a, 0, i, s, "sum"), [A, INTS[:, :2] % 3, A64])


def test_more_in_place_forms():
    x = zero.tensor([1.0, -2.0, 3.0])
    assert x.copysign_(zero.tensor([-1.0, 1.0, -0.0])) is x and x.tolist() == [-1.0, 2.0, -3.0]
    y = zero.tensor([1.0, 2.5])
    y.digamma_()
    np.testing.assert_allclose(y.numpy(), torch.tensor([1.0, 2.5]).digamma().numpy(), rtol=1e-6)
    z = zero.tensor([16, -16])
    z.bitwise_right_shift_(2)
    assert z.tolist() == [4, -4]
