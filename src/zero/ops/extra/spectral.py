"""PyTorch's linalg factorisations with several outputs, and what is built on them, batched
over leading dims:

    qr(A, mode)            Q R, mode "reduced" / "complete" / "r"
    svd(A, full_matrices)  U diag(S) Vh;  svdvals(A): S
    eigh(A, UPLO)          (eigenvalues L ascending, eigenvectors V);  eigvalsh(A, UPLO): L
    pinv(A, atol, rtol, hermitian)     V diag(1/s, the small ones 0) U^T, PyTorch's gradient
    matrix_power(A, n)     repeated squaring (n < 0: of inv(A))
    lstsq(A, B, rcond, driver)         the least-squares (minimum-norm) solution pinv(A) B

An op records one output in the graph, so QR, SVD and eigh write their factors into one
packed tensor (..., size of all factors) and return views of it (``_parts``): a loss on any
of them reaches the op, whose backward reads the factors' gradients from the packed one.
The gradients (real case) are PyTorch's:

    QR (m >= n)   M = R gR^T - gQ^T Q;  gA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = the lower
                  triangle of M mirrored; m < n: A = [X | Y], the square case on X with
                  gQ + Y gV^T, and gY = Q gV
    SVD           gA = U [skew(U^T gU) / E S + S skew(V^T gV) / E + diag(gS)] Vh
                  + (I - U U^T) gU S^-1 Vh (m > k) + U S^-1 gVh (I - V V^T) (n > k),
                  skew(X) = X - X^T, E_ij = s_j^2 - s_i^2
    eigh          gA = V [diag(gL) + (skew(V^T gV) / 2) / E] V^T, E_ij = l_j - l_i

Singular vectors and eigenvectors are unique only up to sign: the gradient is defined for
losses that do not depend on that choice (PyTorch's rule), and is infinite where singular
values or eigenvalues repeat.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import LinAlgShapeError, describe
from ...tensors.creation import eye
from ...tensors.meta import Shape, contiguous_strides
from ...tensors.tensor import Tensor
from ..new_memory import new_memory
from ..elementwise import Where
from ..joining import cat, tril
from .decompositions import Inv, check_matrices, right_solve


def _packed(a: Tensor, shapes: list[Shape]) -> tuple[Tensor, list[Tensor]]:
    """A new (..., total) tensor for factors of ``shapes`` (batch dims of a first), and
    graph-free views of each factor for the kernel to write into."""
    batch = a.shape[:-2]
    sizes = [math.prod(s) for s in shapes]
    packed = Tensor._empty(batch + (sum(sizes),), a.dtype, a.device)
    leading = contiguous_strides(packed.shape)[:-1]
    views, start = [], 0
    for shape, size in zip(shapes, sizes):
        views.append(packed._view_as(batch + shape, leading + contiguous_strides(shape), start))
        start += size
    return packed, views


def _parts(packed: Tensor, shapes: list[Shape]) -> list[Tensor]:
    """The factors of a packed tensor as (differentiable) tensors."""
    batch, parts, start = packed.shape[:-1], [], 0
    for shape in shapes:
        size = math.prod(shape)
        parts.append(packed[..., start:start + size].reshape(batch + shape))
        start += size
    return parts


def _diag(v: Tensor) -> Tensor:
    return v.diag_embed()


def _eye_like(a: Tensor, n: int) -> Tensor:
    return eye(n, dtype=a.dtype, device=a.device)


def _qr_square_backward(q: Tensor, r: Tensor, grad_q: Tensor, grad_r: Tensor) -> Tensor:
    """gA for A = Q R with m >= n, reduced."""
    m = r @ grad_r.mT - grad_q.mT @ q
    copyltu = tril(m) + tril(m, -1).mT
    return right_solve(r.mT, grad_q + q @ copyltu)         # (...) R^-T


def _qr_shapes(a: Tensor, mode: str) -> list[Shape]:
    """Q's and R's shapes (Q (0, 0) for mode "r")."""
    rows, columns = a.shape[-2:]
    k = rows if mode == "complete" else min(rows, columns)
    return [(rows, k), (k, columns)] if mode != "r" else [(0, 0), (k, columns)]


class QR(Op):
    def forward(self, a: Tensor, mode: str) -> Tensor:
        rows, columns = a.shape[-2:]
        self.shapes = _qr_shapes(a, mode)
        packed, (q, r) = _packed(a, self.shapes)
        a.device.kernels.qr(a._array, None if mode == "r" else q._array, r._array, mode == "complete")
        self.mode, self.rows, self.columns = mode, rows, columns
        self.save_for_backward(packed, a)
        return packed

    def backward(self, grad: Tensor) -> Grads:
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        if self.mode == "complete" and self.rows > self.columns:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")
        packed, a = self.saved_tensors
        q, r = _parts(packed, self.shapes)
        grad_q, grad_r = _parts(grad.contiguous(), self.shapes)
        if self.rows >= self.columns:
            return (_qr_square_backward(q, r, grad_q, grad_r), None)
        m = self.rows                                      # wide: A = [X | Y], R = [U | V]
        y, grad_u, grad_v = a[..., m:], grad_r[..., :m], grad_r[..., m:]
        grad_x = _qr_square_backward(q, r[..., :m], grad_q + y @ grad_v.mT, grad_u)
        return (cat([grad_x, q @ grad_v], -1), None)


class SVD(Op):
    def forward(self, a: Tensor, full_matrices: bool) -> Tensor:
        rows, columns = a.shape[-2:]
        k = min(rows, columns)
        self.shapes: list[Shape] = ([(rows, rows if full_matrices else k), (k,),
                                     (columns if full_matrices else k, columns)])
        packed, (u, s, vh) = _packed(a, self.shapes)
        a.device.kernels.svd(a._array, u._array, s._array, vh._array)
        self.k = k
        self.save_for_backward(packed)
        return packed

    def backward(self, grad: Tensor) -> Grads:
        (packed,) = self.saved_tensors
        k = self.k
        u, s, vh = (p.contiguous() for p in _parts(packed, self.shapes))
        grad_u, grad_s, grad_vh = _parts(grad.contiguous(), self.shapes)
        u, vh, grad_u, grad_vh = u[..., :k], vh[..., :k, :], grad_u[..., :k], grad_vh[..., :k, :]   # (full: narrowed)
        v, grad_v = vh.mT, grad_vh.mT
        rows, columns = u.shape[-2], v.shape[-2]
        squares = s * s
        gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1)          # E_ij = s_j^2 - s_i^2
        gaps = gaps + _eye_like(s, k)                                 # (the diagonal is not used)
        uu, vv = u.mT @ grad_u, v.mT @ grad_v
        inner = ((uu - uu.mT) / gaps) * s.unsqueeze(-2) + s.unsqueeze(-1) * ((vv - vv.mT) / gaps) + _diag(grad_s)
        grad_a = u @ inner @ vh
        if rows > k:
            grad_a = grad_a + (grad_u - u @ uu) / s.unsqueeze(-2) @ vh
        if columns > k:
            grad_a = grad_a + u @ ((grad_vh - vv.mT @ vh) / s.unsqueeze(-1))
        return (grad_a, None)


class Eigh(Op):
    def forward(self, a: Tensor, upper: bool) -> Tensor:
        n = a.shape[-1]
        self.shapes: list[Shape] = [(n,), (n, n)]
        packed, (w, v) = _packed(a, self.shapes)
        a.device.kernels.eigh(a._array, upper, w._array, v._array)
        self.save_for_backward(packed)
        return packed

    def backward(self, grad: Tensor) -> Grads:
        (packed,) = self.saved_tensors
        w, v = (p.contiguous() for p in _parts(packed, self.shapes))
        grad_w, grad_v = _parts(grad.contiguous(), self.shapes)
        gaps = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye_like(w, w.shape[-1])     # E_ij = l_j - l_i
        vv = v.mT @ grad_v
        inner = ((vv - vv.mT) * 0.5) / gaps + _diag(grad_w)
        return (v @ inner @ v.mT, None)


class Values(Op):
    """The singular values (svdvals) or eigenvalues (eigvalsh) alone: gA = U diag(g) Vh (V
    diag(g) V^T), the vectors computed in forward only when a gradient will be wanted."""

    def forward(self, a: Tensor, kind: str, upper: bool) -> Tensor:
        rows, columns = a.shape[-2:]
        k = min(rows, columns)
        values = Tensor._empty(a.shape[:-2] + (k,), a.dtype, a.device)
        self.kind = kind
        if not self.recording:
            if kind == "svd":
                a.device.kernels.svd(a._array, None, values._array, None)
            else:
                a.device.kernels.eigh(a._array, upper, values._array, None)
            return values
        if kind == "svd":
            packed, (u, s, vh) = _packed(a, [(rows, k), (k,), (k, columns)])
            a.device.kernels.svd(a._array, u._array, s._array, vh._array)
            self.save_for_backward(u, vh)
            a.device.kernels.copy(s._array, values._array)
        else:
            packed, (w, v) = _packed(a, [(k,), (k, k)])
            a.device.kernels.eigh(a._array, upper, w._array, v._array)
            self.save_for_backward(v, v.mT)
            a.device.kernels.copy(w._array, values._array)
        return values

    def backward(self, grad: Tensor) -> Grads:
        left, right = self.saved_tensors
        return ((left * grad.unsqueeze(-2)) @ right, None, None)


# -- the functions ---------------------------------------------------------------------------------


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def qr(A: Tensor, mode: str = "reduced", *, out: None = None) -> QRResult:
    """A = Q R: Q (..., m, k) with orthonormal columns, R (..., k, n) upper-triangular;
    k = min(m, n) ("reduced"), m ("complete"); "r": R only (Q empty, no gradient)."""
    check_matrices("linalg.qr", "A", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"linalg.qr: received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    q, r = _parts(QR.apply(A, mode), _qr_shapes(A, mode))
    return QRResult(A.new_zeros((0,)) if mode == "r" else q, r)


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: None = None) -> SVDResult:
    """A = U diag(S) Vh: S (..., k) descending, k = min(m, n); U (..., m, m) and Vh (..., n, n)
    (full_matrices) or U (..., m, k) and Vh (..., k, n)."""
    check_matrices("linalg.svd", "A", A, square=False)
    rows, columns = A.shape[-2:]
    k = min(rows, columns)
    shapes: list[Shape] = [(rows, rows if full_matrices else k), (k,), (columns if full_matrices else k, columns)]
    return SVDResult(*_parts(SVD.apply(A, bool(full_matrices)), shapes))


def svdvals(A: Tensor, *, driver: str | None = None, out: None = None) -> Tensor:
    """The singular values of A (..., m, n), descending."""
    return Values.apply(check_matrices("linalg.svdvals", "A", A, square=False), "svd", False)


def _uplo(op: str, UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


def eigh(A: Tensor, UPLO: str = "L", *, out: None = None) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of the symmetric A (..., n, n), read
    from its lower ("L") or upper ("U") triangle."""
    upper = _uplo("linalg.eigh", UPLO)
    check_matrices("linalg.eigh", "A", A)
    n = A.shape[-1]
    values, vectors = _parts(Eigh.apply(A, upper), [(n,), (n, n)])
    return EighResult(values, vectors)


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: None = None) -> Tensor:
    """The eigenvalues (ascending) of the symmetric A (..., n, n) read from one triangle."""
    upper = _uplo("linalg.eigvalsh", UPLO)
    return Values.apply(check_matrices("linalg.eigvalsh", "A", A), "eigh", upper)


def _tolerance(s_max: Tensor, atol: float | Tensor | None, rtol: float | Tensor | None, default_rtol: float) -> Tensor:
    """max(atol, rtol * s_max), PyTorch's rule: rtol defaults to eps * max(m, n) when atol is
    not given (or is 0), to 0 otherwise."""
    if rtol is None:
        rtol = default_rtol if atol is None or (not isinstance(atol, Tensor) and atol == 0) else 0.0
    bound = s_max * rtol
    if atol is None:
        return bound
    return bound.maximum(atol if isinstance(atol, Tensor) else bound.new_full((), float(atol)))


def _pseudo_inverse(A: Tensor, atol: float | Tensor | None, rtol: float | Tensor | None, hermitian: bool) -> Tensor:
    rows, columns = A.shape[-2:]
    default_rtol = dtypes.finfo(A.dtype).eps * max(rows, columns)
    if rows == 0 or columns == 0:
        return A.new_zeros(A.shape[:-2] + (columns, rows))
    if hermitian:
        values, vectors = eigh(A)
        magnitude = values.abs()
        bound = _tolerance(magnitude.amax(-1, keepdim=True), atol, rtol, default_rtol)
        kept = magnitude > bound
        inverse = Where.apply(kept, 1 / Where.apply(kept, values, 1.0), 0.0)
        return (vectors * inverse.unsqueeze(-2)) @ vectors.mT
    u, s, vh = svd(A, full_matrices=False)
    bound = _tolerance(s[..., :1], atol, rtol, default_rtol)
    kept = s > bound
    inverse = Where.apply(kept, 1 / Where.apply(kept, s, 1.0), 0.0)
    return (vh.mT * inverse.unsqueeze(-2)) @ u.mT


class Pinv(Op):
    """P = pinv(A) from the SVD (eigh if hermitian); PyTorch's gradient, that of the
    pseudo-inverse at constant rank:
        gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)."""

    def forward(self, a: Tensor, atol: float | Tensor | None, rtol: float | Tensor | None,
                hermitian: bool) -> Tensor:
        out = _pseudo_inverse(a.detach(), atol, rtol, hermitian)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        a, p = self.saved_tensors
        p_t, grad_t = p.mT, grad.mT
        grad_a = (-(p_t @ grad @ p_t) + (grad_t - a @ (p @ grad_t)) @ (p @ p_t)
                  + (p_t @ p) @ (grad_t - (grad_t @ p) @ a))
        return (grad_a, None, None, None)


def pinv(A: Tensor, *, atol: float | Tensor | None = None, rtol: float | Tensor | None = None,
         hermitian: bool = False, out: None = None) -> Tensor:
    """The pseudo-inverse of A (..., m, n): its singular values below max(atol, rtol * the
    largest) are taken as 0; hermitian: from eigh of the symmetric A (its lower triangle)."""
    check_matrices("linalg.pinv", "A", A, square=hermitian)
    return Pinv.apply(A, atol, rtol, hermitian)


def matrix_rank(A: Tensor, *, atol: float | Tensor | None = None, rtol: float | Tensor | None = None,
                hermitian: bool = False, out: None = None) -> Tensor:
    """How many singular values (|eigenvalues| if hermitian) of A (..., m, n) exceed
    max(atol, rtol * the largest), int64; rtol as pinv's."""
    check_matrices("linalg.matrix_rank", "A", A, square=hermitian)
    rows, columns = A.shape[-2:]
    if rows == 0 or columns == 0:
        return A.new_zeros(A.shape[:-2], dtype=dtypes.int64)
    values = eigvalsh(A.detach()).abs() if hermitian else svdvals(A.detach())
    bound = _tolerance(values.amax(-1, keepdim=True), atol, rtol, dtypes.finfo(A.dtype).eps * max(rows, columns))
    return (values > bound).sum(-1)


def matrix_power(A: Tensor, n: int, *, out: None = None) -> Tensor:
    """A^n for A (..., m, m) and an integer n: n = 0 the identity, n < 0 inv(A)^-n."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.matrix_power: A must be a tensor, got {describe(A)}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise LinAlgShapeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                               f"{describe(A)}")
    if n == 0:
        identity = _eye_like(A, A.shape[-1])                # (the batch's identities; A's gradient 0)
        return Where.apply(identity.new_ones(A.shape, dtype=dtypes.bool_), identity, A)
    original = A
    if n < 0:
        A, n = Inv.apply(check_matrices("linalg.matrix_power", "A", A)), -n
    result: Tensor | None = None
    power = A
    while True:                         # repeated squaring: A^n = prod of A^(2^i) over n's bits
        if n & 1:
            result = power if result is None else result @ power
        n >>= 1
        if not n:
            break
        power = power @ power
    assert result is not None
    return new_memory(result, original)                     # (n = 1: A itself, which PyTorch copies)


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> LstsqResult:
    """The least-squares solution X of A X = B, the one of least norm where A's rank is
    deficient (singular values below rcond * the largest ignored; rcond default eps * max(m, n)).
    As PyTorch on the CPU: rank for drivers "gelsy" (the default), "gelsd", "gelss";
    singular_values for "gelsd", "gelss"; residuals (the squared norms of the columns of
    A X - B) when m > n, every A has full rank and the driver is not "gelsy"."""
    check_matrices("linalg.lstsq", "A", A, square=False)
    check_matrices("linalg.lstsq", "B", B, square=False)
    if B.dtype is not A.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"{describe(A)} and {describe(B)}")
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver}")
    rows, columns = A.shape[-2:]
    if B.shape[-2] != rows:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got {describe(A)} "
                           f"and {describe(B)}")
    eps_rcond = dtypes.finfo(A.dtype).eps * max(rows, columns)
    rcond = eps_rcond if rcond is None or rcond < 0 else rcond
    solution = pinv(A, rtol=rcond) @ B
    values = svdvals(A.detach())
    rank = ((values > values[..., :1] * rcond).sum(-1) if driver != "gels"
            else values.new_zeros((0,), dtype=dtypes.int64))
    empty = A.new_zeros((0,))
    residuals = solution.reshape(-1)[:0]        # (empty, and in the graph, as PyTorch's)
    if driver != "gelsy" and rows > columns and bool((rank == columns).all()):
        residuals = ((A @ solution - B) ** 2).sum(-2)
    return LstsqResult(solution, residuals, rank, values if driver in ("gelsd", "gelss") else empty)
