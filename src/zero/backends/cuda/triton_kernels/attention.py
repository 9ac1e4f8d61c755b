"""Flash-style attention: forward and backward without the (L, S) score matrix.

Queries (G, L, E), keys (G, S, E), values (G, S, Ev), G = batch * heads, each read where
it lies: group g is batch g // heads, head g % heads, and an array is described by three
element strides -- between batches, between heads, between rows -- its features being
adjacent. So self-attention reads q, k and v straight out of the packed (B, T, 3C) qkv and
writes its output and gradients straight into (B, T, C) and (B, T, 3C), with no copies;
plain (G, L, E) arrays are one head per batch. A program works on one group
``g = group0 + program_id(1)`` (group0: launches of at most 65535 groups each). Causal masking is top-left
aligned (query i sees keys j <= i). Scores are ``scale * q kᵀ`` in the inputs' float
type -- float32 for float16 and bfloat16 inputs, whose products ``tl.dot`` takes on the
16-bit tiles and accumulates in float32 (its default ``out_dtype``), the probabilities
rounded to the inputs' type for the p·v product, every statistic and accumulator float32
(``precision.wide``); ``PRECISION`` is tl.dot's input precision ("ieee", or "tf32" under
zero.backends.cuda.matmul.allow_tf32). Every offset into the arrays is int64 (``_tile_offsets``, and the
group's ``g``): a (G * L, E) array passes 2**31 elements at 8 GiB of float32.

Forward (one program per BLOCK_M query rows): walk the key blocks the rows may see,
keeping per row the running maximum m, the running sum l of exp(s - m) and the
unnormalised output; rescale them by exp(m_old - m_new) whenever the maximum grows.
At the end out = acc / l and lse = m + log l (kept for backward).

Backward recomputes P = exp(s - lse) block by block (delta = rowsum(dO * O) first):

    dV_j = Σ_i P_ijᵀ dO_i      dS = P * (dO vᵀ - delta) * scale
    dK_j = Σ_i dS_ijᵀ q_i      dQ_i = Σ_j dS_ij k_j

one kernel per key block for dK, dV and one per query block for dQ: every output block
has one owner, so there are no atomics and results are the same run to run.
"""
import triton
import triton.language as tl

from .precision import wide, wide_scalar

NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def _tile_offsets(first, count, width, row_stride, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    """int64 offsets and mask of rows first..first+BLOCK of a (count, width) matrix whose
    rows are ``row_stride`` elements apart, columns padded to BLOCK_E."""
    rows = first + tl.arange(0, BLOCK).to(tl.int64)
    columns = tl.arange(0, BLOCK_E)
    return rows[:, None] * row_stride + columns[None, :], (rows[:, None] < count) & (columns[None, :] < width)


@triton.jit
def _tile(ptr, first, count, width, row_stride, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    """Rows first..first+BLOCK of a (count, width) matrix, zero-padded to BLOCK_E."""
    offsets, mask = _tile_offsets(first, count, width, row_stride, BLOCK, BLOCK_E)
    return tl.load(ptr + offsets, mask=mask, other=0.0)


@triton.jit
def _store_tile(ptr, first, count, width, row_stride, tile, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    """Write ``tile`` to rows first..first+BLOCK of a (count, width) matrix (what exists of them)."""
    offsets, mask = _tile_offsets(first, count, width, row_stride, BLOCK, BLOCK_E)
    tl.store(ptr + offsets, tile, mask=mask)


@triton.jit
def _group_start(ptr, g, heads, batch_stride, head_stride):
    """Where group g's matrix starts: batch g // heads, head g % heads (g is int64)."""
    return ptr + (g // heads) * batch_stride + (g % heads) * head_stride


@triton.jit
def _row_statistics(lse_ptr, delta_ptr, rows, length):
    """The saved log-sum-exp and delta of query rows ``rows`` (0 past the end)."""
    lse = wide(tl.load(lse_ptr + rows, mask=rows < length, other=0.0))
    delta = wide(tl.load(delta_ptr + rows, mask=rows < length, other=0.0))
    return lse, delta


@triton.jit
def _block_and_group(group0, BLOCK: tl.constexpr):
    """This program's first row (of its block of BLOCK rows or keys) and its group g (int64)."""
    return tl.program_id(0) * BLOCK, tl.program_id(1).to(tl.int64) + group0


@triton.jit
def _visible(rows, columns, length, source, CAUSAL: tl.constexpr):
    """Which (row, key) pairs of a tile are real and allowed."""
    keep = (rows[:, None] < length) & (columns[None, :] < source)
    if CAUSAL:
        keep = keep & (columns[None, :] <= rows[:, None])
    return keep


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, out_ptr, lse_ptr,
                             q_batch, q_head, q_row, k_batch, k_head, k_row, v_batch, v_head, v_row,
                             out_batch, out_head, out_row, heads, group0, length, source, width, value_width,
                             scale: tl.float64, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                             BLOCK_EV: tl.constexpr):
    first, g = _block_and_group(group0, BLOCK_M)
    scale = wide_scalar(scale, q_ptr)
    k_ptr = _group_start(k_ptr, g, heads, k_batch, k_head)
    v_ptr = _group_start(v_ptr, g, heads, v_batch, v_head)
    q = _tile(_group_start(q_ptr, g, heads, q_batch, q_head), first, length, width, q_row, BLOCK_M, BLOCK_E)  # (M, E)
    rows = first + tl.arange(0, BLOCK_M)
    peak = wide(tl.full([BLOCK_M], NEG_INF, dtype=q_ptr.dtype.element_ty))   # float32 for 16-bit q
    total = tl.zeros([BLOCK_M], dtype=peak.dtype)
    acc = tl.zeros([BLOCK_M, BLOCK_EV], dtype=peak.dtype)
    end = source
    if CAUSAL:
        end = tl.minimum(source, first + BLOCK_M)
    for start in range(0, end, BLOCK_N):
        k = _tile(k_ptr, start, source, width, k_row, BLOCK_N, BLOCK_E)                # (N, E)
        v = _tile(v_ptr, start, source, value_width, v_row, BLOCK_N, BLOCK_EV)         # (N, Ev)
        scores = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale            # (M, N)
        columns = start + tl.arange(0, BLOCK_N)
        scores = tl.where(_visible(rows, columns, length, source, CAUSAL), scores, NEG_INF)
        new_peak = tl.maximum(peak, tl.max(scores, axis=1))
        shift = tl.where(new_peak == NEG_INF, 0.0, new_peak)
        probs = tl.exp(scores - shift[:, None])
        rescale = tl.exp(peak - shift)
        total = total * rescale + tl.sum(probs, axis=1)
        acc = acc * rescale[:, None] + tl.dot(probs.to(v.dtype), v, input_precision=PRECISION)
        peak = new_peak
    out = acc / tl.where(total == 0.0, 1.0, total)[:, None]
    _store_tile(_group_start(out_ptr, g, heads, out_batch, out_head), first, length, value_width, out_row, out,
                BLOCK_M, BLOCK_EV)
    tl.store(lse_ptr + g * length + rows, peak + tl.log(total), mask=rows < length)


@triton.jit
def attention_delta_kernel(grad_out_ptr, out_ptr, delta_ptr, d_batch, d_head, d_row, o_batch, o_head, o_row,
                           heads, group0, length, value_width, BLOCK_M: tl.constexpr, BLOCK_EV: tl.constexpr):
    """delta = rowsum(dO * O) for BLOCK_M rows of one group; delta is (G, L), contiguous."""
    first, g = _block_and_group(group0, BLOCK_M)
    d_out = _tile(_group_start(grad_out_ptr, g, heads, d_batch, d_head), first, length, value_width, d_row,
                  BLOCK_M, BLOCK_EV)
    out = _tile(_group_start(out_ptr, g, heads, o_batch, o_head), first, length, value_width, o_row,
                BLOCK_M, BLOCK_EV)
    rows = first + tl.arange(0, BLOCK_M)
    tl.store(delta_ptr + g * length + rows, tl.sum(wide(d_out) * wide(out), axis=1), mask=rows < length)


@triton.jit
def _probabilities(q, k, lse, rows, columns, length, source, scale, CAUSAL: tl.constexpr,
                   PRECISION: tl.constexpr):
    """P = exp(scale * q kᵀ - lse) of a tile, 0 where a key is hidden or out of range."""
    scores = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    probs = tl.exp(scores - lse[:, None])
    return tl.where(_visible(rows, columns, length, source, CAUSAL), probs, 0.0)


@triton.jit
def attention_backward_kv_kernel(q_ptr, k_ptr, v_ptr, grad_out_ptr, lse_ptr, delta_ptr, grad_k_ptr, grad_v_ptr,
                                 q_batch, q_head, q_row, k_batch, k_head, k_row, v_batch, v_head, v_row,
                                 d_batch, d_head, d_row, gk_batch, gk_head, gk_row, gv_batch, gv_head, gv_row,
                                 heads, group0, length, source, width, value_width, scale: tl.float64,
                                 CAUSAL: tl.constexpr, PRECISION: tl.constexpr, BLOCK_M: tl.constexpr,
                                 BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_EV: tl.constexpr):
    """dK and dV of one block of BLOCK_N keys, over every query row that sees them."""
    start, g = _block_and_group(group0, BLOCK_N)
    scale = wide_scalar(scale, q_ptr)
    q_ptr = _group_start(q_ptr, g, heads, q_batch, q_head)
    grad_out_ptr = _group_start(grad_out_ptr, g, heads, d_batch, d_head)
    k = _tile(_group_start(k_ptr, g, heads, k_batch, k_head), start, source, width, k_row, BLOCK_N, BLOCK_E)  # (N, E)
    v = _tile(_group_start(v_ptr, g, heads, v_batch, v_head), start, source, value_width, v_row, BLOCK_N,
              BLOCK_EV)                                                                         # (N, Ev)
    columns = start + tl.arange(0, BLOCK_N)
    acc_k = wide(tl.zeros([BLOCK_N, BLOCK_E], dtype=k_ptr.dtype.element_ty))   # float32 for 16-bit k
    acc_v = tl.zeros([BLOCK_N, BLOCK_EV], dtype=acc_k.dtype)
    begin = 0
    if CAUSAL:
        begin = (start // BLOCK_M) * BLOCK_M  # query rows before the block's first key see none of it
    for first in range(begin, length, BLOCK_M):
        rows = first + tl.arange(0, BLOCK_M)
        q = _tile(q_ptr, first, length, width, q_row, BLOCK_M, BLOCK_E)                        # (M, E)
        d_out = _tile(grad_out_ptr, first, length, value_width, d_row, BLOCK_M, BLOCK_EV)      # (M, Ev)
        lse, delta = _row_statistics(lse_ptr + g * length, delta_ptr + g * length, rows, length)
        probs = _probabilities(q, k, lse, rows, columns, length, source, scale, CAUSAL, PRECISION)  # (M, N)
        acc_v += tl.dot(tl.trans(probs).to(d_out.dtype), d_out, input_precision=PRECISION)
        d_probs = tl.dot(d_out, tl.trans(v), input_precision=PRECISION)                      # (M, N)
        d_scores = probs * (d_probs - delta[:, None]) * scale
        acc_k += tl.dot(tl.trans(d_scores).to(q.dtype), q, input_precision=PRECISION)
    _store_tile(_group_start(grad_k_ptr, g, heads, gk_batch, gk_head), start, source, width, gk_row, acc_k,
                BLOCK_N, BLOCK_E)
    _store_tile(_group_start(grad_v_ptr, g, heads, gv_batch, gv_head), start, source, value_width, gv_row, acc_v,
                BLOCK_N, BLOCK_EV)


@triton.jit
def attention_backward_q_kernel(q_ptr, k_ptr, v_ptr, grad_out_ptr, lse_ptr, delta_ptr, grad_q_ptr,
                                q_batch, q_head, q_row, k_batch, k_head, k_row, v_batch, v_head, v_row,
                                d_batch, d_head, d_row, gq_batch, gq_head, gq_row,
                                heads, group0, length, source, width, value_width, scale: tl.float64,
                                CAUSAL: tl.constexpr, PRECISION: tl.constexpr, BLOCK_M: tl.constexpr,
                                BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_EV: tl.constexpr):
    """dQ of one block of BLOCK_M query rows, over every key they see."""
    first, g = _block_and_group(group0, BLOCK_M)
    rows = first + tl.arange(0, BLOCK_M)
    q = _tile(_group_start(q_ptr, g, heads, q_batch, q_head), first, length, width, q_row, BLOCK_M, BLOCK_E)
    d_out = _tile(_group_start(grad_out_ptr, g, heads, d_batch, d_head), first, length, value_width, d_row,
                  BLOCK_M, BLOCK_EV)
    lse, delta = _row_statistics(lse_ptr + g * length, delta_ptr + g * length, rows, length)
    k_ptr = _group_start(k_ptr, g, heads, k_batch, k_head)
    v_ptr = _group_start(v_ptr, g, heads, v_batch, v_head)
    scale = wide_scalar(scale, q_ptr)
    acc = wide(tl.zeros([BLOCK_M, BLOCK_E], dtype=q_ptr.dtype.element_ty))   # float32 for 16-bit q
    end = source
    if CAUSAL:
        end = tl.minimum(source, first + BLOCK_M)
    for start in range(0, end, BLOCK_N):
        columns = start + tl.arange(0, BLOCK_N)
        k = _tile(k_ptr, start, source, width, k_row, BLOCK_N, BLOCK_E)
        v = _tile(v_ptr, start, source, value_width, v_row, BLOCK_N, BLOCK_EV)
        probs = _probabilities(q, k, lse, rows, columns, length, source, scale, CAUSAL, PRECISION)
        d_probs = tl.dot(d_out, tl.trans(v), input_precision=PRECISION)
        d_scores = probs * (d_probs - delta[:, None]) * scale
        acc += tl.dot(d_scores.to(k.dtype), k, input_precision=PRECISION)
    _store_tile(_group_start(grad_q_ptr, g, heads, gq_batch, gq_head), first, length, width, gq_row, acc,
                BLOCK_M, BLOCK_E)
