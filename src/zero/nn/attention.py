"""``nn.MultiheadAttention``: PyTorch's module, on Zero's attention ops.

    query (L, N, E) or (N, L, E) with batch_first, key (S, N, Ek), value (S, N, Ev)
      -> q, k, v projected to E and split into H heads of E/H         (N, H, L|S, E/H)
      -> softmax(q kᵀ / √(E/H) + masks) v                             (N, H, L, E/H)
      -> heads joined and projected by out_proj                        (L, N, E) / (N, L, E)

Masks follow the module's PyTorch conventions, which are the opposite of
``scaled_dot_product_attention``'s for booleans: in ``attn_mask`` (L, S) or (N·H, L, S)
and ``key_padding_mask`` (N, S), True means *do not attend*; float masks are added to
the scores. With ``need_weights=True`` (the default, as in PyTorch) the attention
weights are computed explicitly and returned, averaged over the heads unless
``average_attn_weights=False``; with ``need_weights=False`` the work goes to
``F.scaled_dot_product_attention``, which runs unmasked causal self-attention as the
fused flash-style op.
"""
from __future__ import annotations

import math

from .. import dtypes
from ..errors import DTypeError, ShapeError, describe
from ..tensors.creation import empty, ones, zeros
from ..tensors.tensor import Tensor
from . import functional as F
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under PyTorch's name for MultiheadAttention's out_proj (so the reprs agree)."""


class MultiheadAttention(Module):
    """PyTorch's repr: no extra fields, the out_proj child only."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ShapeError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1), got {dropout}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        made = dict(device=device, dtype=dtype)
        self.in_proj_weight: Parameter | None
        self.q_proj_weight: Parameter | None
        self.k_proj_weight: Parameter | None
        self.v_proj_weight: Parameter | None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **made))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **made))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **made))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **made))
        self.in_proj_bias = Parameter(zeros(3 * embed_dim, **made)) if bias else None
        self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **made)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's: Glorot-uniform projections, zero biases (out_proj's weight as a Linear's)."""
        for weight in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if weight is not None:
                init.xavier_uniform_(weight)
        for bias in (self.in_proj_bias, self.out_proj.bias):
            if bias is not None:
                init.zeros_(bias)

    def _projection(self, part: int):
        """(weight, bias) of the query (0), key (1) or value (2) projection."""
        e = self.embed_dim
        bias = None if self.in_proj_bias is None else self.in_proj_bias[part * e:(part + 1) * e]
        if self.in_proj_weight is not None:
            return self.in_proj_weight[part * e:(part + 1) * e], bias
        return (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[part], bias

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        batched = query.ndim == 3
        if not batched:                                          # (L, E): one sequence
            query, key, value = (t.unsqueeze(0 if self.batch_first else 1) for t in (query, key, value))
            key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
        if not self.batch_first:                                 # (L, N, E) -> (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        batch, length, source = query.shape[0], query.shape[1], key.shape[1]
        heads, width = self.num_heads, self.head_dim

        def split(t: Tensor, part: int, n: int) -> Tensor:       # (N, n, E_in) -> (N, H, n, D)
            weight, bias = self._projection(part)
            return F.linear(t, weight, bias).reshape(batch, n, heads, width).transpose(1, 2)

        q, k, v = split(query, 0, length), split(key, 1, source), split(value, 2, source)
        mask = self._additive_mask(attn_mask, key_padding_mask, is_causal, batch, length, source, q.dtype, q.device)
        dropout = self.dropout if self.training else 0.0
        weights = None
        if need_weights:
            scores = (q @ k.mT) * (1.0 / math.sqrt(width))       # (N, H, L, S)
            if mask is not None:
                scores = scores + mask
            probs = F.softmax(scores, -1)
            weights = probs.mean(1) if average_attn_weights else probs
            out = F.dropout(probs, dropout, training=dropout > 0) @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout,
                                                 is_causal=is_causal and mask is None)
        out = self.out_proj(out.transpose(1, 2).reshape(batch, length, self.embed_dim))  # (N, L, E)
        if not self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            weights = None if weights is None else weights.squeeze(0)
        return out, weights

    def _additive_mask(self, attn_mask, key_padding_mask, is_causal: bool, batch: int, length: int, source: int,
                       dtype, device):
        """The masks as one float tensor added to the scores (-inf where not to attend),
        broadcasting to (N, H, L, S); None when there is none."""
        mask = None
        if attn_mask is None and is_causal:
            attn_mask = ones(length, source, dtype=dtypes.bool_, device=device).triu(1)
        for given, name in ((attn_mask, "attn_mask"), (key_padding_mask, "key_padding_mask")):
            if given is None:
                continue
            if not isinstance(given, Tensor):
                raise TypeError(f"MultiheadAttention: {name} must be a tensor, got {describe(given)}")
            if given.dtype is dtypes.bool_:
                term = zeros(given.shape, dtype=dtype, device=device).masked_fill(given, float("-inf"))
            elif given.dtype.is_floating_point:
                term = given.to(dtype)
            else:
                raise DTypeError(f"MultiheadAttention: {name} must be bool or floating point, got {describe(given)}")
            if name == "key_padding_mask":
                if given.shape != (batch, source):
                    raise ShapeError(f"MultiheadAttention: key_padding_mask must be [{batch}, {source}] (N, S), "
                                     f"got {describe(given)}")
                term = term.reshape(batch, 1, 1, source)
            elif given.ndim == 3:
                if given.shape != (batch * self.num_heads, length, source):
                    raise ShapeError(f"MultiheadAttention: a 3-D attn_mask must be [{batch * self.num_heads}, "
                                     f"{length}, {source}] (N·H, L, S), got {describe(given)}")
                term = term.reshape(batch, self.num_heads, length, source)
            elif given.shape != (length, source):
                raise ShapeError(f"MultiheadAttention: attn_mask must be [{length}, {source}] (L, S) or 3-D, "
                                 f"got {describe(given)}")
            mask = term if mask is None else mask + term
        return mask
