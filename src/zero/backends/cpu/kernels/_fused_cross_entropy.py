"""Linear + cross-entropy in row chunks: the (N, V) logits never exist at once.

Forward, for each chunk of rows [r0, r1):
    logits = x[r0:r1] @ weightᵀ                     (R, V)  one GEMM into scratch
    lse    = logsumexp(logits) per row;  loss = lse - logits[target]
             (the row maxima by NumPy's SIMD reduction, then one Numba pass for exp and sum)
Backward recomputes each chunk's logits and turns them, in place, into
    d logits = g * (exp(logits - lse) - onehot(target))    (0 on ignored rows)
then grad_x[r0:r1] = d logits @ weight and grad_weight += d logitsᵀ @ x[r0:r1]. The first
chunk writes grad_weight directly; later chunks go through a (V, C) scratch and an add.
"""
from __future__ import annotations

import math

import numpy as np

from ._fastmath import fast_exp, log_probability
from ._fused_support import scratch, shaped
from ._jit import njit

__all__ = ["linear_cross_entropy_backward", "linear_cross_entropy_forward"]


def _int64(target):
    """Targets as int64, so the loops compile once per float dtype, not per index dtype."""
    return np.ascontiguousarray(target, dtype=np.int64)


def linear_cross_entropy_forward(x, weight, target, ignore_index: int, chunk_size: int, loss, lse) -> None:
    """loss (N,), lse (N,) of the rows of x (N, C) @ weight (V, C)ᵀ against target (N,)."""
    target, ignore_index = _int64(target), int(ignore_index)
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, min(int(chunk_size), rows))
    logits_flat = scratch(chunk * vocab, x.dtype)
    peaks = scratch(chunk, x.dtype)
    for r0 in range(0, rows, chunk):
        r1 = min(r0 + chunk, rows)
        logits = shaped(logits_flat, r1 - r0, vocab)                      # (R, V)
        np.matmul(x[r0:r1], weight.T, out=logits)
        np.max(logits, axis=1, out=peaks[:r1 - r0])    # vectorised; a Numba max loop is not
        _loss_rows(logits, peaks, target, r0, ignore_index, loss, lse)


def linear_cross_entropy_backward(grad_loss, x, weight, target, lse, ignore_index: int, chunk_size: int,
                                  grad_x, grad_weight) -> None:
    """grad_x (N, C) and grad_weight (V, C) (either may be None) from grad_loss (N,)."""
    grad_loss, lse = np.ascontiguousarray(grad_loss, dtype=x.dtype), np.ascontiguousarray(lse)
    target, ignore_index = _int64(target), int(ignore_index)
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, min(int(chunk_size), rows))
    logits_flat = scratch(chunk * vocab, x.dtype)
    partial = None                                                        # (V, C), from chunk 2 on
    if rows == 0 and grad_weight is not None:
        grad_weight.fill(0)
    for r0 in range(0, rows, chunk):
        r1 = min(r0 + chunk, rows)
        grad_logits = shaped(logits_flat, r1 - r0, vocab)                 # (R, V)
        np.matmul(x[r0:r1], weight.T, out=grad_logits)
        _grad_logits_rows(grad_logits, target, r0, ignore_index, lse, grad_loss)
        if grad_x is not None:
            np.matmul(grad_logits, weight, out=grad_x[r0:r1])
        if grad_weight is not None:
            if r0 == 0:
                np.matmul(grad_logits.T, x[r0:r1], out=grad_weight)
            else:
                if partial is None:
                    partial = shaped(scratch(grad_weight.size, x.dtype), *grad_weight.shape)
                np.matmul(grad_logits.T, x[r0:r1], out=partial)
                grad_weight += partial


@njit
def _loss_rows(logits, peaks, target, row0, ignore_index, loss, lse):
    """Per row r of the chunk (global row row0 + r), with its maximum peaks[r]: lse and
    loss (0 when ignored)."""
    rows, vocab = logits.shape
    for r in range(rows):
        peak = np.float64(peaks[r])
        total = 0.0
        for c in range(vocab):
            total += fast_exp(logits[r, c] - peak)
        log_total = math.log(total)
        lse[row0 + r] = peak + log_total   # float64 (see nn.py's contract)
        t = target[row0 + r]
        loss[row0 + r] = 0.0 if t == ignore_index else -log_probability(logits[r, t], peak, log_total)


@njit
def _grad_logits_rows(logits, target, row0, ignore_index, lse, grad_loss):
    """In place: logits -> g * (softmax - onehot(target)), 0 on ignored rows."""
    rows, vocab = logits.shape
    for r in range(rows):
        t = target[row0 + r]
        if t == ignore_index:
            for c in range(vocab):
                logits[r, c] = 0.0
            continue
        g = np.float64(grad_loss[row0 + r])
        shift = np.float64(lse[row0 + r])
        for c in range(vocab):
            logits[r, c] = g * fast_exp(logits[r, c] - shift)
        logits[r, t] -= g
