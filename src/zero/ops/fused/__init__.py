"""Fused ops: one op each for a hot composition of basic ops (the book's 融合).

    linear                  x Wᵀ + b                              OpLinearBias
    ffn                     linear -> GELU -> linear              OpFFN
    linear_cross_entropy    cross_entropy(x Eᵀ, target)           OpLinearCrossEntropy
    flash_attention         softmax(q kᵀ · scale [causal]) v      OpFlashAttention
    self_attention          heads of a packed qkv -> flash_attention -> merged heads
    layer_norm              (already one op: ``ops.normalization``) OpLayerNorm

Each has one forward and one backward and gives the composition's results (tests say
so). The last three also change what the graph keeps: ffn and linear_cross_entropy
recompute their large intermediates ((N, 4C) hidden, (N, V) logits) in backward, and
flash_attention recomputes its (L, S) probabilities block by block. The kernels are
``device.kernels.<op>_forward`` / ``<op>_backward`` (contract in the CPU kernels'
``fused`` module).
"""
from .ffn import FFN, ffn
from .flash_attention import FlashAttention, SelfAttention, flash_attention, self_attention
from .linear import LinearBias, linear
from .linear_cross_entropy import LinearCrossEntropy, default_chunk_size, linear_cross_entropy

__all__ = ["LinearBias", "linear", "FFN", "ffn", "LinearCrossEntropy", "linear_cross_entropy",
           "default_chunk_size", "FlashAttention", "flash_attention", "SelfAttention", "self_attention"]
