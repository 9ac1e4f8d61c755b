"""Fused linear (x Wᵀ + b) and feed-forward (linear -> GELU -> linear) kernels.

Every product is one BLAS GEMM over all rows; a transposed weight is a transposed view,
never a copy. The FFN's hidden activation (N, H) exists only inside a call: forward
drops it, backward recomputes it from x (one GEMM) and turns it into the GELU output
and the hidden gradient in a single Numba pass.
"""
from __future__ import annotations

import numpy as np

from ._fastmath import gelu, gelu_with_slope
from ._fused_support import column_sums, scratch, shaped
from ._jit import njit

__all__ = ["ffn_backward", "ffn_forward", "linear_backward", "linear_forward"]


# -- linear -----------------------------------------------------------------------------------


def linear_forward(x, weight, bias, out) -> None:
    """out (N, OUT) = x (N, IN) @ weight (OUT, IN)ᵀ + bias (OUT,)."""
    np.matmul(x, weight.T, out=out)
    if bias is not None:
        out += bias


def linear_backward(grad_out, x, weight, grad_x, grad_weight, grad_bias) -> None:
    """grad_x = grad_out @ weight; grad_weight = grad_outᵀ @ x; grad_bias = column sums."""
    if grad_x is not None:
        np.matmul(grad_out, weight, out=grad_x)
    if grad_weight is not None:
        np.matmul(grad_out.T, x, out=grad_weight)
    if grad_bias is not None:
        column_sums(grad_out, grad_bias)


# -- feed-forward -----------------------------------------------------------------------------


def ffn_forward(x, w1, b1, w2, b2, approximate: str, out, kept=None) -> None:
    """out (N, C2) = gelu(x @ w1ᵀ + b1) @ w2ᵀ + b2; x @ w1ᵀ left in ``kept`` when given."""
    tanh = approximate == "tanh"
    rows, hidden = x.shape[0], w1.shape[0]
    h = shaped(scratch(rows * hidden, x.dtype), rows, hidden)           # (N, H)
    if kept is not None:
        np.matmul(x, w1.T, out=kept)
        np.copyto(h, kept)
    else:
        np.matmul(x, w1.T, out=h)
    # h <- gelu(h + b1); the unused gradient is an empty array, not h: an alias would make
    # the loop's runtime overlap check fail and run it unvectorised
    _bias_gelu(h, _bias_or_zeros(b1, h), np.empty((rows, 0), h.dtype), tanh, False)
    np.matmul(h, w2.T, out=out)
    if b2 is not None:
        out += b2


def ffn_backward(grad_out, x, w1, b1, w2, approximate: str, grad_x, grad_w1, grad_b1, grad_w2,
                 grad_b2, kept=None) -> None:
    """h = x @ w1ᵀ + b1 (from ``kept`` or recomputed), then with a = gelu(h) and
    dh = (grad_out @ w2) * gelu'(h):
    grad_w2 = grad_outᵀ @ a, grad_b2 = sums of grad_out, grad_w1 = dhᵀ @ x,
    grad_b1 = sums of dh, grad_x = dh @ w1."""
    tanh = approximate == "tanh"
    rows, hidden = x.shape[0], w1.shape[0]
    activation = shaped(scratch(rows * hidden, x.dtype), rows, hidden)           # (N, H)
    grad_hidden = shaped(scratch(rows * hidden, x.dtype), rows, hidden)          # (N, H)
    if kept is not None:
        np.copyto(activation, kept)
    else:
        np.matmul(x, w1.T, out=activation)
    np.matmul(grad_out, w2, out=grad_hidden)                  # d loss / d gelu output
    # activation <- gelu(h + b1); grad_hidden <- grad_hidden * gelu'(h + b1), in one pass
    _bias_gelu(activation, _bias_or_zeros(b1, activation), grad_hidden, tanh, True)
    if grad_w2 is not None:
        np.matmul(grad_out.T, activation, out=grad_w2)
    if grad_b2 is not None:
        column_sums(grad_out, grad_b2)
    del activation                                            # its block goes back to the pool now
    if grad_w1 is not None:
        np.matmul(grad_hidden.T, x, out=grad_w1)
    if grad_b1 is not None:
        column_sums(grad_hidden, grad_b1)
    if grad_x is not None:
        np.matmul(grad_hidden, w1, out=grad_x)


def _bias_or_zeros(bias, like):
    return np.ascontiguousarray(bias) if bias is not None else np.zeros(like.shape[1], like.dtype)


def _bias_gelu_row(tanh: bool, want_grad: bool):
    """The pass over one row of the hidden layer, for one GELU form, with or without the
    gradient (both constants inside the loop, so it holds no branch): v = h + bias;
    h <- gelu(v); with ``want_grad``, grad <- grad * gelu'(v) as well. At h's precision,
    through the vectorisable helpers of ``_fastmath`` (libm's erf and tanh are scalar
    calls, 3-10x slower than this whole pass)."""
    @njit
    def row_pass(h, bias, grad):      # h, bias (H,); grad (H,), or (0,) without want_grad
        for j in range(h.size):
            v = h[j] + bias[j]
            if want_grad:
                value, slope = gelu_with_slope(v, tanh)
                h[j] = value
                grad[j] *= slope
            else:
                h[j] = gelu(v, tanh)
    return row_pass


_erf_row, _erf_grad_row = _bias_gelu_row(False, False), _bias_gelu_row(False, True)
_tanh_row, _tanh_grad_row = _bias_gelu_row(True, False), _bias_gelu_row(True, True)


@njit
def _bias_gelu(h, bias, grad, tanh, want_grad):
    """h (N, H); grad (N, H), or (N, 0) without want_grad: a call of the row pass of this
    form per row (measured 25 % faster than one loop indexing h[r, j], 2048 x 512 float32).
    The row passes are module globals, not closure variables: Numba's cache key includes
    what a closure holds, and a compiled function there differs from process to process."""
    for r in range(h.shape[0]):
        if tanh:
            if want_grad:
                _tanh_grad_row(h[r], bias, grad[r])
            else:
                _tanh_row(h[r], bias, grad[r])
        elif want_grad:
            _erf_grad_row(h[r], bias, grad[r])
        else:
            _erf_row(h[r], bias, grad[r])
