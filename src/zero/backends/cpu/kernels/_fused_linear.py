"""Fused linear (x Wᵀ + b) and feed-forward (linear -> GELU -> linear) kernels.

Every product is a BLAS GEMM; a transposed weight is a transposed view, never a copy.
The FFN's pre-activation x @ w1ᵀ (N, H) is either kept by the op (``kept``, written by
forward) or recomputed by backward from x (one GEMM); backward turns it into the GELU
output and the hidden gradient in a single Numba pass, which reads the kept array
directly (no copy of it), and the GELU output itself exists only inside a call.

Threads. Each kernel splits its own chain of products and loops, as one parallel region
of the CPU pool, not a split per product (a hand-off is not free); how large a part must
be is ``parallel.row_grain``'s. The FFN runs as ranges of the N rows, a range per thread,
each through the whole chain while its rows are in that core's cache: the forward; in
backward the hidden gradient, the GELU pass, grad_x, and then the range's own share of
the weight gradients (gᵀ x over its rows), the shares added after the region
(``_fused_support.weight_gradients_by_rows``: one hand-off instead of two). The products
of row ranges repeat bit for bit for one number of threads. Measured by
``benchmarks/fused.py``; figures in benchmarks/journal/.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...kernel_contract import Array, given
from .. import parallel
from ._fastmath import gelu, gelu_with_slope
from ._fused_support import scratch, shaped, weight_gradients_by_rows
from ._jit import njit
from .elementwise import add_row_in_place
from .linalg import ones_vector

__all__ = ["ffn_backward", "ffn_forward", "linear_backward", "linear_forward"]


# -- linear -----------------------------------------------------------------------------------


def linear_forward(x: Array, weight: Array, bias: Array | None, out: Array) -> None:
    """out (N, OUT) = x (N, IN) @ weight (OUT, IN)ᵀ + bias (OUT,): ranges of rows in
    parallel, or of output features when there are fewer rows than features (each thread
    then reads only its share of the weight, not all of it)."""
    parallel.single_threaded_blas()
    samples, features = x.shape[0], weight.shape[0]

    def rows(lo: int, hi: int) -> None:
        np.matmul(x[lo:hi], weight.T, out=out[lo:hi])
        if bias is not None:
            add_row_in_place(out[lo:hi], bias)

    def columns(lo: int, hi: int) -> None:
        np.matmul(x, weight[lo:hi].T, out=out[:, lo:hi])
        if bias is not None:
            out[:, lo:hi] += bias[lo:hi]

    if samples >= features:
        parallel.parallel_for(samples, rows, parallel.row_grain(2 * weight.size))
    else:
        parallel.parallel_for(features, columns, parallel.row_grain(2 * x.size))


def linear_backward(grad_out: Array, x: Array | None, weight: Array | None, grad_x: Array | None,
                    grad_weight: Array | None, grad_bias: Array | None) -> None:
    """grad_x = grad_out @ weight; grad_weight = grad_outᵀ @ x; grad_bias = column sums of
    grad_out, as the product ones @ grad_out (more accurate in float32 than np.sum: BLAS
    keeps several partial sums). x is None when grad_weight is not wanted, weight when
    grad_x is not. One region: part i takes the i-th share of grad_x's rows and of the
    weight gradients' rows."""
    parallel.single_threaded_blas()
    rows, width = grad_out.shape
    ones = ones_vector(rows, grad_out.dtype) if grad_bias is not None else None

    def part(i: int, parts: int) -> Callable[[], None]:
        def run() -> None:
            mine, outputs = parallel.share(rows, i, parts), parallel.share(width, i, parts)
            if grad_x is not None:
                np.matmul(grad_out[mine], given(weight), out=grad_x[mine])
            if grad_weight is not None:
                np.matmul(grad_out[:, outputs].T, given(x), out=grad_weight[outputs])
            if grad_bias is not None:
                np.matmul(given(ones), grad_out[:, outputs], out=grad_bias[outputs])
        return run

    in_features = given(weight, x).shape[1]    # either may be None: not needed
    parts = min(len(parallel.ranges(rows, parallel.row_grain(4 * width * in_features))), width)
    parallel.run_all([part(i, parts) for i in range(max(parts, 1))])


# -- feed-forward -----------------------------------------------------------------------------


def ffn_forward(x: Array, w1: Array, b1: Array | None, w2: Array, b2: Array | None, approximate: str, out: Array,
                kept: Array | None = None) -> None:
    """out (N, C2) = gelu(x @ w1ᵀ + b1) @ w2ᵀ + b2; x @ w1ᵀ left in ``kept`` when given.
    Ranges of rows in parallel, each through the whole chain."""
    parallel.single_threaded_blas()
    tanh = approximate == "tanh"
    rows, hidden = x.shape[0], w1.shape[0]
    h = shaped(scratch(rows * hidden, x.dtype), rows, hidden)           # (N, H)
    bias1 = _bias_or_zeros(b1, h)
    nothing = np.empty((rows, 0), h.dtype)       # no gradient; no source apart from h

    def chain(lo: int, hi: int) -> None:
        if kept is not None:
            np.matmul(x[lo:hi], w1.T, out=kept[lo:hi])
            _bias_gelu(kept[lo:hi], bias1, h[lo:hi], nothing[lo:hi], tanh, False)   # h <- gelu(kept + b1)
        else:
            np.matmul(x[lo:hi], w1.T, out=h[lo:hi])
            _bias_gelu(nothing[lo:hi], bias1, h[lo:hi], nothing[lo:hi], tanh, False)  # h <- gelu(h + b1)
        np.matmul(h[lo:hi], w2.T, out=out[lo:hi])
        if b2 is not None:
            add_row_in_place(out[lo:hi], b2)

    parallel.parallel_for(rows, chain, parallel.row_grain(2 * (w1.size + w2.size)))


def ffn_backward(grad_out: Array, x: Array, w1: Array, b1: Array | None, w2: Array, approximate: str,
                 grad_x: Array | None, grad_w1: Array | None, grad_b1: Array | None, grad_w2: Array | None,
                 grad_b2: Array | None, kept: Array | None = None) -> None:
    """h = x @ w1ᵀ + b1 (from ``kept`` or recomputed), then with a = gelu(h) and
    dh = (grad_out @ w2) * gelu'(h):
    grad_w2 = grad_outᵀ @ a, grad_b2 = sums of grad_out, grad_w1 = dhᵀ @ x,
    grad_b1 = sums of dh, grad_x = dh @ w1. One region by rows: each range goes through
    the whole chain and then sums its own rows' share of the four parameter gradients
    while a and dh are still in its core's cache (``weight_gradients_by_rows``)."""
    parallel.single_threaded_blas()
    tanh = approximate == "tanh"
    rows, hidden = x.shape[0], w1.shape[0]
    activation = shaped(scratch(rows * hidden, x.dtype), rows, hidden)           # (N, H)
    grad_hidden = shaped(scratch(rows * hidden, x.dtype), rows, hidden)          # (N, H)
    bias1 = _bias_or_zeros(b1, activation)
    in_place = np.empty((rows, 0), x.dtype)

    def chain(lo: int, hi: int) -> None:
        if kept is None:
            np.matmul(x[lo:hi], w1.T, out=activation[lo:hi])
        np.matmul(grad_out[lo:hi], w2, out=grad_hidden[lo:hi])               # d loss / d gelu output
        # activation <- gelu(h + b1); grad_hidden <- grad_hidden * gelu'(h + b1), in one pass
        source = in_place if kept is None else kept
        _bias_gelu(source[lo:hi], bias1, activation[lo:hi], grad_hidden[lo:hi], tanh, True)
        if grad_x is not None:
            np.matmul(grad_hidden[lo:hi], w1, out=grad_x[lo:hi])

    weight_gradients_by_rows(rows, parallel.row_grain(2 * (w1.size + w2.size)), chain, [
        (grad_out, activation, grad_w2, grad_b2),      # grad_w2 = grad_outᵀ a, grad_b2 = sums of grad_out
        (grad_hidden, x, grad_w1, grad_b1)])           # grad_w1 = dhᵀ x,       grad_b1 = sums of dh


def _bias_or_zeros(bias: Array | None, like: Array) -> Array:
    return np.ascontiguousarray(bias) if bias is not None else np.zeros(like.shape[1], like.dtype)


def _bias_gelu_row(tanh: bool, want_grad: bool):
    """The pass over one row of the hidden layer, for one GELU form, with or without the
    gradient (both constants inside the loops, so they hold no branch): v = source + bias,
    or h + bias when ``source`` is empty; h <- gelu(v); with ``want_grad``, grad <- grad *
    gelu'(v) as well. At h's precision, through the vectorisable helpers of ``_fastmath``
    (libm's erf and tanh are scalar calls, several times slower than this whole pass). In
    place is a loop of its own that reads only h: a source that overlaps h (or grad = h)
    would fail the loop's runtime overlap check and run it unvectorised. So each form has
    two loops, one per source: choosing the source per element, or sharing the body through
    an inlined helper, left them unvectorised."""
    @njit
    def row_pass(source, bias, h, grad):      # source (H,) or (0,); bias, h (H,); grad (H,) or (0,)
        if want_grad:
            if source.size == 0:
                for j in range(h.size):
                    value, slope = gelu_with_slope(h[j] + bias[j], tanh)
                    h[j] = value
                    grad[j] *= slope
            else:
                for j in range(h.size):
                    value, slope = gelu_with_slope(source[j] + bias[j], tanh)
                    h[j] = value
                    grad[j] *= slope
        elif source.size == 0:
            for j in range(h.size):
                h[j] = gelu(h[j] + bias[j], tanh)
        else:
            for j in range(h.size):
                h[j] = gelu(source[j] + bias[j], tanh)
    return row_pass


_erf_row, _erf_grad_row = _bias_gelu_row(False, False), _bias_gelu_row(False, True)
_tanh_row, _tanh_grad_row = _bias_gelu_row(True, False), _bias_gelu_row(True, True)


@njit
def _bias_gelu(source, bias, h, grad, tanh, want_grad):
    """h (N, H) <- gelu(source + bias), source (N, H), or in place (h + bias) when source is
    (N, 0); grad (N, H) <- grad * gelu'(...) with ``want_grad``, else (N, 0). A call of the
    row pass of this form per row (faster than one loop indexing h[r, j]). The row passes
    are module globals, not closure variables: Numba's
    cache key includes what a closure holds, and a compiled function there differs from
    process to process."""
    for r in range(h.shape[0]):
        if tanh:
            if want_grad:
                _tanh_grad_row(source[r], bias, h[r], grad[r])
            else:
                _tanh_row(source[r], bias, h[r], grad[r])
        elif want_grad:
            _erf_grad_row(source[r], bias, h[r], grad[r])
        else:
            _erf_row(source[r], bias, h[r], grad[r])
