"""Fused kernels on the GPU: linear, GELU FFN, linear + cross-entropy, flash attention.

The contract's (``zero.backends.kernel_contract``; ``zero.backends.cpu.kernels.fused`` has
every shape in more detail). The products are cuBLAS GEMMs (``linalg.matmul``, reading
transposed weights as transpose flags); what lies between them is Triton:

    linear           GEMM, then the bias added in place
    ffn              GEMM -> Triton bias+GELU in place -> GEMM; backward recomputes the
                     hidden layer and applies GELU' with the bias in one Triton pass
    linear + CE      per chunk of rows: GEMM into a (chunk, V) scratch, then the Triton
                     cross-entropy row kernel; backward turns the recomputed logits into
                     d logits in place and accumulates grad_weight with GEMMs (beta = 1,
                     ``linalg.matmul_accumulate``)
    attention        Triton flash-attention kernels (``triton_kernels.attention``), which
                     read and write every array where it lies by its strides: self-
                     attention's heads straight out of the packed qkv, its output and
                     gradients straight into theirs

Scratch is a lease from the caching allocator (CuPy allocates through it) and goes back to
its bucket when its last array goes, normally when the call returns. Under
``TRITON_INTERPRET=1`` these functions also run on NumPy arrays (NumPy doing the GEMMs),
which is how CI checks them against the CPU.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..triton_kernels.attention import (
    attention_backward_kv_kernel,
    attention_backward_q_kernel,
    attention_delta_kernel,
    attention_forward_kernel,
)
from ..triton_kernels.elementwise import gelu_backward_kernel, gelu_forward_kernel
from ...attention_heads import merged_heads, packed_heads
from ...kernel_contract import Array, given
from ._arrays import accumulator_dtype, array_module, contiguous, output
from ._launch import ELEMENTWISE_BLOCK, cdiv, elementwise_grid, launch, next_power_of_2
from .linalg import fast_matmul, matmul, matmul_accumulate
from .nn import cross_entropy_backward, cross_entropy_forward
from .reduction import column_sums

__all__ = ["ffn_backward", "ffn_forward", "flash_attention_backward", "flash_attention_forward",
           "linear_backward", "linear_cross_entropy_backward", "linear_cross_entropy_forward",
           "linear_forward", "self_attention_backward", "self_attention_forward"]


# -- linear ---------------------------------------------------------------------------------


def linear_forward(x: Array, weight: Array, bias: Array | None, out: Array) -> None:
    matmul(x, weight.T, out)                                              # (N, OUT)
    if bias is not None:
        out += bias


def linear_backward(grad_out: Array, x: Array | None, weight: Array | None, grad_x: Array | None,
                    grad_weight: Array | None, grad_bias: Array | None) -> None:
    if grad_x is not None:
        matmul(grad_out, given(weight), grad_x)                           # (N, IN)
    if grad_weight is not None:
        matmul(grad_out.T, given(x), grad_weight)                         # (OUT, IN)
    if grad_bias is not None:
        column_sums(grad_out, grad_bias)


# -- GELU feed-forward --------------------------------------------------------------------


def _bias_gelu(h: Array, bias: Array | None, out: Array, tanh: bool) -> None:
    """out = gelu(h + bias) over (N, H) rows (out may be h)."""
    launch(gelu_forward_kernel, elementwise_grid(h.size), h, h if bias is None else contiguous(bias), out, h.size,
           h.shape[1], HAS_BIAS=bias is not None, TANH=tanh, BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def _bias_gelu_backward(grad: Array, h: Array, bias: Array | None, out: Array, tanh: bool) -> None:
    """out = grad * gelu'(h + bias) (out may be grad or h)."""
    launch(gelu_backward_kernel, elementwise_grid(h.size), grad, h, h if bias is None else contiguous(bias), out,
           h.size, h.shape[1], HAS_BIAS=bias is not None, TANH=tanh, BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def ffn_forward(x: Array, w1: Array, b1: Array | None, w2: Array, b2: Array | None, approximate: str, out: Array,
                kept: Array | None = None) -> None:
    xp = array_module(x)
    h = xp.empty((x.shape[0], w1.shape[0]), x.dtype)                      # (N, H), freed on return
    if kept is not None:                                                  # x @ w1ᵀ stays for backward
        matmul(x, w1.T, kept)
        _bias_gelu(kept, b1, h, approximate == "tanh")                    # h <- gelu(kept + b1)
    else:
        matmul(x, w1.T, h)
        _bias_gelu(h, b1, h, approximate == "tanh")                       # h <- gelu(h + b1)
    linear_forward(h, w2, b2, out)


def ffn_backward(grad_out, x, w1, b1, w2, approximate: str, grad_x, grad_w1, grad_b1, grad_w2, grad_b2,
                 kept=None) -> None:
    xp = array_module(x)
    tanh = approximate == "tanh"
    rows, hidden = x.shape[0], w1.shape[0]
    h = kept                                                              # x @ w1ᵀ, bias not added: read only
    if h is None:
        h = xp.empty((rows, hidden), x.dtype)
        matmul(x, w1.T, h)
    buffer = xp.empty((rows, hidden), x.dtype)                            # gelu(h + b1), then d gelu
    if grad_w2 is not None:
        _bias_gelu(h, b1, buffer, tanh)
        matmul(grad_out.T, buffer, grad_w2)                               # (C2, H)
    if grad_b2 is not None:
        column_sums(grad_out, grad_b2)
    if grad_x is None and grad_w1 is None and grad_b1 is None:
        return
    matmul(grad_out, w2, buffer)                                          # d gelu (N, H)
    _bias_gelu_backward(buffer, h, b1, buffer, tanh)                      # buffer <- d pre-activation
    linear_backward(buffer, x, w1, grad_x, grad_w1, grad_b1)


# -- linear + cross-entropy -----------------------------------------------------------------


def _logit_chunks(x: Array, weight: Array, chunk_size: int,
                  kept: Array | None = None) -> Iterator[tuple[int, int, Array]]:
    """(r0, r1, logits of rows r0:r1) chunk by chunk, the logits x[r0:r1] Wᵀ computed into one
    reused (chunk, V) scratch array, or into ``kept`` (N, V) as one chunk."""
    rows, vocab = x.shape[0], weight.shape[0]
    chunk = max(1, rows if kept is not None else min(int(chunk_size), rows))
    scratch = array_module(x).empty((chunk, vocab), x.dtype) if kept is None else kept   # (R, V)
    for r0 in range(0, rows, chunk):
        r1 = min(r0 + chunk, rows)
        logits = scratch[:r1 - r0]
        matmul(x[r0:r1], weight.T, logits)
        yield r0, r1, logits


def linear_cross_entropy_forward(x: Array, weight: Array, target: Array, ignore_index: int, chunk_size: int,
                                 loss: Array, lse: Array, kept: Array | None = None) -> None:
    for r0, r1, logits in _logit_chunks(x, weight, chunk_size, kept):
        cross_entropy_forward(logits, target[r0:r1], None, ignore_index, 0.0, loss[r0:r1], lse[r0:r1])


def linear_cross_entropy_backward(grad_loss: Array, x: Array, weight: Array, target: Array, lse: Array,
                                  ignore_index: int, chunk_size: int, grad_x: Array | None,
                                  grad_weight: Array | None, kept: Array | None = None) -> None:
    if x.shape[0] == 0:
        if grad_weight is not None:
            grad_weight.fill(0)
        return
    chunks = _logit_chunks(x, weight, chunk_size) if kept is None else [(0, x.shape[0], kept)]
    for r0, r1, logits in chunks:
        # d logits = g * (softmax - onehot(target)), 0 on ignored rows: in place in a chunk of
        # recomputed logits, into a new array from kept ones (backward may run twice)
        grad_logits = logits if kept is None else array_module(x).empty_like(logits)
        cross_entropy_backward(grad_loss[r0:r1], logits, target[r0:r1], None, lse[r0:r1], ignore_index, 0.0,
                               grad_logits)
        if grad_x is not None:
            matmul(grad_logits, weight, grad_x[r0:r1])                    # (R, C)
        if grad_weight is not None:
            (matmul_accumulate if r0 else matmul)(grad_logits.T, x[r0:r1], grad_weight)  # (V, C) += d logitsᵀ x


# -- flash attention --------------------------------------------------------------------------

MAX_GROUPS_PER_LAUNCH = 65535  # the grid's second dimension

# Tile (BLOCK_M = BLOCK_N rows and keys) and pipeline stages by item size and padded head
# size (the larger of BLOCK_E and BLOCK_EV): the largest whose shared memory fits a block of
# an H100/H200 (sm_90: 232,448 bytes); float64 heads above 256 fit no tile.
# tests/backends/cuda/test_compile_sm90.py compiles head sizes 64, 128 and 256 (and 512 for
# float32) and checks each against the limit; the bytes of each choice are in benchmarks/journal/.
ATTENTION_TILES = {4: ((64, 64, 2), (128, 32, 2), (256, 32, 2), (512, 16, 2)),
                   8: ((64, 64, 2), (128, 32, 2), (256, 16, 2))}     # itemsize: (largest head, tile, stages)
ATTENTION_TILES[2] = ATTENTION_TILES[4]   # 16-bit tiles: float32's choices (half the shared memory; not tuned on a GPU)


def _attention_config(q: Array, v: Array) -> dict[str, Any]:
    """Tile sizes, stages and dot precision for head sizes E (queries, keys) and Ev (values)."""
    block_e = max(16, next_power_of_2(q.shape[-1]))
    block_ev = max(16, next_power_of_2(v.shape[-1]))
    head = max(block_e, block_ev)
    choices = ATTENTION_TILES[q.dtype.itemsize]
    fitting = [(tile, stages) for largest, tile, stages in choices if head <= largest]
    if not fitting:
        raise ValueError(f"flash attention on CUDA: head size {max(q.shape[-1], v.shape[-1])} in {q.dtype} needs more "
                         f"shared memory than a GPU block has; the largest is {choices[-1][0]} for this dtype")
    tile, stages = fitting[0]
    precision = "tf32" if q.dtype == np.float32 and fast_matmul() else "ieee"
    return {"PRECISION": precision, "BLOCK_M": tile, "BLOCK_N": tile, "BLOCK_E": block_e, "BLOCK_EV": block_ev,
            "num_warps": 4, "num_stages": stages}


def _group_slices(groups: int) -> Iterator[tuple[int, int]]:
    """(first group, count) of each launch: at most MAX_GROUPS_PER_LAUNCH groups each."""
    for g0 in range(0, groups, MAX_GROUPS_PER_LAUNCH):
        yield g0, min(MAX_GROUPS_PER_LAUNCH, groups - g0)


def _strided(x: Array) -> tuple[Array, tuple[int, int, int]]:
    """(array, its element strides between batches, heads and rows) of (G, L, E) or
    (B, H, L, E) attention operands, G = B·H (a 3-D array is one head per batch); a
    contiguous copy when its features are not adjacent (for an output, the kernels then
    write the copy and ``_copy_back`` moves it into place)."""
    if x.shape[-1] > 1 and x.strides[-1] != x.itemsize:
        x = contiguous(x)
    strides = [s // x.itemsize for s in x.strides]
    if x.ndim == 3:
        return x, (strides[0], 0, strides[1])
    return x, (strides[0], strides[1], strides[2])


def _heads(x: Array) -> int:
    return x.shape[1] if x.ndim == 4 else 1


def _copy_back(written: Array, out: Array) -> None:
    """Move a kernel's output into ``out`` when ``_strided`` gave the kernel a copy of it."""
    if written is not out:
        out[...] = written


def flash_attention_forward(q: Array, k: Array, v: Array, scale: float, causal: bool, out: Array,
                            lse: Array) -> None:
    """out (G, L, Ev) = softmax(scale q kᵀ) v, lse (G, L) its log-sum-exp; q, k, v and out
    (G, ·, ·) or (B, H, ·, ·) arrays of any strides with adjacent features."""
    length, width = q.shape[-2:]
    source, value_width = k.shape[-2], v.shape[-1]
    if source == 0 or length == 0:
        out.fill(0)
        lse.fill(-np.inf)
        return
    (q, q_strides), (k, k_strides), (v, v_strides) = _strided(q), _strided(k), _strided(v)
    target, out_strides = _strided(out)
    config = _attention_config(q, v)
    heads, groups = _heads(q), lse.size // length
    for g0, count in _group_slices(groups):
        launch(attention_forward_kernel, (cdiv(length, config["BLOCK_M"]), count), q, k, v, target, output(lse),
               *q_strides, *k_strides, *v_strides, *out_strides, heads, g0, length, source, width, value_width,
               float(scale), CAUSAL=bool(causal), **config)
    _copy_back(target, out)


def flash_attention_backward(grad_out: Array, q: Array, k: Array, v: Array, out: Array, lse: Array, scale: float,
                             causal: bool, grad_q: Array | None, grad_k: Array | None, grad_v: Array | None) -> None:
    """The gradients of ``flash_attention_forward`` (any of grad_q, grad_k, grad_v None:
    not computed); the same layouts."""
    xp = array_module(q)
    length, width = q.shape[-2:]
    source, value_width = k.shape[-2], v.shape[-1]
    if source == 0 or length == 0:
        for grad in (grad_q, grad_k, grad_v):
            if grad is not None:
                grad.fill(0)
        return
    (q, q_strides), (k, k_strides), (v, v_strides) = _strided(q), _strided(k), _strided(v)
    (grad_out, d_strides), (out, o_strides) = _strided(grad_out), _strided(out)
    config = _attention_config(q, v)
    heads, groups = _heads(q), lse.size // length
    delta = xp.empty((groups, length), accumulator_dtype(q.dtype))        # rowsum(dO * O), float32 for 16-bit q
    for g0, count in _group_slices(groups):
        launch(attention_delta_kernel, (cdiv(length, 64), count), grad_out, out, delta, *d_strides, *o_strides,
               heads, g0, length, value_width, BLOCK_M=64, BLOCK_EV=config["BLOCK_EV"], num_warps=4)
    sizes = (length, source, width, value_width, float(scale))
    inputs = (*q_strides, *k_strides, *v_strides, *d_strides)
    if grad_k is not None or grad_v is not None:
        grad_k = xp.empty(k.shape, k.dtype) if grad_k is None else grad_k
        grad_v = xp.empty(v.shape, v.dtype) if grad_v is None else grad_v
        (k_target, gk_strides), (v_target, gv_strides) = _strided(grad_k), _strided(grad_v)
        for g0, count in _group_slices(groups):
            launch(attention_backward_kv_kernel, (cdiv(source, config["BLOCK_N"]), count), q, k, v, grad_out, lse,
                   delta, k_target, v_target, *inputs, *gk_strides, *gv_strides, heads, g0, *sizes,
                   CAUSAL=bool(causal), **config)
        _copy_back(k_target, grad_k)
        _copy_back(v_target, grad_v)
    if grad_q is not None:
        q_target, gq_strides = _strided(grad_q)
        for g0, count in _group_slices(groups):
            launch(attention_backward_q_kernel, (cdiv(length, config["BLOCK_M"]), count), q, k, v, grad_out, lse,
                   delta, q_target, *inputs, *gq_strides, heads, g0, *sizes, CAUSAL=bool(causal), **config)
        _copy_back(q_target, grad_q)


def self_attention_forward(qkv: Array, n_head: int, scale: float, causal: bool, out: Array, lse: Array) -> None:
    """Each head read out of qkv (B, T, 3C) where it lies, its output written into out
    (B, T, C) where it goes: no copies."""
    q, k, v = packed_heads(qkv, n_head)                                  # (B, H, T, D) views
    flash_attention_forward(q, k, v, scale, causal, merged_heads(output(out), n_head), output(lse))


def self_attention_backward(grad_out: Array, qkv: Array, out: Array, lse: Array, n_head: int, scale: float,
                            causal: bool, grad_qkv: Array) -> None:
    q, k, v = packed_heads(qkv, n_head)
    grads = packed_heads(output(grad_qkv), n_head)                      # (3, B, H, T, D) view of grad_qkv
    flash_attention_backward(merged_heads(grad_out, n_head), q, k, v, merged_heads(out, n_head), lse, scale,
                             causal, *grads)
