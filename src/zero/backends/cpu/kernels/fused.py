"""Fused kernels (the book's OpLinearBias, OpFFN, OpLinearCrossEntropy, OpFlashAttention).

The contract: every device's kernels module offers these names and signatures (a CUDA
backend implements them with cuBLAS and Triton). Float arrays share one dtype (float32
or float64); "N" is the number of rows after the op flattened the leading dimensions.
Inputs may be strided where noted, outputs are C-contiguous and written, never returned;
a gradient output passed as ``None`` is not wanted and not computed.

    linear_forward(x, weight, bias, out)
        x (N, IN); weight (OUT, IN), any strides; bias (OUT,) or None; out (N, OUT)
        out = x @ weightᵀ + bias
    linear_backward(grad_out, x, weight, grad_x, grad_weight, grad_bias)
        grad_out (N, OUT); grad_x (N, IN) = grad_out @ weight;
        grad_weight (OUT, IN) = grad_outᵀ @ x; grad_bias (OUT,) = column sums of grad_out.
        x may be None when grad_weight is; weight may be None when grad_x is.

    ffn_forward(x, w1, b1, w2, b2, approximate, out, kept=None)
        x (N, C); w1 (H, C); b1 (H,) or None; w2 (C2, H); b2 (C2,) or None; out (N, C2)
        out = gelu(x @ w1ᵀ + b1) @ w2ᵀ + b2, approximate "none" (erf) or "tanh".
        kept (N, H) or None: where to leave x @ w1ᵀ (no bias) for backward; without it,
        the hidden activation exists only during the call.
    ffn_backward(grad_out, x, w1, b1, w2, approximate, grad_x, grad_w1, grad_b1, grad_w2, grad_b2,
                 kept=None)
        grad_out (N, C2); each gradient has its input's shape. Starts from forward's
        kept x @ w1ᵀ (read, not changed: backward may run twice) or recomputes it.

    linear_cross_entropy_forward(x, weight, target, ignore_index, chunk_size, loss, lse, kept=None)
        x (N, C); weight (V, C), any strides; target (N,) int64/int32, each in [0, V) or
        ignore_index; loss (N,) = lse - logits[target], 0 on ignored rows; lse (N,) the
        logsumexp of each row of logits = x @ weightᵀ. Works chunk_size rows at a time:
        never more than (chunk_size, V) logits exist. kept (N, V) or None: where to leave
        the logits for backward (all N rows then make one chunk).
    linear_cross_entropy_backward(grad_loss, x, weight, target, lse, ignore_index, chunk_size,
                                  grad_x, grad_weight, kept=None)
        grad_loss (N,) the upstream gradient of each row's loss; lse from forward.
        d logits = grad_loss * (softmax(logits) - onehot(target)), 0 on ignored rows,
        from forward's kept logits (read, not changed) or recomputed chunk by chunk;
        grad_x (N, C) = d logits @ weight; grad_weight (V, C) = d logitsᵀ @ x.

    flash_attention_forward(q, k, v, scale, causal, out, lse)
        q (G, L, E); k (G, S, E); v (G, S, Ev); out (G, L, Ev); lse (G, L); G = B * H.
        scores = scale * q @ kᵀ; with causal, query i sees keys j <= i (top-left aligned,
        as PyTorch's is_causal); out = softmax(scores) @ v; lse = logsumexp of each row of
        the (masked) scores. Never allocates (G, L, S).
    flash_attention_backward(grad_out, q, k, v, out, lse, scale, causal, grad_q, grad_k, grad_v)
        grad_out, out (G, L, Ev); lse (G, L) from forward; grad_q, grad_k, grad_v shaped as
        q, k, v. Recomputes the probabilities block by block.
    self_attention_forward(qkv, n_head, scale, causal, out, lse)
        qkv (B, T, 3C), any strides: q, k, v side by side, each n_head heads of D = C / H
        features (``zero.backends.attention_heads``); out (B, T, C), the heads' outputs
        side by side; lse (B·H, T). Flash attention of each head, with no (G, T, D) copies
        required (the CPU reads and writes the heads in place).
    self_attention_backward(grad_out, qkv, out, lse, n_head, scale, causal, grad_qkv)
        grad_out (B, T, C), any strides; out, lse from forward; grad_qkv (B, T, 3C).

On the CPU every product is a BLAS call on transposed views (batched over heads for
attention), the row-wise work is Numba, the temporaries come from the caching allocator
(``_fused_support``), and each kernel splits its chain of work over the CPU pool's threads
itself, by rows with per-part scratch, sized by ``cpu/parallel.py`` (BLAS runs
single-threaded).
"""
from __future__ import annotations

from ._fused_attention import (flash_attention_backward, flash_attention_forward, self_attention_backward,
                               self_attention_forward)
from ._fused_cross_entropy import linear_cross_entropy_backward, linear_cross_entropy_forward
from ._fused_linear import ffn_backward, ffn_forward, linear_backward, linear_forward

__all__ = [
           "ffn_backward",
           "ffn_forward",
           "flash_attention_backward",
           "flash_attention_forward",
           "linear_backward",
           "linear_cross_entropy_backward",
           "linear_cross_entropy_forward",
           "linear_forward",
           "self_attention_backward",
           "self_attention_forward",
]
