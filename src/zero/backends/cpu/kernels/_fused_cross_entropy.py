"""Linear + cross-entropy in row chunks: the (N, V) logits never exist at once.

Forward, for each chunk of rows [r0, r1):
    logits = x[r0:r1] @ weightᵀ                     (R, V)  one GEMM into scratch
    lse    = logsumexp(logits) per row;  loss = lse - logits[target]
             (nn.py's row of cross-entropy, on the chunk's rows)
Backward recomputes each chunk's logits and turns them, in place, into
    d logits = g * (exp(logits - lse) - onehot(target))    (0 on ignored rows; nn.py's row)
then grad_x[r0:r1] = d logits @ weight and grad_weight += d logitsᵀ @ x[r0:r1]. The first
chunk writes grad_weight directly; later chunks go through a (V, C) scratch and an add.
"""
from __future__ import annotations

import numpy as np

from ._fused_support import scratch, shaped
from ._jit import njit
from .linalg import product
from .nn import cross_entropy_backward_row, cross_entropy_row, int64_targets

__all__ = ["linear_cross_entropy_backward", "linear_cross_entropy_forward"]


def linear_cross_entropy_forward(x, weight, target, ignore_index: int, chunk_size: int, loss, lse) -> None:
    """loss (N,), lse (N,) of the rows of x (N, C) @ weight (V, C)ᵀ against target (N,)."""
    target, ignore_index = int64_targets(target), int(ignore_index)
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, min(int(chunk_size), rows))
    logits_flat = scratch(chunk * vocab, x.dtype)
    ones = np.ones(vocab, x.dtype)                                        # no class weights
    for r0 in range(0, rows, chunk):
        r1 = min(r0 + chunk, rows)
        logits = shaped(logits_flat, r1 - r0, vocab)                      # (R, V)
        product(x[r0:r1], weight.T, out=logits)
        _loss_rows(logits, ones, target, r0, ignore_index, loss, lse)


def linear_cross_entropy_backward(grad_loss, x, weight, target, lse, ignore_index: int, chunk_size: int,
                                  grad_x, grad_weight) -> None:
    """grad_x (N, C) and grad_weight (V, C) (either may be None) from grad_loss (N,)."""
    grad_loss, lse = np.ascontiguousarray(grad_loss, dtype=x.dtype), np.ascontiguousarray(lse)
    target, ignore_index = int64_targets(target), int(ignore_index)
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, min(int(chunk_size), rows))
    logits_flat = scratch(chunk * vocab, x.dtype)
    ones = np.ones(vocab, x.dtype)
    partial = None                                                        # (V, C), from chunk 2 on
    if rows == 0 and grad_weight is not None:
        grad_weight.fill(0)
    for r0 in range(0, rows, chunk):
        r1 = min(r0 + chunk, rows)
        grad_logits = shaped(logits_flat, r1 - r0, vocab)                 # (R, V)
        product(x[r0:r1], weight.T, out=grad_logits)
        _grad_logits_rows(grad_logits, ones, target, r0, ignore_index, lse, grad_loss)
        if grad_x is not None:
            product(grad_logits, weight, out=grad_x[r0:r1])
        if grad_weight is not None:
            if r0 == 0:
                product(grad_logits.T, x[r0:r1], out=grad_weight)
            else:
                if partial is None:
                    partial = shaped(scratch(grad_weight.size, x.dtype), *grad_weight.shape)
                product(grad_logits.T, x[r0:r1], out=partial)
                grad_weight += partial


@njit
def _loss_rows(logits, ones, target, row0, ignore_index, loss, lse):
    """Per row r of the chunk (global row row0 + r): lse and loss (0 when ignored)."""
    for r in range(logits.shape[0]):
        loss[row0 + r], lse[row0 + r] = cross_entropy_row(logits[r], target[row0 + r], ones, ignore_index, 0.0)


@njit
def _grad_logits_rows(logits, ones, target, row0, ignore_index, lse, grad_loss):
    """In place: logits -> g * (softmax - onehot(target)), 0 on ignored rows."""
    for r in range(logits.shape[0]):
        row = logits[r]
        cross_entropy_backward_row(grad_loss[row0 + r], row, target[row0 + r], ones, float(ones.size),
                                   lse[row0 + r], ignore_index, 0.0, row)
