"""Output projection and cross-entropy as one op (the book's ``OpLinearCrossEntropy``).

    x (*, C)   weight (V, C) (GPT: the tied token embedding)   target (*) int
    logits = x @ weightᵀ  (*, V)        loss = cross_entropy(logits, target)

Forward computes the (N, V) logits chunk_size rows at a time and keeps each row's
logsumexp (N,); backward turns a chunk's logits into d logits = g * (softmax -
onehot(target)) and multiplies them out at once. The memory for logits is one chunk
(chunk_size, V), whatever N, and it decides what backward starts from:

- all N rows fit in one chunk (a character-level vocabulary: 65 classes give ~32,000 rows
  in the CPU's 8 MiB): forward's logits are kept until backward, which then needs no
  product to recompute them (at (1024, 128) x 65: backward 3 GEMMs instead of 4);
- more rows (a large vocabulary): only the logsumexp is kept, and backward recomputes
  each chunk's logits from x and the weight: one more GEMM of N·V·C (4 instead of 3).

Reductions as in ``cross_entropy``: "mean" over the rows whose target is not
ignore_index (nan when there are none), "sum", or "none" (the target's shape, 0 on
ignored rows).
"""
from __future__ import annotations

from ... import dtypes
from ...autograd.op import Grads
from ...backends.device import Device
from ...errors import DTypeError, ShapeError, describe
from ...tensors.tensor import Tensor
from ..arguments import array_or_none, check_floats, flat_of, rows_of
from ..loss import ClassLoss, check_reduction, check_targets
from ...autograd import autocast_hook

CHUNK_BYTES = 8 << 20   # a chunk of logits stays within about 8 MiB (a device may ask for more)
MIN_CHUNK_ROWS = 16


def default_chunk_size(vocab: int, itemsize: int, device: Device | None = None) -> int:
    """Rows per chunk so that a chunk's (rows, vocab) logits take about the device's
    ``logits_chunk_bytes`` (CHUNK_BYTES on the CPU, where a chunk should stay in cache;
    larger on a GPU, where larger products keep the device busy)."""
    budget = getattr(device.backend, "logits_chunk_bytes", CHUNK_BYTES) if device is not None else CHUNK_BYTES
    return max(MIN_CHUNK_ROWS, budget // max(1, vocab * itemsize))


class LinearCrossEntropy(ClassLoss):
    name_in_errors = "linear_cross_entropy"

    def forward(self, x: Tensor, weight: Tensor, target: Tensor, ignore_index: int = -100,
                reduction: str = "mean", chunk_size: int | None = None) -> Tensor:
        op = self.name_in_errors
        check_reduction(op, reduction)
        check_floats(op, input=x, weight=weight)
        if not isinstance(target, Tensor) or target.dtype not in (dtypes.int64, dtypes.int32):
            raise DTypeError(f"{op}: target must be an int64 or int32 tensor of class indices, got "
                             f"{describe(target)}")
        if weight.ndim != 2 or x.ndim == 0 or x.shape[-1] != weight.shape[1]:
            raise ShapeError(f"{op}: input {describe(x)} must end in the embedding size of weight "
                             f"{describe(weight)} ([vocab, embedding])")
        if target.shape != x.shape[:-1]:
            raise ShapeError(f"{op}: target {describe(target)} must have the input's shape without its "
                             f"last dimension, {list(x.shape[:-1])} (input {describe(x)})")
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise ValueError(f"{op}: chunk_size must be a positive int or None, got {chunk_size!r}")
        vocab = weight.shape[0]
        rows = rows_of(x, weight.shape[1])                                  # (N, C)
        weight = weight.detach()
        target_rows = flat_of(target)                                       # (N,)
        check_targets(op, target_rows, vocab, ignore_index)
        self.chunk_size = chunk_size or default_chunk_size(vocab, x.dtype.itemsize, x.device)
        self.reduction, self.ignore_index = reduction, int(ignore_index)
        self.in_shape, self.target_shape = x.shape, target.shape
        count = rows.shape[0]
        loss_rows = Tensor._empty((count,), x.dtype, x.device)                # (N,)
        lse_rows = Tensor._empty((count,), dtypes.float64, x.device)          # (N,), float64 as in nn.py
        kept = (Tensor._empty((count, vocab), x.dtype, x.device)              # (N, V), one chunk
                if self.recording and 0 < count <= self.chunk_size else None)
        x.device.kernels.linear_cross_entropy_forward(rows._array, weight._array, target_rows._array,
                                                      self.ignore_index, self.chunk_size, loss_rows._array,
                                                      lse_rows._array, array_or_none(kept))
        out, divisor = self.reduce(loss_rows, target_rows, None)
        self.save_for_backward(rows, weight, target_rows, lse_rows, divisor, kept)
        return out

    def backward(self, grad: Tensor) -> Grads:
        rows, weight, target_rows, lse_rows, divisor, kept = self.saved_tensors
        need_x, need_weight = self.needs_input_grad[:2]
        dtype, device = grad.dtype, grad.device
        grad_x = Tensor._empty(rows.shape, dtype, device) if need_x else None
        grad_weight = Tensor._empty(weight.shape, dtype, device) if need_weight else None
        grad_rows = self.row_gradients(grad, divisor, rows.shape[0])          # (N,)
        device.kernels.linear_cross_entropy_backward(
            grad_rows._array, rows._array, weight._array, target_rows._array, lse_rows._array,
            self.ignore_index, self.chunk_size, array_or_none(grad_x), array_or_none(grad_weight),
            array_or_none(kept))
        return (grad_x.reshape(self.in_shape) if grad_x is not None else None, grad_weight, None)


def linear_cross_entropy(x: Tensor, weight: Tensor, target: Tensor, ignore_index: int = -100,
                         reduction: str = "mean", chunk_size: int | None = None) -> Tensor:
    """cross_entropy(x @ weightᵀ, target) keeping at most one chunk of (N, V) logits."""
    if autocast_hook.state.active:
        x, weight = autocast_hook.cast("linear_cross_entropy", x, weight)
    return LinearCrossEntropy.apply(x, weight, target, ignore_index=ignore_index, reduction=reduction,
                                    chunk_size=chunk_size)
