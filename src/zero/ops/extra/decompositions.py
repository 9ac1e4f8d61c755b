"""PyTorch's linalg determinants, inverse, solve and Cholesky factor, batched over leading dims:

    det(A)                  det(A); gradient g det(A) A^-T
    slogdet(A)              (sign, logabsdet); gradient of logabsdet g A^-T (of sign 0)
    inv(A)                  X = A^-1; gradient -X^T g X^T
    solve(A, B, left)       X = A^-1 B (left) or B A^-1; gradients gB = A^-T g, gA = -gB X^T
    cholesky(A, upper)      L lower with A = L L^T (U = L^T for upper); Murray's gradient
                            gA = sym(L^-T phi(L^T gL) L^-1), phi: the lower triangle, its
                            diagonal halved, sym(X) = (X + X^T) / 2

Each forward is one kernel (LAPACK through NumPy on the CPU, cuSOLVER through CuPy on CUDA);
each backward a composition of these ops and matmul. Inputs are float32 or float64 (PyTorch
refuses float16 and integers too); a singular matrix (inv, solve) or one that is not
positive-definite (cholesky) raises ``LinAlgError``, a RuntimeError, as PyTorch's does.
(At an exactly singular matrix, det 0, the gradient is 0, as PyTorch 2.13 gives it -- not
the adjugate, the limit from nearby matrices.)
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import LinAlgDTypeError, LinAlgError, LinAlgShapeError, describe
from ...tensors.creation import eye
from ...tensors.meta import broadcast_shapes
from ...tensors.tensor import Tensor
from ..elementwise import Where
from ..joining import tril


def check_matrices(op: str, name: str, a: object, square: bool = True) -> Tensor:
    """``a`` is a float32/float64 tensor of (batches of) matrices, square if asked; PyTorch's
    wording, ``op`` as PyTorch names it (``linalg.inv``)."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: {name} must be a tensor, got {describe(a)}")
    if a.dtype in (dtypes.float16, dtypes.bfloat16):
        raise LinAlgDTypeError(f"{op}: Low precision dtypes not supported. Got {describe(a)}")
    if not a.dtype.is_floating_point:
        raise LinAlgDTypeError(f"{op}: Expected a floating point tensor as input. Got {describe(a)}")
    if a.ndim < 2:
        raise LinAlgShapeError(f"{op}: The input tensor {name} must have at least 2 dimensions, got {describe(a)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgShapeError(f"{op}: {name} must be batches of square matrices, but they are "
                               f"{a.shape[-2]} by {a.shape[-1]} matrices")
    return a


def _empty(a: Tensor, shape: tuple[int, ...]) -> Tensor:
    return Tensor._empty(shape, a.dtype, a.device)


def right_solve(a: Tensor, x: Tensor) -> Tensor:
    """x a^-1 (for the backward formulas): (a^-T x^T)^T."""
    return Solve.apply(a.mT, x.mT).mT


class Det(Op):
    def forward(self, a: Tensor) -> Tensor:
        out = _empty(a, a.shape[:-2])
        a.device.kernels.det(a._array, out._array)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        a, det_a = self.saved_tensors
        try:
            return ((grad * det_a)[..., None, None] * Inv.apply(a).mT,)
        except LinAlgError:             # a singular matrix in the batch: its gradient g 0 A^-T = 0
            singular = (det_a == 0)[..., None, None]
            regular = Where.apply(singular, eye(a.shape[-1], dtype=a.dtype, device=a.device), a)
            return ((grad * det_a)[..., None, None] * Inv.apply(regular).mT,)


class Slogdet(Op):
    """sign and logabsdet packed in one output (..., 2), so that both are recorded (PyTorch's
    sign requires grad too, its gradient 0)."""

    def forward(self, a: Tensor) -> Tensor:
        packed = _empty(a, a.shape[:-2] + (2,))
        a.device.kernels.slogdet(a._array, packed._array[..., 0], packed._array[..., 1])
        self.save_for_backward(a)
        return packed

    def backward(self, grad: Tensor) -> Grads:
        (a,) = self.saved_tensors
        return (grad[..., 1, None, None] * Inv.apply(a).mT,)


class Inv(Op):
    def forward(self, a: Tensor) -> Tensor:
        out = _empty(a, a.shape)
        try:
            a.device.kernels.inv(a._array, out._array)
        except LinAlgError:
            raise LinAlgError(f"linalg.inv: the inversion could not be completed because the input matrix "
                              f"{describe(a)} is singular") from None
        self.save_for_backward(out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        return (-(x.mT @ grad @ x.mT),)


class Solve(Op):
    """X = A^-1 B for A (..., n, n) and B (..., n, k) of one batch shape."""

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        out = _empty(a, b.shape)
        try:
            a.device.kernels.solve(a._array, b._array, out._array)
        except LinAlgError:
            raise LinAlgError(f"torch.linalg.solve: The solver failed because the input matrix {describe(a)} "
                              "is singular.") from None
        self.save_for_backward(a, out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        a, x = self.saved_tensors
        grad_b = Solve.apply(a.mT, grad)
        return (-(grad_b @ x.mT) if self.needs_input_grad[0] else None, grad_b)


class Cholesky(Op):
    def forward(self, a: Tensor) -> Tensor:
        out = _empty(a, a.shape)
        try:
            a.device.kernels.cholesky(a._array, out._array)
        except LinAlgError:
            raise LinAlgError(f"linalg.cholesky: The factorization could not be completed because the input "
                              f"{describe(a)} is not positive-definite.") from None
        self.save_for_backward(out)
        return out

    def backward(self, grad: Tensor) -> Grads:
        (lower,) = self.saved_tensors
        product = lower.mT @ tril(grad)                       # L^T gL
        phi = tril(product, -1) + tril(product).diagonal(0, -2, -1).diag_embed() * 0.5
        grad_a = right_solve(lower, Solve.apply(lower.mT, phi))   # L^-T phi L^-1
        return ((grad_a + grad_a.mT) * 0.5,)


# -- the functions ---------------------------------------------------------------------------------


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


def det(A: Tensor, *, out: None = None) -> Tensor:
    """The determinants of A (..., n, n)."""
    return Det.apply(check_matrices("linalg.det", "A", A))


def slogdet(A: Tensor, *, out: None = None) -> SlogdetResult:
    """(sign, log |det|) of A (..., n, n); det = sign * exp(logabsdet)."""
    packed = Slogdet.apply(check_matrices("linalg.slogdet", "A", A))
    return SlogdetResult(packed[..., 0], packed[..., 1])


def logdet(input: Tensor) -> Tensor:
    """log det(A): nan where det < 0, -inf where it is 0 (torch.logdet)."""
    sign, logabsdet = slogdet(input)
    return Where.apply(sign < 0, math.nan, logabsdet)


def inv(A: Tensor, *, out: None = None) -> Tensor:
    """A^-1 of A (..., n, n); singular: LinAlgError."""
    return Inv.apply(check_matrices("linalg.inv", "A", A))


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: None = None) -> Tensor:
    """X with A X = B (left) or X A = B; B (..., n, k), or a vector (n,) / (..., n) -- a batch
    of vectors when B has one dim less than A and A's leading shape; batch dims broadcast."""
    check_matrices("linalg.solve", "A", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve: B must be a tensor, got {describe(B)}")
    if B.dtype is not A.dtype:
        raise LinAlgDTypeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                               f"{describe(A)} and B of type {describe(B)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        B = B.unsqueeze(-1)                 # (a column: for left=False, refused below unless n = 1)
    n = A.shape[-1]
    if B.ndim < 2 or (B.shape[-2] if left else B.shape[-1]) != n:
        raise LinAlgShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and "
                               f"{'x'.join(map(str, B.shape[-2:]))})")
    if not left:
        return solve(A.mT, B.mT).mT
    batch = broadcast_shapes(A.shape[:-2], B.shape[:-2], op="linalg.solve")
    a = A.expand(batch + A.shape[-2:]) if A.shape[:-2] != batch else A
    b = B.expand(batch + B.shape[-2:]) if B.shape[:-2] != batch else B
    x = Solve.apply(a, b)
    return x.squeeze(-1) if vector else x


def cholesky(A: Tensor, *, upper: bool = False, out: None = None) -> Tensor:
    """L lower-triangular with A = L L^T (upper: U = L^T, A = U^T U) of a symmetric
    positive-definite A (..., n, n), read from its lower triangle; otherwise LinAlgError."""
    lower = Cholesky.apply(check_matrices("linalg.cholesky", "A", A))
    return lower.mT.contiguous() if upper else lower
