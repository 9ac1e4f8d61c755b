"""PyTorch's Transformer layers (``torch.nn.modules.transformer``), with its submodule and
parameter names, so a PyTorch state_dict loads and gives the same output.

    encoder layer, post-norm (norm_first=False, the default):
        x = norm1(x + dropout1(self_attn(x, x, x)))
        x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))
    pre-norm (norm_first=True):
        x = x + dropout1(self_attn(norm1(x)))          x = x + dropout2(ffn(norm2(x)))
    decoder layer: the same with cross-attention (multihead_attn) on ``memory`` between the two,
        norm1 / norm2 / norm3 and dropout1 / dropout2 / dropout3 around the three blocks

Shapes: (S, N, E), or (N, S, E) with batch_first, or unbatched (S, E). Masks follow
MultiheadAttention's conventions: in ``*_mask`` (L, S) and ``*_key_padding_mask`` (N, S) a
bool True means "do not attend", a float is added to the scores. The attention runs with
need_weights=False, so through ``F.scaled_dot_product_attention``.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..errors import ShapeError, describe
from ..tensors.creation import full
from ..tensors.tensor import Tensor
from . import functional as F
from . import init
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm
from .module import Module


def _activation_of(activation: str | Callable) -> Callable:
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: building their submodules under PyTorch's
    names and in its order, the self-attention block and the feed-forward block."""

    self_attn: MultiheadAttention
    linear1: Linear
    linear2: Linear
    dropout: Dropout
    dropout1: Dropout
    activation: Callable

    def _build(self, blocks: int, d_model: int, nhead: int, dim_feedforward: int, dropout: float,
               activation: str | Callable, layer_norm_eps: float, batch_first: bool, norm_first: bool, bias: bool,
               device, dtype) -> None:
        """self_attn (and multihead_attn for a decoder's 3 blocks), linear1, dropout, linear2,
        norm1..norm{blocks}, dropout1..dropout{blocks}."""
        made = dict(device=device, dtype=dtype)
        for name in ("self_attn", "multihead_attn")[:blocks - 1]:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                   batch_first=batch_first, **made))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **made)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **made)
        self.norm_first = norm_first
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **made))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation_of(activation)

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                             is_causal=is_causal)[0]
        return self.dropout1(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        if self.activation is F.gelu and (self.dropout.p == 0.0 or not self.training):
            # one fused op: gelu(x W1ᵀ + b1) W2ᵀ + b2
            return F.ffn(x, self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_TransformerLayer):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self._build(2, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                    norm_first, bias, device, dtype)

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self.dropout2(self._ff_block(self.norm2(x)))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self.dropout2(self._ff_block(x)))


class TransformerDecoderLayer(_TransformerLayer):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self._build(3, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                    norm_first, bias, device, dtype)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self.dropout3(self._ff_block(self.norm3(x)))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self.dropout3(self._ff_block(x)))

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        out = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                  need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(out)


def _clones(layer: Module, count: int) -> ModuleList:
    return ModuleList([copy.deepcopy(layer) for _ in range(count)])


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` run in turn, then ``norm`` if given.
    (``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch's signature: Zero has
    no nested tensors, so padded positions are computed like any other.)"""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` run in turn on (tgt, memory), then
    ``norm`` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": ``encoder`` (num_encoder_layers
    layers and a final LayerNorm) over src, ``decoder`` over tgt attending to its output.
    Parameters with more than one dimension are re-initialised Glorot-uniform, as PyTorch's."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        made = dict(device=device, dtype=dtype)
        shared: dict[str, Any] = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                      layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, **shared, **made)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **made))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, **shared, **made)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **made))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batched = src.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched and src.ndim != tgt.ndim:
            raise ShapeError(f"Transformer: src {describe(src)} and tgt {describe(tgt)} must both be batched "
                             "(3-D) or both unbatched (2-D)")
        if batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(f"the batch number of src and tgt must be equal (src {describe(src)}, tgt "
                               f"{describe(tgt)})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model={self.d_model} "
                               f"(src {describe(src)}, tgt {describe(tgt)})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float (sz, sz) mask: -inf above the diagonal (the future), 0 on and below it."""
        return full((sz, sz), float("-inf"), device=device, dtype=dtype).triu(1)
