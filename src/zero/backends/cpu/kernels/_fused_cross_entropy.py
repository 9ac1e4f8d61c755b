"""Linear + cross-entropy in row chunks: the (N, V) logits never exist at once.

Forward, for each chunk of rows [r0, r1):
    logits = x[r0:r1] @ weightᵀ                     (R, V)  one GEMM into scratch
    lse    = logsumexp(logits) per row;  loss = lse - logits[target]
             (nn.py's row of cross-entropy, on the chunk's rows)
Backward recomputes each chunk's logits and turns them, in place, into
    d logits = g * (exp(logits - lse) - onehot(target))    (0 on ignored rows; nn.py's row)
then grad_x[r0:r1] = d logits @ weight and grad_weight += d logitsᵀ @ x[r0:r1]. The first
chunk writes grad_weight directly; later chunks go through a (V, C) scratch and an add.

Each chunk is split by rows over the CPU pool, a range's product and its rows' pass
together (how large a range must be: ``parallel.row_grain``, the pass over a logit counted
as ``parallel.ROW_PASS_FLOPS`` flops); the chunking and the shares of grad_weight are
part of the algorithm, so the kernels split themselves.
"""
from __future__ import annotations

import numpy as np

from ...kernel_contract import Array, given
from .. import parallel
from ._fused_support import scratch, shaped, weight_gradients_by_rows
from ._jit import njit
from .linalg import ones_vector
from .nn import cross_entropy_backward_row, cross_entropy_row, int64_targets

__all__ = ["linear_cross_entropy_backward", "linear_cross_entropy_forward"]

def linear_cross_entropy_forward(x: Array, weight: Array, target: Array, ignore_index: int, chunk_size: int,
                                 loss: Array, lse: Array, kept: Array | None = None) -> None:
    """loss (N,), lse (N,) of the rows of x (N, C) @ weight (V, C)ᵀ against target (N,).
    Each chunk is one parallel region by rows: a range's product and its rows' pass. With
    ``kept`` (N, V) (all rows in one chunk) the logits are computed into it and stay there."""
    parallel.single_threaded_blas()
    target, ignore_index = int64_targets(target), int(ignore_index)
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, rows if kept is not None else min(int(chunk_size), rows))   # kept: one chunk
    logits_flat = scratch(chunk * vocab, x.dtype) if kept is None else kept.reshape(-1)
    ones = ones_vector(vocab, x.dtype)                                    # no class weights
    grain = parallel.row_grain(vocab * (2 * x.shape[1] + parallel.ROW_PASS_FLOPS))
    for r0 in range(0, rows, chunk):
        logits = shaped(logits_flat, min(chunk, rows - r0), vocab)        # (R, V)

        def part(lo: int, hi: int, r0: int = r0, logits: Array = logits) -> None:
            np.matmul(x[r0 + lo:r0 + hi], weight.T, out=logits[lo:hi])
            _loss_rows(logits[lo:hi], ones, target, r0 + lo, ignore_index, loss, lse)

        parallel.parallel_for(logits.shape[0], part, grain)


def linear_cross_entropy_backward(grad_loss: Array, x: Array, weight: Array, target: Array, lse: Array,
                                  ignore_index: int, chunk_size: int, grad_x: Array | None,
                                  grad_weight: Array | None, kept: Array | None = None) -> None:
    """grad_x (N, C) and grad_weight (V, C) (either may be None) from grad_loss (N,).
    All rows in one chunk, and grad_weight small next to the chunk's logits (its shares,
    one per extra thread, at most a quarter of them: any char-level vocabulary): one
    region by rows, each range's logits, their gradient, its grad_x rows and its rows'
    share of grad_weight (``weight_gradients_by_rows``: one region, faster than two). With
    ``kept`` (forward's logits, all rows in one chunk; read, not
    changed: backward may run twice) a range starts from its rows of them instead of their
    product.
    Otherwise (a large vocabulary: one share of grad_weight per thread would cost more
    memory than a chunk of logits) per chunk two regions: by rows (the logits, their
    gradient, grad_x), then by the weight's rows (grad_weight sums over all the chunk's
    rows)."""
    parallel.single_threaded_blas()
    grad_loss, lse = np.ascontiguousarray(grad_loss, dtype=x.dtype), np.ascontiguousarray(lse)
    target, ignore_index = int64_targets(target), int(ignore_index)
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, rows if kept is not None else min(int(chunk_size), rows))   # kept: one chunk
    logits_flat = scratch(chunk * vocab, x.dtype)
    ones = ones_vector(vocab, x.dtype)
    partial: Array | None = None                                          # (V, C), from chunk 2 on
    if rows == 0 and grad_weight is not None:
        grad_weight.fill(0)
    grain = parallel.row_grain(vocab * ((4 if kept is not None else 6) * x.shape[1] + parallel.ROW_PASS_FLOPS))
    one_region = rows <= chunk and (grad_weight is None or (len(parallel.ranges(rows, grain)) - 1)
                                    * grad_weight.nbytes <= logits_flat.nbytes // 4)
    for r0 in range(0, rows, chunk):
        r1 = min(r0 + chunk, rows)
        grad_logits = shaped(logits_flat, r1 - r0, vocab)                 # (R, V)

        def by_rows(lo: int, hi: int, r0: int = r0, grad_logits: Array = grad_logits) -> None:
            mine = grad_logits[lo:hi]
            if kept is None:
                np.matmul(x[r0 + lo:r0 + hi], weight.T, out=mine)
            _grad_logits_rows(mine if kept is None else kept[r0 + lo:r0 + hi], ones, target, r0 + lo, ignore_index, lse,
                              grad_loss, mine)
            if grad_x is not None:
                np.matmul(mine, weight, out=grad_x[r0 + lo:r0 + hi])

        if one_region:
            weight_gradients_by_rows(r1 - r0, grain, by_rows, [(grad_logits, x[r0:r1], grad_weight, None)])
            continue
        parallel.parallel_for(r1 - r0, by_rows, grain)
        if grad_weight is None:
            continue
        if r0 > 0 and partial is None:
            partial = shaped(scratch(grad_weight.size, x.dtype), *grad_weight.shape)
        this_chunk = given(grad_weight if r0 == 0 else partial)         # (V, C): this chunk's share

        def by_classes(lo: int, hi: int, r0: int = r0, r1: int = r1, grad_logits: Array = grad_logits,
                       this_chunk: Array = this_chunk, grad_weight: Array = grad_weight) -> None:
            np.matmul(grad_logits[:, lo:hi].T, x[r0:r1], out=this_chunk[lo:hi])
            if this_chunk is not grad_weight:
                grad_weight[lo:hi] += this_chunk[lo:hi]

        parallel.parallel_for(vocab, by_classes, parallel.row_grain(2 * (r1 - r0) * x.shape[1]))


@njit
def _loss_rows(logits, ones, target, row0, ignore_index, loss, lse):
    """Per row r of the chunk (global row row0 + r): lse and loss (0 when ignored)."""
    for r in range(logits.shape[0]):
        loss[row0 + r], lse[row0 + r] = cross_entropy_row(logits[r], target[row0 + r], ones, ignore_index, 0.0)


@njit
def _grad_logits_rows(logits, ones, target, row0, ignore_index, lse, grad_loss, out):
    """out = g * (softmax(logits) - onehot(target)), 0 on ignored rows; out may be logits."""
    for r in range(logits.shape[0]):
        cross_entropy_backward_row(grad_loss[row0 + r], logits[r], target[row0 + r], ones, float(ones.size),
                                   lse[row0 + r], ignore_index, 0.0, out[r])
