"""Scaled dot-product attention as one flash-style op (the book's ``OpFlashAttention``).

    q (..., L, E)   k (..., S, E)   v (..., S, Ev)   ->   out (..., L, Ev)
    out = softmax(scale * q @ kᵀ  [+ causal mask: query i sees keys j <= i]) @ v

The leading dimensions (batch, heads) must be equal in q, k and v; they are flattened
to G. Across forward and backward the op keeps only q, k, v, the output and one number
per query row, the log-sum-exp of its scores (G, L): never the (G, L, S) scores or
probabilities. The composition of basic ops keeps the probabilities (G·L·S elements:
for the book's GPT, B=64, H=6, T=256, 100 MB per layer in float32) and a scaled copy of
q. Backward recomputes the probabilities block by block from q, k and lse (the
flash-attention backward):

    D  = rowsum(dO * O)                P  = exp(scale * q kᵀ - lse)
    dV = Pᵀ dO      dP = dO vᵀ         dS = P * (dP - D)
    dQ = scale * dS k                  dK = scale * dSᵀ q

Work: backward adds one GEMM (q kᵀ again) to the composition's six, but with is_causal
the products skip the blocks of keys above the diagonal (at T = 256 and blocks of 128,
a quarter of them), so the fused op computes a little less in all.
"""
from __future__ import annotations

import math

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import ShapeError, describe
from ...tensors.meta import numel
from ...tensors.tensor import Tensor
from ..arguments import array_or_none, check_floats
from ...autograd import autocast_hook


def _check(q: Tensor, k: Tensor, v: Tensor) -> None:
    op = "flash_attention"
    check_floats(op, query=q, key=k, value=v)
    for name, t in (("query", q), ("key", k), ("value", v)):
        if t.ndim < 2:
            raise ShapeError(f"{op}: {name} needs at least 2 dimensions (..., length, features), got "
                             f"{describe(t)}")
    if not q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        raise ShapeError(f"{op}: query {describe(q)}, key {describe(k)} and value {describe(v)} must "
                         "have the same leading (batch, head) dimensions")
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(f"{op}: query {describe(q)} and key {describe(k)} must have the same feature "
                         "size E (last dimension)")
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"{op}: key {describe(k)} and value {describe(v)} must have the same length S")


class FlashAttention(Op):
    def forward(self, q: Tensor, k: Tensor, v: Tensor, scale: float | None = None, causal: bool = True) -> Tensor:
        _check(q, k, v)
        batch, length = q.shape[:-2], q.shape[-2]
        groups = numel(batch)
        if scale is None:
            scale = 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0
        qg, kg, vg = (t.detach().contiguous().reshape(groups, t.shape[-2], t.shape[-1])
                      for t in (q, k, v))                                   # (G, L|S, E|Ev)
        out = Tensor._empty((groups, length, v.shape[-1]), q.dtype, q.device)   # (G, L, Ev)
        lse = Tensor._empty((groups, length), _statistics_dtype(q.dtype), q.device)   # (G, L)
        q.device.kernels.flash_attention_forward(qg._array, kg._array, vg._array, float(scale), bool(causal),
                                                 out._array, lse._array)
        self.save_for_backward(qg, kg, vg, out, lse)
        self.scale, self.causal = float(scale), bool(causal)
        self.shapes = (q.shape, k.shape, v.shape)
        return out.reshape(batch + (length, v.shape[-1]))

    def backward(self, grad: Tensor) -> Grads:
        qg, kg, vg, out, lse = self.saved_tensors
        grad_out = grad.contiguous().reshape(out.shape)                      # (G, L, Ev)
        grads = [Tensor._empty(t.shape, t.dtype, t.device) if need else None
                 for t, need in zip((qg, kg, vg), self.needs_input_grad)]
        grad.device.kernels.flash_attention_backward(
            grad_out._array, qg._array, kg._array, vg._array, out._array, lse._array, self.scale,
            self.causal, *(array_or_none(g) for g in grads))
        return tuple(None if g is None else g.reshape(shape) for g, shape in zip(grads, self.shapes))


def flash_attention(q: Tensor, k: Tensor, v: Tensor, scale: float | None = None, is_causal: bool = True) -> Tensor:
    """softmax(scale · q kᵀ [causal]) v without keeping the (…, L, S) scores (see the module)."""
    if autocast_hook.state.active:  # (F.scaled_dot_product_attention's fused path)
        q, k, v = autocast_hook.cast("scaled_dot_product_attention", q, k, v)
    return FlashAttention.apply(q, k, v, scale=scale, causal=is_causal)


class SelfAttention(Op):
    """Multi-head self-attention from a packed projection, as one op:

        qkv (B, T, 3C) -> q, k, v (B, H, T, D) each, D = C / H -> flash attention -> y (B, T, C)

    What GPT's attention otherwise writes as split, view, transpose (and the copies
    ``flash_attention`` makes to lay the heads out contiguously), then transpose and
    reshape back. Here the device's kernels take the packed qkv and write y themselves
    (``self_attention_forward``): the CPU reads each head where it lies in qkv and writes
    its output where it goes in y, without copies; backward writes the three head
    gradients into one (B, T, 3C) gradient (the composition's backward fills three
    (B, T, 3C) gradients with zeros around their slice and adds them). The op keeps qkv,
    y and one log-sum-exp per query row."""

    def forward(self, qkv: Tensor, n_head: int, causal: bool = True) -> Tensor:
        op = "self_attention"
        check_floats(op, qkv=qkv)
        if qkv.ndim != 3 or qkv.shape[-1] % 3 or n_head < 1 or qkv.shape[-1] // 3 % n_head:
            raise ShapeError(f"{op}: qkv must be (batch, length, 3 * width) with the width a multiple of "
                             f"n_head={n_head}, got {describe(qkv)}")
        batch, length, width = qkv.shape[0], qkv.shape[1], qkv.shape[2] // 3
        size = width // n_head
        dtype, device = qkv.dtype, qkv.device
        y = Tensor._empty((batch, length, width), dtype, device)                          # (B, T, C)
        lse = Tensor._empty((batch * n_head, length), _statistics_dtype(dtype), device)   # (B·H, T)
        self.scale = 1.0 / math.sqrt(size) if size else 1.0
        self.causal, self.n_head = bool(causal), n_head
        device.kernels.self_attention_forward(qkv._array, n_head, self.scale, self.causal, y._array, lse._array)
        self.save_for_backward(qkv, y, lse)
        return y

    def backward(self, grad: Tensor) -> Grads:
        qkv, y, lse = self.saved_tensors
        grad_qkv = Tensor._empty(qkv.shape, qkv.dtype, qkv.device)                        # (B, T, 3C)
        grad.device.kernels.self_attention_backward(grad._array, qkv._array, y._array, lse._array, self.n_head,
                                                    self.scale, self.causal, grad_qkv._array)
        return grad_qkv, None, None


def self_attention(qkv: Tensor, n_head: int, is_causal: bool = True) -> Tensor:
    """Attention of the H heads packed in qkv (B, T, 3C) -> (B, T, C) (see ``SelfAttention``)."""
    if autocast_hook.state.active:
        qkv, = autocast_hook.cast("self_attention", qkv)
    return SelfAttention.apply(qkv, n_head, causal=is_causal)


def _statistics_dtype(dtype):
    """The saved log-sum-exp's dtype: float32 for 16-bit inputs (rounded to 16 bits, it would
    about double the gradients' error), else the inputs' own."""
    return dtypes.float32 if dtype.itemsize == 2 else dtype
