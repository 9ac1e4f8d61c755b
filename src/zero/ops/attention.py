"""Scaled dot-product attention as a composition of basic ops (PyTorch's semantics).

    query (..., L, E)   key (..., S, E)   value (..., S, Ev)   ->   (..., L, Ev)

    scores = (query * scale) @ keyᵀ              (..., L, S)    scale = 1/sqrt(E) by default
    scores: bool mask -> -inf where the mask is False (True = attend)
            float mask -> added
            is_causal  -> -inf above the diagonal (position i sees j <= i, top-left aligned)
    probs  = softmax(scores, -1), then dropout(probs, dropout_p)
    out    = probs @ value

A query row whose keys are all masked gets zeros (attention's softmax,
``MaskedSoftmax``, gives zeros for a row of -inf where plain softmax gives NaN), as
PyTorch's attention gives, and a zero gradient. Autograd runs through each op, so
the [.., L, S] scores and probabilities are kept for backward; the fused
flash-style op that recomputes them instead is a separate, later op.
"""
from __future__ import annotations

import math

from .. import dtypes
from ..errors import DTypeError, ShapeError, ValueRangeError, describe
from ..random import Generator
from ..tensors.creation import ones
from ..tensors.tensor import Tensor
from . import elementwise
from .dropout import dropout
from .softmax import MaskedSoftmax
from ..autograd import autocast_hook


def _check(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention: {name} must be a tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ShapeError(f"scaled_dot_product_attention: {name} needs at least 2 dimensions (..., "
                             f"length, features), got {describe(t)}")
        if not t.dtype.is_floating_point:
            raise DTypeError(f"scaled_dot_product_attention: {name} must be floating point, got {describe(t)}")
    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(f"scaled_dot_product_attention: query {describe(query)} and key {describe(key)} "
                         "must have the same feature size E (last dimension)")
    if key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention: key {describe(key)} and value {describe(value)} "
                         "must have the same length S (second-to-last dimension)")
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError(f"scaled_dot_product_attention: attn_mask must be a tensor, got "
                        f"{type(attn_mask).__name__}")


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 generator: Generator | None = None) -> Tensor:
    if autocast_hook.state.active:
        query, key, value, attn_mask = autocast_hook.cast("scaled_dot_product_attention", query, key, value, attn_mask)
    _check(query, key, value, attn_mask)
    if attn_mask is not None and is_causal:
        raise ValueRangeError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both "
                              "(fold the causal triangle into attn_mask instead)")
    length, source = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0   # (E = 0: scores are 0)
    scores = (query * scale) @ key.mT                                         # (..., L, S)
    if is_causal:
        keep = ones((length, source), dtype=dtypes.bool_, device=query.device).tril()  # (L, S)
        scores = elementwise.Where.apply(keep, scores, float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = elementwise.Where.apply(attn_mask, scores, float("-inf"))
        elif attn_mask.dtype.is_floating_point:
            scores = scores + attn_mask
        else:
            raise DTypeError(f"scaled_dot_product_attention: attn_mask must be bool (True = attend) or "
                             f"floating point (added to the scores), got {describe(attn_mask)}")
    probs = MaskedSoftmax.apply(scores, -1)                                   # (..., L, S)
    if dropout_p > 0.0:
        probs = dropout(probs, dropout_p, training=True, generator=generator)
    return probs @ value                                                      # (..., L, Ev)
