"""The linalg decompositions (ops/extra/decompositions.py, spectral.py, linalg_aliases.py)
against PyTorch: values and dtypes in float32 and float64, batched, and gradients (float64,
through check_against_torch's random cotangents, and zero.autograd.gradcheck's finite
differences). Singular and eigen vectors are unique only up to sign: those are compared
through functions that do not depend on the sign (|U|, U diag(S) U^T ...), as PyTorch asks of
differentiated losses. Errors: PyTorch's class (RuntimeError, LinAlgError) and wording."""
from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import check_against_torch

import zero
from zero.autograd import gradcheck
from zero.errors import LinAlgError

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(37)


def _matrix(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _spd(*shape, dtype="float64"):
    a = RNG.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _symmetric(*shape, dtype="float64"):
    a = RNG.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


DTYPES = ["float32", "float64"]


# -- det, slogdet, inv, solve, cholesky, matrix_power ----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 2, 2)])
def test_determinants_and_inverse(dtype, shape):
    a = _matrix(*shape, dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    for fn in (lambda lib, x: lib.linalg.det(x), lambda lib, x: lib.linalg.slogdet(x),
               lambda lib, x: lib.linalg.inv(x), lambda lib, x: lib.det(x), lambda lib, x: x.logdet(),
               lambda lib, x: lib.logdet(x), lambda lib, x: x.det(), lambda lib, x: x.slogdet(),
               lambda lib, x: lib.slogdet(x), lambda lib, x: lib.inverse(x), lambda lib, x: x.inverse()):
        check_against_torch(fn, [a], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(n):
    a = _matrix(2, 3, 3) * 0.7
    check_against_torch(lambda lib, x: lib.linalg.matrix_power(x, n), [a])
    check_against_torch(lambda lib, x: x.matrix_power(n), [a[0].astype("float32")], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes, left", [
    (((3, 3), (3, 2)), True), (((2, 3, 3), (2, 3, 4)), True), (((3, 3), (2, 3, 1)), True),   # broadcast A
    (((2, 3, 3), (1, 3, 2)), True), (((3, 3), (3,)), True), (((2, 3, 3), (2, 3)), True),    # vectors
    (((3, 3), (2, 3)), False), (((2, 3, 3), (2, 4, 3)), False), (((3, 3), (3,)), False),
])
def test_solve(dtype, shapes, left):
    a, b = _matrix(*shapes[0], dtype=dtype), _matrix(*shapes[1], dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    check_against_torch(lambda lib, x, y: lib.linalg.solve(x, y, left=left), [a, b], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, upper):
    a = _spd(2, 4, 4, dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    check_against_torch(lambda lib, x: lib.linalg.cholesky(x, upper=upper), [a], rtol=rtol, atol=rtol)
    check_against_torch(lambda lib, x: lib.cholesky(x, upper), [a[0]], rtol=rtol, atol=rtol)
    check_against_torch(lambda lib, x: x.cholesky(), [a[1]], rtol=rtol, atol=rtol)


# -- qr, svd, eigh and what is built on them --------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 5), (2, 5, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(dtype, shape, mode):
    """(LAPACK's Householder QR in both: the same signs.)"""
    a = _matrix(*shape, dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    differentiable = mode == "reduced" or (mode == "complete" and shape[-2] <= shape[-1])
    q, r = zero.linalg.qr(zero.tensor(a), mode)
    if mode != "r":
        np.testing.assert_allclose((q @ r).numpy(), a, rtol=rtol * 10, atol=rtol * 10)
        identities = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
        np.testing.assert_allclose((q.mT @ q).numpy(), identities, atol=rtol * 10)
    assert np.allclose(np.tril(r.numpy(), -1), 0)
    check_against_torch(lambda lib, x: lib.linalg.qr(x, mode), [a], rtol=rtol, atol=rtol, grad=differentiable)


def test_qr_aliases_and_refused_gradients():
    a = _matrix(4, 3)
    check_against_torch(lambda lib, x: lib.qr(x), [a])
    check_against_torch(lambda lib, x: x.qr(some=False), [a], grad=False)
    x = zero.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        zero.linalg.qr(x, "complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        zero.linalg.qr(x, "r").R.sum().backward()


def _svd_invariants(lib, x, full_matrices):
    """S, |U| and |Vh| (their first k vectors: the rest of a full U is not unique), and
    U diag(S) U^T."""
    u, s, vh = lib.linalg.svd(x, full_matrices=full_matrices)
    k = s.shape[-1]
    return s, u[..., :k].abs(), vh[..., :k, :].abs(), (u[..., :k] * s.unsqueeze(-2)) @ u[..., :k].mT


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 5)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(dtype, shape, full_matrices):
    a = _matrix(*shape, dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-9
    check_against_torch(lambda lib, x: _svd_invariants(lib, x, full_matrices), [a], rtol=rtol, atol=rtol)
    u, s, vh = zero.linalg.svd(zero.tensor(a), full_matrices=full_matrices)
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape[-2:] == ((m, m) if full_matrices else (m, k))
    assert vh.shape[-2:] == ((n, n) if full_matrices else (k, n))
    np.testing.assert_allclose(((u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :]).numpy(), a, rtol=rtol * 10,
                               atol=rtol * 10)
    check_against_torch(lambda lib, x: lib.linalg.svdvals(x), [a], rtol=rtol, atol=rtol)


def test_svd_alias_returns_v():
    a = _matrix(4, 3)
    check_against_torch(lambda lib, x: (lambda u, s, v: (s, u.abs(), v.abs()))(*lib.svd(x)), [a])
    check_against_torch(lambda lib, x: (lambda u, s, v: (s, u.abs(), v.abs()))(*x.svd(some=False))[:1], [a])
    check_against_torch(lambda lib, x: lib.svd(x, compute_uv=False), [a])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, uplo):
    """Only the named triangle is read: a not symmetric input tells the triangles apart."""
    a = _matrix(2, 4, 4, dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-9
    check_against_torch(lambda lib, x: (lambda w, v: (w, v.abs(), (v * w.unsqueeze(-2)) @ v.mT))(
        *lib.linalg.eigh(x, UPLO=uplo)), [a], rtol=rtol, atol=rtol)
    check_against_torch(lambda lib, x: lib.linalg.eigvalsh(x, UPLO=uplo), [a], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 5)])
def test_pinv_and_rank(shape):
    a = _matrix(*shape)
    check_against_torch(lambda lib, x: lib.linalg.pinv(x), [a], rtol=1e-9, atol=1e-9)
    check_against_torch(lambda lib, x: x.pinverse(), [a.astype("float32")], rtol=1e-4, atol=1e-4)
    check_against_torch(lambda lib, x: lib.pinverse(x, rcond=0.3), [a], rtol=1e-9, atol=1e-9)
    low_rank = a[..., :, :1] @ a[..., :1, :]                  # rank 1
    check_against_torch(lambda lib, x: lib.linalg.pinv(x), [low_rank], rtol=1e-9, atol=1e-9)
    check_against_torch(lambda lib, x: lib.linalg.pinv(x, atol=0.5, rtol=0.1), [a])
    for x in (a, low_rank):
        check_against_torch(lambda lib, x: lib.linalg.matrix_rank(x), [x])
    check_against_torch(lambda lib, x: lib.linalg.matrix_rank(x, rtol=0.5), [a])


def test_pinv_hermitian():
    a = _symmetric(2, 4, 4)
    check_against_torch(lambda lib, x: lib.linalg.pinv(x, hermitian=True), [a], rtol=1e-9, atol=1e-9)
    check_against_torch(lambda lib, x: lib.linalg.pinv(x, hermitian=True, atol=1.0), [a], rtol=1e-9, atol=1e-9)
    check_against_torch(lambda lib, x: lib.linalg.matrix_rank(x, hermitian=True), [a])


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((2, 3, 5), (2, 3, 2)), ((3, 3), (3, 1))])
def test_lstsq(driver, shapes):
    a, b = _matrix(*shapes[0]), _matrix(*shapes[1])
    check_against_torch(lambda lib, x, y: lib.linalg.lstsq(x, y, driver=driver), [a, b], rtol=1e-9, atol=1e-9)
    low_rank = a[..., :, :1] @ a[..., :1, :]
    if driver in ("gelsd", "gelss"):    # (gels and gelsy's QR answer a rank-deficient A otherwise)
        check_against_torch(lambda lib, x, y: lib.linalg.lstsq(x, y, driver=driver), [low_rank, b], grad=False,
                            rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("order", ["nuc", 2, -2])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_spectral_matrix_norms(order, dim, keepdim):
    a = _matrix(2, 3, 4)
    check_against_torch(lambda lib, x: lib.linalg.matrix_norm(x, order, dim, keepdim), [a])
    check_against_torch(lambda lib, x: lib.linalg.norm(x, order, dim, keepdim), [a])
    check_against_torch(lambda lib, x: lib.norm(x, "nuc"), [a[0]])


# -- gradients by finite differences -----------------------------------------------------------------

GRADCHECKS = {
    "det": (lambda x: zero.linalg.det(x), lambda: _matrix(2, 3, 3)),
    "slogdet": (lambda x: zero.linalg.slogdet(x).logabsdet, lambda: _matrix(3, 3)),
    "inv": (lambda x: zero.linalg.inv(x), lambda: _matrix(2, 3, 3)),
    "solve": (lambda x: zero.linalg.solve(x, x[..., :2] * 2 + 1), lambda: _matrix(2, 3, 3)),
    "solve_right": (lambda x: zero.linalg.solve(x, x[..., :2, :] + 1, left=False), lambda: _matrix(3, 3)),
    "cholesky": (lambda x: zero.linalg.cholesky(x @ x.mT + zero.eye(3, dtype=zero.float64)), lambda: _matrix(2, 3, 3)),
    "cholesky_upper": (lambda x: zero.linalg.cholesky(x @ x.mT + zero.eye(3, dtype=zero.float64), upper=True),
                       lambda: _matrix(3, 3)),
    "qr_tall": (lambda x: zero.cat([t.flatten(-2) for t in zero.linalg.qr(x)], -1), lambda: _matrix(4, 3)),
    "qr_wide": (lambda x: zero.cat([t.flatten(-2) for t in zero.linalg.qr(x)], -1), lambda: _matrix(2, 3, 4)),
    "svd": (lambda x: _svd_invariants(zero, x, False)[1:], lambda: _matrix(4, 3)),
    "svd_wide_full": (lambda x: _svd_invariants(zero, x, True), lambda: _matrix(2, 3, 4)),
    "svdvals": (lambda x: zero.linalg.svdvals(x), lambda: _matrix(3, 4)),
    "eigh": (lambda x: (lambda w, v: (w, v.abs()))(*zero.linalg.eigh(x + x.mT)), lambda: _matrix(2, 3, 3)),
    "eigvalsh": (lambda x: zero.linalg.eigvalsh(x + x.mT, "U"), lambda: _matrix(3, 3)),
    "pinv": (lambda x: zero.linalg.pinv(x), lambda: _matrix(4, 3)),
    "matrix_power": (lambda x: zero.linalg.matrix_power(x, -2), lambda: _matrix(3, 3)),
    "lstsq": (lambda x: zero.linalg.lstsq(x, x[..., :2] ** 2).solution, lambda: _matrix(5, 3)),
    "nuclear_norm": (lambda x: zero.linalg.matrix_norm(x, "nuc"), lambda: _matrix(3, 4)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, make = GRADCHECKS[name]
    assert gradcheck(fn, [zero.tensor(make(), requires_grad=True)], atol=1e-6, rtol=1e-5)


def test_gradcheck_can_fail():
    """A wrong backward (inv's sign flipped) is caught."""
    from zero.ops.extra import decompositions

    class WrongInv(decompositions.Inv):
        def backward(self, grad):
            return tuple(-g for g in super().backward(grad))

    with pytest.raises(Exception, match="gradient|Jacobian|mismatch"):
        gradcheck(lambda x: WrongInv.apply(x), [zero.tensor(_matrix(3, 3), requires_grad=True)])


# -- errors -------------------------------------------------------------------------------------------

def _both_raise(fn, match, error=RuntimeError):
    """PyTorch raises a RuntimeError (or ``error``, a builtin), Zero ``error`` saying ``match``."""
    with pytest.raises(error if error in (RuntimeError, TypeError) else RuntimeError):
        fn(torch)
    with pytest.raises(error, match=match):
        fn(zero)


@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "cholesky", "eigh", "eigvalsh"])
def test_refuses_what_pytorch_refuses(name):
    def call(x):
        return lambda lib: getattr(lib.linalg, name)(lib.tensor(x) if not hasattr(x, "shape") else
                                                     (lib.from_numpy(x)))
    _both_raise(call(np.ones((2, 3))), "square matrices, but they are 2 by 3 matrices")
    _both_raise(call(np.ones(3)), "at least 2 dimensions")
    _both_raise(call(np.ones((2, 2), dtype=np.int64)), "floating point")
    _both_raise(lambda lib: getattr(lib.linalg, name)(lib.ones(2, 2, dtype=lib.float16)), "Low precision")


def test_singular_and_not_positive_definite():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for fn, match in [(lambda lib: lib.linalg.inv(lib.from_numpy(singular)), "linalg.inv: .*singular"),
                      (lambda lib: lib.linalg.solve(lib.from_numpy(singular), lib.ones(2, dtype=lib.float64)),
                       "linalg.solve: .*singular"),
                      (lambda lib: lib.linalg.cholesky(-lib.eye(2)), "linalg.cholesky: .*not positive-definite")]:
        _both_raise(fn, match, LinAlgError)
        with pytest.raises(torch.linalg.LinAlgError):
            fn(torch)
    assert issubclass(zero.linalg.LinAlgError, RuntimeError)
    assert zero.linalg.det(zero.tensor(singular)).item() == 0.0


def test_argument_errors():
    _both_raise(lambda lib: lib.linalg.qr(lib.ones(2, 2), mode="x"), "unrecognized mode 'x'")
    _both_raise(lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"), "UPLO argument to be 'L' or 'U'")
    _both_raise(lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3)), "Incompatible shapes")
    _both_raise(lambda lib: lib.linalg.matrix_power(lib.ones(2, 3), 2), "square matrices")
    _both_raise(lambda lib: lib.linalg.matrix_power(lib.ones(2, 2), 1.5), "must be an int", TypeError)
    _both_raise(lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64)), "same dtype")
    _both_raise(lambda lib: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(4, 1)), "should match")


# -- the compositions (ops/extra/linalg_compositions.py) ----------------------------------------------

def test_products_and_vander():
    a, b, v = _matrix(3, 4), _matrix(4, 2), _matrix(3)
    check_against_torch(lambda lib, x, y: lib.linalg.multi_dot([x, y]), [a, b])
    check_against_torch(lambda lib, x, y, z, w: lib.linalg.multi_dot([x, y, z, w]), [v, a, b, _matrix(2)])
    check_against_torch(lambda lib, x, y: lib.linalg.vecdot(x, y), [_matrix(2, 3), _matrix(3)])
    check_against_torch(lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), [_matrix(2, 3), _matrix(2, 1)])
    for n in (None, 1, 2, 5):
        check_against_torch(lambda lib, x: lib.linalg.vander(x, N=n), [_matrix(2, 3)])
    check_against_torch(lambda lib, x: lib.linalg.vander(x), [np.arange(4)])
    _both_raise(lambda lib: lib.linalg.multi_dot([lib.ones(2, 2)]), "at least 2 tensors")
    _both_raise(lambda lib: lib.linalg.multi_dot([lib.ones(2, 2), lib.ones(3, 2)]), "")


def test_tensor_inverse_and_solve():
    check_against_torch(lambda lib, x: lib.linalg.tensorinv(x.reshape(4, 2, 8), 1), [_matrix(4, 16)])
    check_against_torch(lambda lib, x: lib.linalg.tensorinv(x.reshape(2, 3, 6)), [_matrix(6, 6)])
    check_against_torch(lambda lib, x, y: lib.linalg.tensorsolve(x.reshape(2, 3, 6), y), [_matrix(6, 6), _matrix(2, 3)])
    check_against_torch(lambda lib, x, y: lib.linalg.tensorsolve(x.reshape(6, 2, 3), y, dims=(0,)),
                        [_matrix(6, 6), _matrix(2, 3)])
    _both_raise(lambda lib: lib.linalg.tensorinv(lib.ones(2, 3), 1), "prod")


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf])
def test_cond(p):
    """(PyTorch's backward of cond for the norms through inv fails on an in-place write of its
    own; the gradients are compared for the SVD ones.)"""
    check_against_torch(lambda lib, x: lib.linalg.cond(x, p), [_matrix(2, 4, 4)], rtol=1e-9, atol=1e-9,
                        grad=p in (None, 2, -2))
    if p in (None, 2, -2):
        check_against_torch(lambda lib, x: lib.linalg.cond(x, p), [_matrix(3, 5)], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular(upper, left, unitriangular):
    a, b = _matrix(2, 4, 4) + 4 * np.eye(4), _matrix(1, 4, 3)
    check_against_torch(lambda lib, x, y: lib.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                                      unitriangular=unitriangular),
                        [a, b if left else np.swapaxes(b, -1, -2)], rtol=1e-9, atol=1e-9)


def test_householder_product_and_matrix_exp():
    check_against_torch(lambda lib, x, t: lib.linalg.householder_product(x, t), [_matrix(2, 5, 3), _matrix(2, 2)])
    check_against_torch(lambda lib, x, t: lib.linalg.householder_product(x, t), [_matrix(3, 3), _matrix(3)])
    reflectors, tau = torch.geqrf(torch.tensor(_matrix(5, 3)))   # Q of geqrf's reflectors is QR's Q
    q = zero.linalg.householder_product(zero.tensor(reflectors.numpy()), zero.tensor(tau.numpy()))
    np.testing.assert_allclose(q.numpy(), torch.linalg.householder_product(reflectors, tau).numpy(), atol=1e-12)
    for scale in (0.1, 1.0, 6.0):
        check_against_torch(lambda lib, x: lib.linalg.matrix_exp(x), [_matrix(2, 4, 4) * scale], rtol=1e-10,
                            atol=1e-10)
    check_against_torch(lambda lib, x: lib.matrix_exp(x), [_matrix(3, 3, dtype="float32")], rtol=1e-5, atol=1e-5)
    check_against_torch(lambda lib, x: x.matrix_exp(), [np.zeros((2, 2))])


# -- LU and the _ex forms (ops/extra/linalg_lu.py) ------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (2, 5, 3), (1, 1)])
def test_lu_factorisations(shape):
    """Values, pivots (int32, 1-based) and gradients as PyTorch's (the same pivots: LAPACK's rule)."""
    a = _matrix(*shape)
    for fn in (lambda lib, x: lib.linalg.lu_factor(x), lambda lib, x: lib.linalg.lu_factor_ex(x),
               lambda lib, x: lib.linalg.lu(x)):
        check_against_torch(fn, [a], rtol=1e-10, atol=1e-10)
    check_against_torch(lambda lib, x: lib.linalg.lu(x), [a.astype("float32")], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve(left, adjoint):
    a, b = _matrix(2, 4, 4), _matrix(2, 4, 3)

    def fn(lib, x, y):
        factors = lib.linalg.lu_factor(x)
        return lib.linalg.lu_solve(factors.LU, factors.pivots, y, left=left, adjoint=adjoint)
    check_against_torch(fn, [a, b if left else np.swapaxes(b, -1, -2)], rtol=1e-9, atol=1e-9)


def test_ex_forms_report_failures():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]])
    not_definite = np.array([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 1.0], [1.0, 3.0]], [[-1.0, 0.0], [0.0, 1.0]]])
    for fn, x in [(lambda lib, a: lib.linalg.lu_factor_ex(a).info, singular),
                  (lambda lib, a: lib.linalg.inv_ex(a).info, singular),
                  (lambda lib, a: lib.linalg.solve_ex(a, a[..., 0]).info, singular),
                  (lambda lib, a: lib.linalg.cholesky_ex(a).info, not_definite)]:
        check_against_torch(fn, [x])
    # where they succeed, the results are the plain functions'
    check_against_torch(lambda lib, a: lib.linalg.inv_ex(a), [_matrix(2, 3, 3)])
    check_against_torch(lambda lib, a, b: lib.linalg.solve_ex(a, b), [_matrix(2, 3, 3), _matrix(3, 2)])
    check_against_torch(lambda lib, a: lib.linalg.cholesky_ex(a, upper=True), [_spd(2, 3, 3)])
    inverse, info = zero.linalg.inv_ex(zero.tensor(singular))
    assert info.tolist() == [2, 0] and np.isnan(inverse[0].numpy()).all()
    np.testing.assert_allclose(inverse[1].numpy(), np.linalg.inv(singular[1]))
    for call in (lambda lib: lib.linalg.inv_ex(lib.tensor(singular), check_errors=True),
                 lambda lib: lib.linalg.lu_factor(lib.tensor(singular)),
                 lambda lib: lib.linalg.lu_factor(lib.eye(2), pivot=False),
                 lambda lib: lib.linalg.cholesky_ex(lib.tensor(not_definite), check_errors=True)):
        _both_raise(call, "")


# -- on another device (the GPU, or "cuda" played by the CPU): no tensor made on the wrong one ---------

DEVICE_CASES = {
    "det": lambda L, a, s, b: L.det(a), "slogdet": lambda L, a, s, b: L.slogdet(a).logabsdet,
    "inv": lambda L, a, s, b: L.inv(a), "solve": lambda L, a, s, b: L.solve(a, b, left=False),
    "cholesky": lambda L, a, s, b: L.cholesky(s), "qr": lambda L, a, s, b: L.qr(a).R,
    "svd": lambda L, a, s, b: L.svd(a).S, "svdvals": lambda L, a, s, b: L.svdvals(a),
    "eigh": lambda L, a, s, b: L.eigh(s).eigenvalues, "eigvalsh": lambda L, a, s, b: L.eigvalsh(s),
    "pinv": lambda L, a, s, b: L.pinv(a), "pinv_hermitian": lambda L, a, s, b: L.pinv(s, hermitian=True),
    "matrix_power": lambda L, a, s, b: L.matrix_power(a, -2) + L.matrix_power(a, 0),
    "matrix_rank": lambda L, a, s, b: L.matrix_rank(a).to(a.dtype),
    "lstsq": lambda L, a, s, b: L.lstsq(a, b.mT).solution, "nuc": lambda L, a, s, b: L.matrix_norm(a, "nuc"),
    "vander": lambda L, a, s, b: L.vander(b[0]), "cond": lambda L, a, s, b: L.cond(a, 1),
    "solve_triangular": lambda L, a, s, b: L.solve_triangular(s, b.mT, upper=True, unitriangular=True),
    "householder": lambda L, a, s, b: L.householder_product(a, b[..., 0]),
    "matrix_exp": lambda L, a, s, b: L.matrix_exp(a),
    "lu": lambda L, a, s, b: L.lu(a).L, "lu_solve": lambda L, a, s, b: L.lu_solve(*L.lu_factor(a), b.mT),
    "inv_ex": lambda L, a, s, b: L.inv_ex(a).inverse, "cholesky_ex": lambda L, a, s, b: L.cholesky_ex(s).L,
}


@pytest.mark.parametrize("name", sorted(DEVICE_CASES))
def test_on_another_device(name, second_device):
    a, s, b = _matrix(2, 3, 3), _spd(2, 3, 3), _matrix(2, 2, 3)
    want = DEVICE_CASES[name](zero.linalg, *(zero.tensor(x) for x in (a, s, b)))
    inputs = [zero.tensor(x, device=second_device, requires_grad=True) for x in (a, s, b)]
    got = DEVICE_CASES[name](zero.linalg, *inputs)
    assert got.device == second_device
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.numpy(), rtol=1e-9, atol=1e-9)
    if got.requires_grad:
        got.sum().backward()
        assert any(x.grad is not None and x.grad.device == second_device for x in inputs)


def test_det_gradient_at_singular_matrices():
    """0 where det is exactly 0 (PyTorch 2.13's answer there), g det A^-T for the others."""
    rank_deficient = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], [[1.0, 2.0, 0.5], [2.0, 4.0, 1.0],
                                                                                       [1.0, 0.0, 1.0]]])
    check_against_torch(lambda lib, x: lib.linalg.det(x), [rank_deficient], rtol=1e-10, atol=1e-10)
    check_against_torch(lambda lib, x: lib.linalg.det(x), [np.zeros((2, 2))])
    check_against_torch(lambda lib, x: lib.linalg.det(x), [np.stack([rank_deficient[0], _matrix(3, 3)])])
