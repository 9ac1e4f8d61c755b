"""The feed-forward block as one op (the book's ``OpFFN``): linear -> GELU -> linear.

    x (*, C)  w1 (H, C)  b1 (H,) or None  w2 (C2, H)  b2 (C2,) or None  ->  (*, C2)
    h = x @ w1ᵀ + b1        a = gelu(h)        y = a @ w2ᵀ + b2          (H = 4C in GPT)

The trade: the composition keeps h and a, two (N, H) activations (8x the input for H =
4C), from forward until backward. This op keeps only x and the weights; its backward
recomputes h with one more GEMM (x @ w1ᵀ, half the forward's work) and, in the same
pass that makes a again, the hidden gradient dh = (g @ w2) * gelu'(h):

    grad_w2 = gᵀ @ a    grad_b2 = sums of g    grad_w1 = dhᵀ @ x    grad_b1 = sums of dh
    grad_x  = dh @ w1

So forward + backward runs 7 GEMMs of N·C·H instead of 6 (about 17% more), and the graph
holds 2·N·H fewer elements per FFN: with C = 384, H = 1536 and N = 16384 tokens (the
book's GPT batch), 200 MB less per layer in float32. Backward's two (N, H) temporaries
live only during the call.

That trade pays only where memory is short: keeping x @ w1ᵀ (one (N, H) tensor, still
half of what the composition keeps) lets backward start from it, 6 GEMMs like the
composition, and the forward + backward take less time than recomputing (``benchmarks/fused.py``;
figures in RESULTS.md, "Figures that were in docstrings"). So the op keeps
it up to ``KEEP_HIDDEN_BYTES`` a call (256 MiB: the book's GPT keeps 96 MiB per layer,
576 MiB for its 6, where PyTorch's composition keeps twice that) and recomputes above;
``recompute=True`` asks for the recompute whatever the size (memory short), False keeps
the hidden whatever its size.
"""
from __future__ import annotations

from ...autograd.op import Grads, Op
from ...errors import ShapeError, describe
from ...tensors.meta import Shape
from ...tensors.tensor import Tensor
from ..arguments import array_or_none, check_floats, check_shape, laid_out, rows_of
from ...autograd import autocast_hook

KEEP_HIDDEN_BYTES = 256 << 20  # keep x @ w1ᵀ for backward up to this size, recompute above


class FFN(Op):
    def forward(self, x: Tensor, w1: Tensor, b1: Tensor | None, w2: Tensor, b2: Tensor | None,
                approximate: str = "none", recompute: bool | None = None) -> Tensor:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"ffn: approximate must be 'none' or 'tanh', got {approximate!r}")
        if recompute not in (None, True, False):
            raise ValueError(f"ffn: recompute must be None (by size), True or False, got {recompute!r}")
        check_floats("ffn", input=x, w1=w1, b1=b1, w2=w2, b2=b2)
        if w1.ndim != 2 or w2.ndim != 2 or w2.shape[1] != w1.shape[0]:
            raise ShapeError(f"ffn: w1 must be [hidden, in] and w2 [out, hidden] with the same hidden "
                             f"size, got w1 {describe(w1)} and w2 {describe(w2)}")
        hidden, width = w1.shape
        if x.ndim == 0 or x.shape[-1] != width:
            raise ShapeError(f"ffn: input {describe(x)} must end in {width} (w1 {describe(w1)} is "
                             "[hidden, in])")
        check_shape("ffn", "b1", b1, (hidden,), "hidden size of w1")
        check_shape("ffn", "b2", b2, (w2.shape[0],), "out size of w2")
        rows = rows_of(x, width)                                             # (N, C)
        w1, w2 = laid_out(w1, w1.shape), laid_out(w2, w2.shape)
        b1, b2 = (None if b is None else laid_out(b, b.shape) for b in (b1, b2))
        out = Tensor._empty(x.shape[:-1] + (w2.shape[0],), x.dtype, x.device)  # (*, C2), written as (N, C2)
        small = rows.shape[0] * hidden * x.dtype.itemsize <= KEEP_HIDDEN_BYTES
        keep = self.recording and (small if recompute is None else not recompute)
        kept = Tensor._empty((rows.shape[0], hidden), x.dtype, x.device) if keep else None     # (N, H)
        x.device.kernels.ffn_forward(rows._array, w1._array, array_or_none(b1), w2._array, array_or_none(b2),
                                     approximate, out._array.reshape(rows.shape[0], w2.shape[0]),
                                     array_or_none(kept))
        self.save_for_backward(rows, w1, b1, w2, kept)
        self.in_shape, self.approximate = x.shape, approximate
        return out

    def backward(self, grad: Tensor) -> Grads:
        rows, w1, b1, w2, kept = self.saved_tensors
        need_x, need_w1, need_b1, need_w2, need_b2 = self.needs_input_grad[:5]
        grad_rows = rows_of(grad, w2.shape[0])                               # (N, C2)
        dtype, device = grad.dtype, grad.device

        def empty(shape: Shape, needed: bool) -> Tensor | None:
            return Tensor._empty(shape, dtype, device) if needed else None

        grad_x, grad_w1, grad_b1 = empty(self.in_shape, need_x), empty(w1.shape, need_w1), empty(
            (w1.shape[0],), need_b1)                                         # grad_x written as (N, C)
        grad_w2, grad_b2 = empty(w2.shape, need_w2), empty((w2.shape[0],), need_b2)
        device.kernels.ffn_backward(grad_rows._array, rows._array, w1._array, array_or_none(b1), w2._array,
                                    self.approximate, grad_x._array.reshape(rows.shape) if grad_x is not None else None,
                                    array_or_none(grad_w1), array_or_none(grad_b1), array_or_none(grad_w2),
                                    array_or_none(grad_b2), array_or_none(kept))
        return (grad_x, grad_w1, grad_b1, grad_w2, grad_b2)


def ffn(x: Tensor, w1: Tensor, b1: Tensor | None, w2: Tensor, b2: Tensor | None, approximate: str = "none",
        recompute: bool | None = None) -> Tensor:
    """gelu(x @ w1ᵀ + b1) @ w2ᵀ + b2 as one op, keeping x @ w1ᵀ for backward when it is
    at most ``KEEP_HIDDEN_BYTES`` and recomputing it when it is larger (``recompute``:
    True always recomputes, False always keeps)."""
    if autocast_hook.state.active:
        x, w1, b1, w2, b2 = autocast_hook.cast("ffn", x, w1, b1, w2, b2)
    if not isinstance(x, Tensor):
        raise TypeError(f"ffn: input must be a tensor, got {describe(x)}")
    return FFN.apply(x, w1, b1, w2, b2, approximate=approximate, recompute=recompute)
