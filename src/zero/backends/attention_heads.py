"""Where multi-head attention's heads lie in GPT's packed arrays, as views, for every backend.

    qkv (B, T, 3C), C = H·D: along the last axis q, then k, then v, each H heads of D
        qkv[b, t, i·C + h·D + d] = (q, k, v)[i][b, h, t, d]      -> (3, B, H, T, D) view
    y (B, T, C): the heads' outputs side by side
        y[b, t, h·D + d] = heads[b, h, t, d]                      -> (B, H, T, D) view

A view of a C-contiguous array is free and writes through; of any other array, NumPy's
and CuPy's ``reshape`` make a copy, fit to read from but not to write into.
"""
from __future__ import annotations


def packed_heads(qkv, n_head: int):
    """(3, B, H, T, D): q, k, v of each head, read from (or written into) qkv (B, T, 3C)."""
    batch, length, width3 = qkv.shape
    return qkv.reshape(batch, length, 3, n_head, width3 // (3 * n_head)).transpose(2, 0, 3, 1, 4)


def merged_heads(y, n_head: int):
    """(B, H, T, D): each head's D features of y (B, T, C)."""
    batch, length, width = y.shape
    return y.reshape(batch, length, n_head, width // n_head).transpose(0, 2, 1, 3)
