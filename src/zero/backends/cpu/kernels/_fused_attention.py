"""Flash-style attention on the CPU: blocks of rows, batched BLAS products over G = B*H.

Forward walks blocks of BLOCK query rows (a causal sequence of exactly BLOCK: two halves,
``_block_size``). A block's scores against every key it may see (causal: keys up to the
block's last row; the rest are skipped) are one batched GEMM into scratch (g, BLOCK, S);
one Numba pass turns them into probabilities and writes the rows' log-sum-exp; one more
GEMM writes the block of the output. All keys of a row are in the block at once, so no
running rescaling is needed.

Backward walks blocks of BLOCK key columns, with every query row that sees them
(causal: rows from the block's first key on), and recomputes what forward dropped:

    delta = rowsum(dO * O)                          (G, L)   once
    S  = Q Kⱼᵀ,  dP = dO Vⱼᵀ                        (g, rows, BLOCK)  two GEMMs
    P  = exp(scale * S - lse),  dS = P * (dP - delta) * scale        one Numba pass
    dVⱼ = Pᵀ dO,  dKⱼ = dSᵀ Q                        written directly (the block owns them)
    dQ += dS Kⱼ                                     the first block writes, later ones add

Both work on (B, H, L, E) arrays, any of them strided views: flash attention's (G, L, E)
as (G, 1, L, E), and self-attention's heads as views into GPT's packed qkv (B, T, 3C)
and its output (B, T, C) (``zero.backends.attention_heads``), never copied into a head
layout (BLAS takes a head's (T, D) matrix with a row stride of 3C as it is, as fast as a
contiguous copy). Only the keys (and in backward the values) are copied, transposed, a
pass at a time, when there are enough queries to pay for it (``_copies_keys``): BLAS
multiplies by a transposed view more slowly than by a plain matrix. They take b batches
(b·H pairs) at a time, so that a block of scores stays within
SCRATCH_BYTES (in cache) whatever B and H: scratch is three such arrays at most (scores,
their gradients, a partial dQ), kᵀ and vᵀ of the b batches, and delta (B, H, L). Nothing
(G, L, S) is ever allocated.

Threads. The batches are independent, so each thread of the CPU pool takes a range of
them (``parallel.attention_parts``: each of SPLIT_NS of work at least), with its own
scratch (a share of SCRATCH_BYTES, but at least one batch's block: on many cores the parts
together hold more, up to BLOCK / L of the scores of all pairs) leased before the split;
the per-part scratch makes the split part of the algorithm, so these kernels split
themselves. Inside a range the products are single-threaded BLAS calls, which for these
small matrices beat BLAS's own threading.
Measured by ``benchmarks/fused.py``; figures in benchmarks/journal/.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import overload

import numpy as np

from ...attention_heads import merged_heads, packed_heads
from ...kernel_contract import Array
from .. import parallel
from ._fastmath import fast_exp, like, row_peak
from ._fused_support import scratch, shaped
from ._jit import jit, njit

__all__ = ["flash_attention_backward", "flash_attention_forward", "self_attention_backward",
           "self_attention_forward"]

# Query rows (forward) or key columns (backward) per block. Causal blocks compute the whole
# rectangle up to the diagonal, so smaller blocks waste less on masked scores (64 beat 128
# and 96 at GPT's shapes).
BLOCK = 64
SCRATCH_BYTES = 2 << 20     # per scratch array, all threads' parts together (or one batch a part, if more)


def _block_size(count: int, causal: bool) -> int:
    """Query rows (forward) or key columns (backward) per block for a sequence of ``count``.
    A causal sequence of BLOCK positions would make one block, computing the whole square
    of scores of which the mask keeps half; two blocks skip its upper right quarter. That
    pays at T = 64 (GPT's tiny and small) on one thread and on two; shorter sequences
    gained on one thread and lost on two, and at T = 128 four blocks of 32 gained nothing
    against two of 64."""
    if causal and count == BLOCK:
        return (count + 1) // 2
    return min(BLOCK, count)


def _batches_per_pass(batch: int, heads: int, block: int, length: int, itemsize: int, parts: int) -> int:
    """How many of the batches (``heads`` (batch, head) pairs each, at least one batch) one
    pass takes: the (pairs, block, length) scratch arrays of ``parts`` threads then stay
    within SCRATCH_BYTES together (cache-sized, and bounded whatever B, H and however many
    threads)."""
    pairs = SCRATCH_BYTES // (parts * block * length * itemsize)
    return min(batch, max(1, pairs // max(heads, 1)))


def _copies_keys(length: int, source: int) -> bool:
    """Whether the score products multiply by a transposed copy of the keys (and in backward
    of the values) rather than by a transposed view: q @ kᵀ with kᵀ a view is slower at the
    GPT's shapes (G x 64 x S x D, S 64-256, D 32-64), and there the copy costs a fraction
    of the difference. The copy is made once for all L queries, so it pays only when they
    are many (a few queries against many keys lost); self-attention has L = S."""
    return 2 * length >= source


def transposed(x: Array, flat: Array | None) -> Array:
    """x (b, H, S, E) as (b, H, E, S): copied into the scratch ``flat`` (C-contiguous), or a
    transposed view when ``flat`` is None (``_copies_keys``)."""
    if flat is None:
        return x.transpose(0, 1, 3, 2)
    copy = shaped(flat, x.shape[0], x.shape[1], x.shape[3], x.shape[2])
    np.copyto(copy, x.transpose(0, 1, 3, 2))
    return copy


@overload
def _one_head(a: Array) -> Array: ...
@overload
def _one_head(a: None) -> None: ...
def _one_head(a: Array | None) -> Array | None:
    """Flash attention's (G, ...) arrays as (G, 1, ...) views: G batches of one head."""
    return None if a is None else a[:, None]


def flash_attention_forward(q: Array, k: Array, v: Array, scale: float, causal: bool, out: Array,
                            lse: Array) -> None:
    """out (G, L, Ev), lse (G, L) of q (G, L, E), k (G, S, E), v (G, S, Ev)."""
    _forward(_one_head(q), _one_head(k), _one_head(v), scale, causal, _one_head(out), _one_head(lse))


def self_attention_forward(qkv: Array, n_head: int, scale: float, causal: bool, out: Array, lse: Array) -> None:
    """out (B, T, C), lse (B·H, T) of the H heads packed in qkv (B, T, 3C): q, k and v are
    read in place and each head's output is written in place (``attention_heads``), with
    no copy of either into a (G, T, D) layout (four copies a layer)."""
    q, k, v = packed_heads(qkv, n_head)                                  # (B, H, T, D) views
    _forward(q, k, v, scale, causal, merged_heads(out, n_head), lse.reshape(q.shape[:3]))


def _forward(q: Array, k: Array, v: Array, scale: float, causal: bool, out: Array, lse: Array) -> None:
    """out (B, H, L, Ev), lse (B, H, L) of q (B, H, L, E), k (B, H, S, E), v (B, H, S, Ev),
    any of them strided views (lse: one that reshapes to (b·H, L) without a copy)."""
    parallel.single_threaded_blas()
    scale, causal = float(scale), bool(causal)
    batch, heads, length, source = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    if source == 0 or length == 0:
        out.fill(0)
        lse.fill(-np.inf)
        return
    block = _block_size(length, causal)
    parts = parallel.attention_parts(batch, heads, length, source)
    step = _batches_per_pass(batch, heads, block, source, q.dtype.itemsize, len(parts))
    parallel.run_all([functools.partial(_forward_part, q[b0:b1], k[b0:b1], v[b0:b1], scale, causal, out[b0:b1],
                                        lse[b0:b1], block, min(step, b1 - b0),
                                        scratch(min(step, b1 - b0) * heads * block * source, q.dtype),
                                        scratch(min(step, b1 - b0) * heads * k.shape[3] * source, q.dtype)
                                        if _copies_keys(length, source) else None)
                      for b0, b1 in parts])


def _forward_part(q: Array, k: Array, v: Array, scale: float, causal: bool, out: Array, lse: Array, block: int,
                  step: int, scores_flat: Array, keys_t_flat: Array | None) -> None:
    """Forward over these batches, ``step`` at a time, in this part's own scratch."""
    batch, heads, length, source = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    for b0 in range(0, batch, step):
        b1 = min(b0 + step, batch)
        keys_t = transposed(k[b0:b1], keys_t_flat)                       # (b, H, E, S)
        rows_lse = lse[b0:b1].reshape(-1, length)                        # (b·H, L), a view
        for i0 in range(0, length, block):
            i1 = min(i0 + block, length)
            seen = min(i1, source) if causal else source     # row i sees keys j <= i (top-left)
            scores = shaped(scores_flat, b1 - b0, heads, i1 - i0, seen)      # (b, H, R, n)
            np.matmul(q[b0:b1, :, i0:i1], keys_t[:, :, :, :seen], out=scores)
            _probabilities(scores.reshape(-1, i1 - i0, seen), scores.dtype.type(scale), i0, causal, rows_lse)
            np.matmul(scores, v[b0:b1, :, :seen], out=out[b0:b1, :, i0:i1])


def flash_attention_backward(grad_out: Array, q: Array, k: Array, v: Array, out: Array, lse: Array, scale: float,
                             causal: bool, grad_q: Array | None, grad_k: Array | None, grad_v: Array | None) -> None:
    """grad_q, grad_k, grad_v (any may be None) from grad_out (G, L, Ev) and forward's out, lse."""
    _backward(_one_head(grad_out), _one_head(q), _one_head(k), _one_head(v), _one_head(out), _one_head(lse),
              scale, causal, _one_head(grad_q), _one_head(grad_k), _one_head(grad_v))


def self_attention_backward(grad_out: Array, qkv: Array, out: Array, lse: Array, n_head: int, scale: float,
                            causal: bool, grad_qkv: Array) -> None:
    """grad_qkv (B, T, 3C, C-contiguous) from grad_out (B, T, C) and forward's out (B, T, C)
    and lse (B·H, T): the three head gradients written in place into grad_qkv."""
    q, k, v = packed_heads(qkv, n_head)
    _backward(merged_heads(grad_out, n_head), q, k, v, merged_heads(out, n_head), lse.reshape(q.shape[:3]),
              scale, causal, *packed_heads(grad_qkv, n_head))


def _backward(grad_out: Array, q: Array, k: Array, v: Array, out: Array, lse: Array, scale: float, causal: bool,
              grad_q: Array | None, grad_k: Array | None, grad_v: Array | None) -> None:
    """``_forward``'s backward, on (B, H, ...) arrays of the same kinds."""
    parallel.single_threaded_blas()
    scale, causal = float(scale), bool(causal)
    batch, heads, length, source = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    if source == 0 or length == 0:
        for grad in (grad_q, grad_k, grad_v):
            if grad is not None:
                grad.fill(0)
        return
    block = _block_size(source, causal)
    parts = parallel.attention_parts(batch, heads, length, source)
    step = _batches_per_pass(batch, heads, block, length, q.dtype.itemsize, len(parts))
    # the probabilities recomputed in the inputs' dtype, as forward made them (float32: twice
    # the vector lanes, float32's exp); forward's float64 lse rounded once to that dtype
    row_lse, typed_scale = lse.astype(q.dtype, copy=False), q.dtype.type(scale)

    def mine(grad: Array | None, b0: int, b1: int) -> Array | None:
        return None if grad is None else grad[b0:b1]

    def part(b0: int, b1: int) -> Callable[[], None]:
        def run() -> None:
            _backward_part(grad_out[b0:b1], q[b0:b1], k[b0:b1], v[b0:b1], out[b0:b1], row_lse[b0:b1],
                           mine(grad_q, b0, b1), mine(grad_k, b0, b1), mine(grad_v, b0, b1), typed_scale, causal,
                           block, passes, *leased)
        passes = min(step, b1 - b0)
        leased = (shaped(scratch((b1 - b0) * heads * length, q.dtype), b1 - b0, heads, length),   # delta (b, H, L)
                  scratch(passes * heads * length * block, q.dtype),
                  scratch(passes * heads * length * block, q.dtype),
                  scratch(passes * heads * length * q.shape[3], q.dtype) if grad_q is not None and source > block
                  else None,
                  *((scratch(passes * heads * k.shape[3] * source, q.dtype),         # kᵀ of a pass
                     scratch(passes * heads * v.shape[3] * source, q.dtype))         # vᵀ of a pass
                    if _copies_keys(length, source) else (None, None)))
        return run

    parallel.run_all([part(b0, b1) for b0, b1 in parts])


def _backward_part(grad_out: Array, q: Array, k: Array, v: Array, out: Array, row_lse: Array,
                   grad_q: Array | None, grad_k: Array | None, grad_v: Array | None, typed_scale: np.floating,
                   causal: bool, block: int, step: int, delta: Array, probs_flat: Array, grad_scores_flat: Array,
                   partial_flat: Array | None, keys_t_flat: Array | None, values_t_flat: Array | None) -> None:
    """Backward over these batches, ``step`` at a time, in this part's own scratch."""
    batch, heads, length, source = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    _row_dots(grad_out, out, delta)
    for b0 in range(0, batch, step):
        b1 = min(b0 + step, batch)
        keys_t, values_t = transposed(k[b0:b1], keys_t_flat), transposed(v[b0:b1], values_t_flat)
        rows_lse, rows_delta = row_lse[b0:b1].reshape(-1, length), delta[b0:b1].reshape(-1, length)  # (b·H, L)
        for j0 in range(0, source, block):
            j1 = min(j0 + block, source)
            first_row = j0 if causal else 0         # query rows that see any of keys j0..j1-1
            if first_row >= length:                 # (causal, S > L): keys no query sees
                for grad in (grad_k, grad_v):
                    if grad is not None:
                        grad[b0:b1, :, j0:j1] = 0
                continue
            rows = length - first_row
            q_rows, grad_out_rows = q[b0:b1, :, first_row:], grad_out[b0:b1, :, first_row:]  # (b, H, R, E|Ev)
            probs = shaped(probs_flat, b1 - b0, heads, rows, j1 - j0)                 # (b, H, R, n)
            grad_scores = shaped(grad_scores_flat, b1 - b0, heads, rows, j1 - j0)     # (b, H, R, n)
            np.matmul(q_rows, keys_t[:, :, :, j0:j1], out=probs)
            np.matmul(grad_out_rows, values_t[:, :, :, j0:j1], out=grad_scores)
            _probabilities_backward(probs.reshape(-1, rows, j1 - j0), grad_scores.reshape(-1, rows, j1 - j0),
                                    rows_lse, rows_delta, typed_scale, first_row, j0, causal)
            if grad_v is not None:
                np.matmul(probs.transpose(0, 1, 3, 2), grad_out_rows, out=grad_v[b0:b1, :, j0:j1])
            if grad_k is not None:
                np.matmul(grad_scores.transpose(0, 1, 3, 2), q_rows, out=grad_k[b0:b1, :, j0:j1])
            if grad_q is not None:
                if j0 == 0:                          # the first block covers every query row
                    np.matmul(grad_scores, k[b0:b1, :, j0:j1], out=grad_q[b0:b1])
                else:
                    assert partial_flat is not None       # made when there is more than one block
                    partial = shaped(partial_flat, b1 - b0, heads, rows, grad_q.shape[3])  # (b, H, R, E)
                    np.matmul(grad_scores, k[b0:b1, :, j0:j1], out=partial)
                    grad_q[b0:b1, :, first_row:] += partial


@njit
def _row_dots(grad_out, out, delta):
    """delta[b, h, l] = <grad_out[b, h, l], out[b, h, l]> (a Numba loop, not np.einsum:
    faster on heads read in place from qkv, and np.einsum waits for the GIL, which this
    loop never takes back until it is done). Summed in float64: a float32
    product is exact there and the sum's rounding far below float32's, so the float32
    result does not depend on the order LLVM picks, which differs between contiguous heads
    (flash attention) and heads read in place from qkv (self-attention) -- unless a sum
    lies within ~1e-16 of a float32 rounding boundary."""
    batch, heads, length, size = grad_out.shape
    for b in range(batch):
        for h in range(heads):
            for i in range(length):
                total = 0.0
                for d in range(size):
                    total += np.float64(grad_out[b, h, i, d]) * np.float64(out[b, h, i, d])
                delta[b, h, i] = total


@njit
def _probabilities(scores, scale, row0, causal, lse):
    """In place: scores (G, R, n) of query rows row0.. -> softmax(scale * scores) over the
    keys each row sees (0 beyond them); lse[g, row0 + r] = logsumexp(scale * scores)."""
    groups, rows, seen = scores.shape
    for g in range(groups):
        for r in range(rows):
            limit = min(row0 + r + 1, seen) if causal else seen
            lse[g, row0 + r] = _probabilities_row(scores[g, r], scale, limit)


@jit(inline="always")
def _probabilities_row(row, scale, limit):
    """One row (1-D, inlined into the loop over rows: faster than indexing scores[g, r, j]
    there, and than a call per row): row[:limit] -> softmax(scale * row[:limit]), the rest 0;
    returns the row's logsumexp. The scaled scores are stored before the peak is
    subtracted, so each is rounded as the peak was (computed as one fused multiply-add,
    scale * x - peak would give the largest score exp(-1000) = 0 instead of 1 near 1e19).

    The loops run over the whole row and select 0 for the masked keys (j >= limit): loops
    over the first ``limit`` keys ended in scalar remainders, and a causal row of fewer than
    ~32 keys ran scalar throughout. The peak is still the visible keys' own: a masked score
    may be larger, even overflow exp, and is no part of the softmax."""
    width = row.size
    for j in range(width):
        row[j] = scale * row[j]
    peak = row_peak(row[:limit])     # in the scores' dtype, and so the whole row (limit >= 1)
    total = like(peak, 0.0)
    zero = like(peak, 0.0)
    for j in range(width):
        p = fast_exp(row[j] - peak)
        p = p if j < limit else zero
        row[j] = p
        total += p
    inverse = like(peak, 1.0 / total)
    for j in range(width):
        row[j] *= inverse
    return peak + math.log(total)


@njit
def _probabilities_backward(scores, grad_probs, lse, delta, scale, row0, col0, causal):
    """In place, for query rows row0.. and key columns col0..:
    scores -> P = exp(scale * scores - lse) (0 where masked),
    grad_probs (dO Vᵀ) -> dS * scale = P * (grad_probs - delta) * scale."""
    groups, rows, width = scores.shape
    for g in range(groups):
        for r in range(rows):
            limit = min(row0 + r + 1 - col0, width) if causal else width
            _probabilities_backward_row(scores[g, r], grad_probs[g, r], lse[g, row0 + r],
                                        delta[g, row0 + r], scale, max(limit, 0))


@jit(inline="always")
def _probabilities_backward_row(row, grad_row, shift, d, scale, limit):
    """One row of ``_probabilities_backward``; the scaled scores stored first, as forward did,
    and 0 selected for the masked keys in loops over the whole row (``_probabilities_row``)."""
    zero = like(shift, 0.0)
    for j in range(row.size):
        row[j] = scale * row[j]
    for j in range(row.size):
        p = fast_exp(row[j] - shift)
        visible = j < limit
        row[j] = p if visible else zero
        grad_row[j] = p * (grad_row[j] - d) * scale if visible else zero
