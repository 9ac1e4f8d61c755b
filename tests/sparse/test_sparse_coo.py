"""Sparse COO tensors (zero/sparse/, ops/extra/sparse_products.py) against PyTorch: construction
(repeated places, coalesce), round trips, the products with gradients for the dense operand and
for the values, sums, softmax, spdiags, printing, errors, and a tiny two-layer GCN trained with
Adam whose losses are PyTorch's."""
from __future__ import annotations

import os

import numpy as np
import pytest

import zero
from zero.errors import SparseLayoutError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")
DEVICE = os.environ.get("ZERO_TEST_DEVICE", "cpu")

# (2, 5) places in a (4, 3) matrix, (0, 2) twice
INDICES = np.array([[0, 3, 1, 0, 2], [2, 0, 1, 2, 2]])
VALUES = np.array([1.5, -2.0, 0.5, 3.0, 4.0])
SIZE = (4, 3)


def Z(data, **kwargs):
    """A Zero tensor on the tested device."""
    return zero.tensor(data, device=DEVICE, **kwargs)


def pair(array, dtype=np.float64, requires_grad=False):
    """The same data as a Zero tensor and a PyTorch tensor (leaves)."""
    array = np.asarray(array, dtype=dtype)
    z = Z(array)
    t = torch.tensor(array)
    if requires_grad:
        z.requires_grad_(True)
        t.requires_grad_(True)
    return z, t


def host(x):
    if isinstance(x, torch.Tensor):
        return (x.to_dense() if x.is_sparse else x).detach().numpy()
    return (x.to_dense() if x.is_sparse else x).detach().cpu().numpy()


def close(z, t, atol=1e-12):
    np.testing.assert_allclose(host(z), host(t), rtol=1e-10, atol=atol)


def sparse_pair(indices=INDICES, values=VALUES, size=SIZE, requires_grad=False):
    zi, ti = pair(indices, np.int64)
    zv, tv = pair(values, requires_grad=requires_grad)
    return zero.sparse_coo_tensor(zi, zv, size), torch.sparse_coo_tensor(ti, tv, size), zv, tv


# -- construction, parts, round trips ----------------------------------------------------------------


def test_construction_parts_and_coalesce_sum_repeats():
    zs, ts, _, _ = sparse_pair()
    assert isinstance(zs, zero.Tensor) and zs.is_sparse and zs.layout is zero.sparse_coo
    assert zs.shape == ts.shape and zs.dtype is zero.float64
    assert (zs.sparse_dim(), zs.dense_dim(), zs._nnz()) == (ts.sparse_dim(), ts.dense_dim(), ts._nnz())
    assert zs.is_coalesced() == ts.is_coalesced() is False
    close(zs._indices(), ts._indices())
    close(zs._values(), ts._values())
    close(zs.to_dense(), ts.to_dense())
    zc, tc = zs.coalesce(), ts.coalesce()
    assert zc.is_coalesced() and zc._nnz() == tc._nnz() == 4
    close(zc.indices(), tc.indices())
    close(zc.values(), tc.values())
    assert zc.coalesce() is zc
    with pytest.raises(RuntimeError, match="uncoalesced"):
        zs.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        ts.indices()


def test_size_inferred_hybrid_and_flags():
    zi, ti = pair(INDICES, np.int64)
    zs, ts = zero.sparse_coo_tensor(zi, Z(VALUES)), torch.sparse_coo_tensor(ti, torch.tensor(VALUES))
    assert zs.shape == ts.shape == (4, 3)
    block = np.arange(10.0).reshape(5, 2)       # a hybrid tensor: each entry a (2,) block
    zh = zero.sparse_coo_tensor(zi, Z(block), (4, 3, 2))
    th = torch.sparse_coo_tensor(ti, torch.tensor(block), (4, 3, 2))
    assert (zh.sparse_dim(), zh.dense_dim()) == (th.sparse_dim(), th.dense_dim()) == (2, 1)
    close(zh, th)
    close(zh.coalesce().values(), th.coalesce().values())
    one = zero.sparse_coo_tensor(Z([[1]]), Z([2.0]), (3,))
    assert one.is_coalesced() == torch.sparse_coo_tensor(torch.tensor([[1]]), torch.tensor([2.0]), (3,)).is_coalesced()
    assert zero.sparse_coo_tensor(zi, Z(VALUES), SIZE, is_coalesced=True).is_coalesced()
    typed = zero.sparse_coo_tensor(zi, VALUES.tolist(), SIZE, dtype=zero.float32)
    assert typed.dtype is zero.float32 and typed._indices().dtype is zero.int64
    assert zero.ones(2).layout is zero.strided and not zero.ones(2).is_sparse
    assert (zero.ones(2, 3).sparse_dim(), zero.ones(2, 3).dense_dim()) == (0, 2)


def test_round_trips_dense_sparse_dense():
    dense = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [-2.0, 0.0, 3.0]])
    zd, td = pair(dense)
    zs, ts = zd.to_sparse(), td.to_sparse()
    assert zs.is_coalesced() and zs._nnz() == ts._nnz() == 3
    close(zs.indices(), ts.indices())
    close(zs.values(), ts.values())
    close(zs.to_dense(), td)
    assert zd.to_dense() is zd and td.to_dense() is td
    close(zd.to_sparse_coo(), td.to_sparse_coo())
    hybrid = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 3.0], [0.0, 0.0]]])
    zh, th = pair(hybrid)
    zh1, th1 = zh.to_sparse(1), th.to_sparse(1)
    assert (zh1.sparse_dim(), zh1._nnz()) == (th1.sparse_dim(), th1._nnz()) == (1, 2)
    close(zh1.values(), th1.values())
    close(zh1.to_dense(), th)
    assert zs.to_sparse() is zs


def test_to_dense_and_to_sparse_gradients():
    zs, ts, zv, tv = sparse_pair(requires_grad=True)
    weight = np.arange(12.0).reshape(SIZE)
    (zs.to_dense() * Z(weight)).sum().backward()
    (ts.to_dense() * torch.tensor(weight)).sum().backward()
    close(zv.grad, tv.grad)
    dense = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 2.0]])
    zd, td = pair(dense, requires_grad=True)
    zm, tm = pair(np.ones((3, 2)))
    # the gradient reaches the dense tensor at its nonzero places only (torch.sparse.mm's masked
    # gradient; PyTorch's ``@`` gives the unmasked one there, which Zero does not)
    (zero.sparse.mm(zd.to_sparse(), zm)).pow(2).sum().backward()
    (torch.sparse.mm(td.to_sparse(), tm)).pow(2).sum().backward()
    close(zd.grad, td.grad)


def test_sparse_leaf_that_requires_grad_gets_a_sparse_grad():
    zi, ti = pair(INDICES[:, :4], np.int64)     # no repeated place
    zs = zero.sparse_coo_tensor(zi, Z(VALUES[:4]), SIZE, requires_grad=True)
    ts = torch.sparse_coo_tensor(ti, torch.tensor(VALUES[:4]), SIZE, requires_grad=True)
    assert zs.requires_grad and zs.is_leaf and ts.is_leaf
    zs, ts = zs.coalesce().detach().requires_grad_(True), ts.coalesce().detach().requires_grad_(True)
    assert zs.requires_grad and zs.is_leaf and zs.is_coalesced()
    zx, tx = pair(np.arange(6.0).reshape(3, 2))
    (zs @ zx).sum().backward()
    torch.sparse.mm(ts, tx).sum().backward()
    assert zs.grad is not None and zs.grad.is_sparse
    close(zs.grad, ts.grad)


# -- products --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["matmul_operator", "sparse.mm", "spmm", "mm", "matmul", "method"])
def test_sparse_times_dense_with_gradients(form):
    zs, ts, zv, tv = sparse_pair(requires_grad=True)
    zx, tx = pair(np.random.default_rng(0).normal(size=(3, 4)), requires_grad=True)
    run = {"matmul_operator": lambda s, x: s @ x,
           "sparse.mm": lambda s, x: (zero if isinstance(s, zero.Tensor) else torch).sparse.mm(s, x),
           "spmm": lambda s, x: (zero if isinstance(s, zero.Tensor) else torch).spmm(s, x),
           "mm": lambda s, x: (zero if isinstance(s, zero.Tensor) else torch).mm(s, x),
           "matmul": lambda s, x: (zero if isinstance(s, zero.Tensor) else torch).matmul(s, x),
           "method": lambda s, x: s.mm(x)}[form]
    zo, to = run(zs, zx), run(ts, tx)
    assert not zo.is_sparse and zo.shape == to.shape
    close(zo, to)
    g = np.random.default_rng(1).normal(size=(4, 4))
    (zo * Z(g)).sum().backward()
    (to * torch.tensor(g)).sum().backward()
    close(zx.grad, tx.grad)
    close(zv.grad, tv.grad)


def test_sparse_times_vector_dense_times_sparse_addmm_and_hspmm():
    zs, ts, zv, tv = sparse_pair(requires_grad=True)
    zx, tx = pair([1.0, -2.0, 0.5], requires_grad=True)
    close(zs @ zx, ts @ tx)
    zl, tl = pair(np.arange(8.0).reshape(2, 4), requires_grad=True)
    zo, to = zl @ zs, tl @ ts
    close(zo, to)
    close(zero.mm(zl, zs), torch.mm(tl, ts))
    zo.pow(2).sum().backward()
    to.pow(2).sum().backward()
    close(zl.grad, tl.grad)
    close(zv.grad, tv.grad)
    zx2, tx2 = pair(np.arange(6.0).reshape(3, 2))
    zb, tb = pair(np.ones((4, 2)))
    close(zero.sparse.addmm(zb, zs, zx2, beta=0.5, alpha=2.0), torch.sparse.addmm(tb, ts, tx2, beta=0.5, alpha=2.0))
    close(zero.addmm(zb, zs, zx2), torch.addmm(tb, ts, tx2))
    zh, th = zero.hspmm(zs, zx2), torch.hspmm(ts, tx2)
    assert (zh.sparse_dim(), zh.dense_dim(), zh._nnz()) == (th.sparse_dim(), th.dense_dim(), th._nnz())
    close(zh._indices(), th._indices())
    close(zh, th)
    for zm, tm in ((zero.smm(zs, zx2), torch.smm(ts, tx2)), (zs.smm(zx2), ts.smm(tx2))):
        assert zm._nnz() == tm._nnz() and zm.is_coalesced() == tm.is_coalesced()
        close(zm._indices(), tm._indices())
        close(zm._values(), tm._values())


def test_additions_and_scaling():
    zs, ts, zv, tv = sparse_pair(requires_grad=True)
    zd, td = pair(np.ones(SIZE))
    close(zd + zs, td + ts)
    assert not (zd + zs).is_sparse
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        zs + zd
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        ts + td
    zsum, tsum = zs + zs * 2, ts + ts * 2
    assert zsum.is_sparse and zsum.is_coalesced() == tsum.is_coalesced()
    close(zsum, tsum)
    zc, tc = zs.coalesce(), ts.coalesce()
    assert (zc + zc).is_coalesced() and (tc + tc).is_coalesced()
    close(zc - zc * 0.5, tc - tc * 0.5)
    close(3 * zs, 3 * ts)
    close(zs / 4, ts / 4)
    close(-zs, -ts)
    (zs * 2.0 + zs).to_dense().pow(2).sum().backward()
    (ts * 2.0 + ts).to_dense().pow(2).sum().backward()
    close(zv.grad, tv.grad)


def test_sparse_times_dense_elementwise():
    for dense_first in (False, True):
        zs, ts, zv, tv = sparse_pair(requires_grad=True)
        zd, td = pair(np.arange(12.0).reshape(SIZE) - 5, requires_grad=True)
        zo, to = (zd * zs, td * ts) if dense_first else (zs * zd, ts * td)
        assert zo.is_sparse and zo.is_coalesced() == to.is_coalesced()
        close(zo, to)
        zo.to_dense().pow(2).sum().backward()
        to.to_dense().pow(2).sum().backward()
        close(zv.grad, tv.grad)
        close(zd.grad, td.grad)
    with pytest.raises(RuntimeError, match="of its size"):
        zs * zero.ones(3, device=DEVICE)


def test_copies_and_pickles_keep_the_tensor():
    import copy
    import pickle
    zs, ts, _, _ = sparse_pair()
    for zc, tc in ((copy.deepcopy(zs), copy.deepcopy(ts)),
                   (pickle.loads(pickle.dumps(zs)), pickle.loads(pickle.dumps(ts)))):
        assert zc.is_sparse and zc.is_coalesced() == tc.is_coalesced()
        close(zc, tc)
        close(zc._indices(), tc._indices())


def test_as_sparse_gradcheck():
    zi = Z(INDICES)
    zs = zero.sparse_coo_tensor(zi, Z(VALUES), SIZE, requires_grad=True)
    zx = Z(np.arange(6.0).reshape(3, 2), requires_grad=True)
    check = zero.sparse.as_sparse_gradcheck(zero.autograd.gradcheck)
    assert check(lambda s, x: zero.sparse.mm(s, x), (zs, zx))
    assert check(lambda s: zero.sparse.softmax(s, 1), (zs,))
    assert check(lambda s: s.coalesce(), (zs,))
    wrong = lambda s, x: SparseWrongGradient.apply(s, x)  # noqa: E731
    with pytest.raises(zero.autograd.GradcheckError):
        check(wrong, (zs, zx))


class SparseWrongGradient:
    """sparse @ dense whose values' gradient is doubled: the check must catch it."""

    @staticmethod
    def apply(s, x):
        values = s._values()
        doubled = values * 2 - values.detach()          # forward: the values; gradient: twice theirs
        return zero.sparse_coo_tensor(s._indices(), doubled, s.shape) @ x


def test_sparse_mask():
    zd, td = pair(np.arange(12.0).reshape(SIZE), requires_grad=True)
    zs, ts, _, _ = sparse_pair()
    zm, tm = zd.sparse_mask(zs), td.sparse_mask(ts.coalesce())
    assert zm.is_sparse and zm.is_coalesced()
    close(zm.indices(), tm.indices())
    close(zm.values(), tm.values())
    zm.values().pow(2).sum().backward()
    tm.values().pow(2).sum().backward()
    close(zd.grad, td.grad)


# -- sums, softmax, spdiags ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sum(dim):
    zs, ts, zv, tv = sparse_pair(requires_grad=True)
    zo = zero.sparse.sum(zs) if dim is None else zero.sparse.sum(zs, dim)
    to = torch.sparse.sum(ts) if dim is None else torch.sparse.sum(ts, dim)
    assert zo.is_sparse == to.is_sparse and zo.shape == to.shape
    close(zo, to)
    (zo.to_dense() if zo.is_sparse else zo).pow(2).sum().backward()
    (to.to_dense() if to.is_sparse else to).pow(2).sum().backward()
    close(zv.grad, tv.grad)


def test_sum_of_a_hybrid_tensor_and_the_method():
    zi, ti = pair(INDICES, np.int64)
    block = np.arange(10.0).reshape(5, 2)
    zh = zero.sparse_coo_tensor(zi, Z(block), (4, 3, 2))
    th = torch.sparse_coo_tensor(ti, torch.tensor(block), (4, 3, 2))
    for dim in (2, (0, 2), (0, 1), 1):
        close(zero.sparse.sum(zh, dim), torch.sparse.sum(th, dim))
    close(zh.sum(), th.sum())


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_over_specified_entries(name, dim):
    zs, ts, zv, tv = sparse_pair(requires_grad=True)
    zo, to = getattr(zero.sparse, name)(zs, dim), getattr(torch.sparse, name)(ts, dim)
    assert zo.is_sparse and zo._nnz() == to._nnz()
    close(zo.values(), to.coalesce().values())
    weight = np.random.default_rng(2).normal(size=to._nnz())
    (zo.values() * Z(weight)).sum().backward()
    (to.coalesce().values() * torch.tensor(weight)).sum().backward()
    close(zv.grad, tv.grad)


def test_log_softmax_is_the_log_of_softmax():
    zs, ts, _, _ = sparse_pair()
    close(zero.sparse.log_softmax(zs, 1), torch.sparse.log_softmax(ts, 1))
    close(zero.sparse.log_softmax(zs, 0, dtype=zero.float32).values().exp(),
          torch.sparse.softmax(ts, 0, dtype=torch.float32).coalesce().values(), atol=1e-6)


def test_softmax_over_a_dense_dim():
    zi, ti = pair(INDICES, np.int64)
    block = np.random.default_rng(3).normal(size=(5, 2))
    zh = zero.sparse_coo_tensor(zi, Z(block), (4, 3, 2))
    th = torch.sparse_coo_tensor(ti, torch.tensor(block), (4, 3, 2))
    close(zero.sparse.softmax(zh, 2), torch.sparse.softmax(th, 2))
    close(zero.sparse.softmax(zh, 0), torch.sparse.softmax(th, 0))


def test_spdiags():
    zd, td = pair(np.arange(1.0, 10.0).reshape(3, 3), requires_grad=True)
    for offsets, shape in (([0, 1, -1], (3, 3)), ([0, 2, -2], (4, 3)), ([1, -1, 0], (2, 4))):
        zo = zero.sparse.spdiags(zd, Z(offsets), shape)
        to = torch.sparse.spdiags(td, torch.tensor(offsets), shape)
        assert zo.shape == to.shape
        close(zo._indices(), to._indices())
        close(zo, to)
    zo.to_dense().pow(2).sum().backward()       # (PyTorch does not differentiate spdiags)
    diagonals, expected = np.arange(1.0, 10.0).reshape(3, 3), np.zeros((3, 3))
    for k, column in [(0, 1), (0, 2), (1, 0), (2, 0), (2, 1)]:   # what the (2, 4) matrix takes
        expected[k, column] = 2 * diagonals[k, column]
    np.testing.assert_array_equal(host(zd.grad), expected)


# -- printing and errors --------------------------------------------------------------------------------------


def test_repr_is_pytorchs():
    values = [1.0, -2.0, 5.0, 3.0, 4.0]       # (numbers both print alike)
    zs = zero.sparse_coo_tensor(zero.tensor(INDICES), zero.tensor(values, dtype=zero.float64), SIZE)
    ts = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(values, dtype=torch.float64), SIZE)
    assert repr(zs) == repr(ts).replace("torch.", "zero.")
    zf = zero.sparse_coo_tensor(zero.tensor(INDICES), zero.tensor([1.0, 2, 3, 4, 5], dtype=zero.float32), SIZE)
    tf = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor([1.0, 2, 3, 4, 5], dtype=torch.float32), SIZE)
    assert repr(zf) == repr(tf).replace("torch.", "zero.")
    zg = zero.sparse_coo_tensor(Z(INDICES), Z(VALUES, dtype=zero.float32), SIZE,
                                requires_grad=True)
    assert repr(zg).endswith("layout=zero.sparse_coo, requires_grad=True)")
    empty = zero.sparse_coo_tensor(zero.zeros((2, 0), dtype=zero.int64), zero.zeros(0), (2, 2))
    temp = torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.int64), torch.zeros(0), (2, 2))
    assert repr(empty) == repr(temp).replace("torch.", "zero.")


def test_construction_errors():
    zi, ti = pair(INDICES, np.int64)
    zv, tv = pair(VALUES)
    cases = [
        (lambda m, i, v: m.sparse_coo_tensor(i[0], v), "sparse_dim x nnz"),
        (lambda m, i, v: m.sparse_coo_tensor(i, v[:3], (4, 3)), "same nnz"),
        (lambda m, i, v: m.sparse_coo_tensor(i, v, (4, 2), check_invariants=True), "size is inconsistent"),
        (lambda m, i, v: m.sparse_coo_tensor(i, v, (4,)), "len\\(size\\)"),
        (lambda m, i, v: m.sparse_coo_tensor(-i, v, (4, 3), check_invariants=True), "negative index"),
    ]
    for make, message in cases:
        with pytest.raises(RuntimeError, match=message):
            make(zero, zi, zv)
        with pytest.raises(RuntimeError, match=message):
            make(torch, ti, tv)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        zero.sparse_coo_tensor(zi, zv, SIZE) @ zero.ones(4, 2, dtype=zero.float64)


def test_dense_ops_on_a_sparse_tensor_refuse_naming_the_layout():
    zs, ts, _, _ = sparse_pair()
    for run in (lambda m, s: m.exp(s), lambda m, s: s.view(12), lambda m, s: s.cumsum(0),
                lambda m, s: s.exp_(), lambda m, s: s > 0):
        with pytest.raises(NotImplementedError):
            run(torch, ts)
        with pytest.raises(NotImplementedError, match="layout=zero.sparse_coo") as caught:
            run(zero, zs)
        assert isinstance(caught.value, SparseLayoutError) and "\n" not in str(caught.value)
    # (PyTorch raises RuntimeError for these; Zero's SparseLayoutError is one. PyTorch can
    # index and cat sparse tensors, which Zero refuses)
    for run in (lambda s: s.tolist(), lambda s: s.contiguous(), lambda s: s.reshape(12), lambda s: s[0],
                lambda s: zero.cat([s, s]), lambda s: zero.where(s._values() > 0, s, s), lambda s: s.item()):
        with pytest.raises(RuntimeError, match="layout=zero.sparse_coo"):
            run(zs)
    with pytest.raises(TypeError, match="Sparse layout tensor to numpy"):
        zs.numpy()
    with pytest.raises(TypeError, match="Sparse layout tensor to numpy"):
        ts.numpy()


def test_sparse_methods_on_a_strided_tensor_refuse_as_pytorch():
    zd, td = pair(np.ones((2, 2)))
    for name in ("coalesce", "is_coalesced", "indices", "values"):
        with pytest.raises(RuntimeError, match=f"{name} expected sparse .*but got Strided"):
            getattr(zd, name)()
        with pytest.raises(RuntimeError, match=f"{name} expected sparse .*but got Strided"):
            getattr(td, name)()


@pytest.mark.filterwarnings("ignore:torch.sparse.SparseTensor")
def test_legacy_sparse_types_of_older_graph_networks():
    zi, ti = pair(INDICES, np.int64)
    zs = zero.sparse.FloatTensor(zi, Z(VALUES, dtype=zero.float32), zero.Size(SIZE))
    ts = torch.sparse.FloatTensor(ti, torch.tensor(VALUES, dtype=torch.float32), torch.Size(SIZE))
    assert zs.dtype is zero.float32 and zs.shape == ts.shape
    close(zs, ts)
    zd = zero.sparse.FloatTensor(zi, Z(VALUES))          # the values keep their dtype, as PyTorch's
    td = torch.sparse.FloatTensor(ti, torch.tensor(VALUES))
    assert zd.dtype is zero.float64 and td.dtype is torch.float64
    assert zd.shape == td.shape
    empty, tempty = zero.sparse.DoubleTensor(2, 3), torch.sparse.DoubleTensor(2, 3)
    assert empty.shape == tempty.shape and empty._nnz() == tempty._nnz() == 0 and empty.dtype is zero.float64
    assert (empty.sparse_dim(), empty.dense_dim()) == (tempty.sparse_dim(), tempty.dense_dim())
    if DEVICE == "cpu":
        assert isinstance(zd, zero.sparse.DoubleTensor) and not isinstance(zd, zero.sparse.FloatTensor)
        assert isinstance(td, torch.sparse.DoubleTensor) and not isinstance(td, torch.sparse.FloatTensor)
    assert not isinstance(zero.ones(2), zero.sparse.FloatTensor)
    assert not isinstance(torch.ones(2), torch.sparse.FloatTensor)


def test_to_and_detach_keep_the_layout():
    zs, _, zv, _ = sparse_pair(requires_grad=True)
    z32 = zs.to(zero.float32)
    assert z32.is_sparse and z32.dtype is zero.float32
    np.testing.assert_allclose(host(z32), host(zs), rtol=1e-6)
    assert zs.detach().is_sparse and not zs.detach().requires_grad and zs.requires_grad
    assert zs.clone()._values() is not zs._values()
    np.testing.assert_array_equal(host(zs.t()), host(zs).T)


# -- a graph network ----------------------------------------------------------------------------------------------


def _normalized_adjacency(n, edges):
    """D^-1/2 (A + I) D^-1/2 as COO parts, as a GCN builds it."""
    adjacency = np.eye(n)
    for a, b in edges:
        adjacency[a, b] = adjacency[b, a] = 1.0
    scale = 1.0 / np.sqrt(adjacency.sum(1))
    normalized = adjacency * scale[:, None] * scale[None, :]
    rows, cols = np.nonzero(normalized)
    return np.stack([rows, cols]), normalized[rows, cols]


def test_two_layer_gcn_trains_as_pytorchs():
    rng = np.random.default_rng(4)
    n, features, hidden, classes = 8, 5, 6, 3
    indices, values = _normalized_adjacency(n, [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (6, 7), (3, 4), (0, 7)])
    x = rng.normal(size=(n, features))
    labels = rng.integers(0, classes, size=n)
    w1, w2 = rng.normal(size=(features, hidden)) * 0.5, rng.normal(size=(hidden, classes)) * 0.5

    def train(lib, nn):
        make = Z if lib is zero else torch.tensor
        adj = lib.sparse_coo_tensor(make(indices), make(values), (n, n))
        weights = [nn.Parameter(make(w1)), nn.Parameter(make(w2))]
        optimizer = lib.optim.Adam(weights, lr=0.05)
        features_t, labels_t = make(x), make(labels)
        losses = []
        for _ in range(5):
            optimizer.zero_grad()
            h = lib.relu(lib.sparse.mm(adj, features_t @ weights[0]))      # layer 1
            logits = adj @ (h @ weights[1])                                # layer 2
            loss = nn.functional.cross_entropy(logits, labels_t)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    zero_losses, torch_losses = train(zero, zero.nn), train(torch, torch.nn)
    np.testing.assert_allclose(zero_losses, torch_losses, rtol=1e-10)
    assert zero_losses[-1] < zero_losses[0]
