"""Neural-network kernels on the GPU: softmax, cross-entropy, NLL, layer norm, dropout.

The contract's (``zero.backends.kernel_contract``; ``zero.backends.cpu.kernels.nn`` has
more detail): C-contiguous (rows, C) arrays, outputs written in place,
``weight``/``bias`` optional. Softmax, log-softmax, cross-entropy, NLL, the mean of a
loss over kept rows, layer norm and dropout launch the Triton kernels in ``triton_kernels``.
Dropout draws the SplitMix64 numbers of ``zero.backends.dropout_mask``, so a seed
gives the same mask on both devices, bit for bit.

Every function here also runs on NumPy arrays under ``TRITON_INTERPRET=1`` (the
interpreter tests); the wide-row layer-norm fallback is CuPy (or NumPy) array code.
"""
from __future__ import annotations

from ...dropout_mask import keep_scale, keep_threshold
from ...kernel_contract import Array
from ..triton_kernels.elementwise import dropout_kernel, dropout_seeded_kernel
from ..triton_kernels.normalization import layer_norm_backward_kernel, layer_norm_forward_kernel
from ..triton_kernels.softmax import (
    class_loss_mean_kernel,
    cross_entropy_backward_kernel,
    cross_entropy_forward_kernel,
    nll_backward_kernel,
    nll_forward_kernel,
    softmax_backward_kernel,
    softmax_forward_kernel,
)
from ._arrays import accumulator_dtype, array_module, contiguous, flat, output
from ._launch import ELEMENTWISE_BLOCK, cdiv, elementwise_grid, launch, next_power_of_2, row_block, warps_for
from .reduction import column_sums

__all__ = ["class_loss_mean", "cross_entropy_backward", "cross_entropy_forward", "dropout_backward", "dropout_forward",
           "layer_norm_backward", "layer_norm_forward", "log_softmax_backward", "log_softmax_forward",
           "nll_loss_backward", "nll_loss_forward", "softmax_backward", "softmax_forward"]
__all__ += ["masked_softmax_forward"]
__all__ += ["dropout_backward_seeded", "dropout_forward_seeded"]


# -- softmax and log-softmax ----------------------------------------------------------------


def _softmax(x: Array, out: Array, log: bool, masked: bool = False) -> None:
    x = contiguous(x)
    rows, width = x.shape
    if rows == 0 or width == 0:
        return
    block = row_block(width)
    launch(softmax_forward_kernel, (rows,), x, output(out), width, LOG=log, BLOCK=block, MASKED=masked,
           num_warps=warps_for(block))


def _softmax_backward(grad: Array, out: Array, grad_in: Array, log: bool) -> None:
    rows, width = grad.shape
    if rows == 0 or width == 0:
        return
    block = row_block(width)
    launch(softmax_backward_kernel, (rows,), contiguous(grad), contiguous(out), output(grad_in), width,
           LOG=log, BLOCK=block, num_warps=warps_for(block))


def softmax_forward(x: Array, out: Array) -> None:
    _softmax(x, out, False)


def masked_softmax_forward(x: Array, out: Array) -> None:
    """softmax with zeros (not NaN) for a row all -inf: attention's fully masked rows."""
    _softmax(x, out, False, True)


def log_softmax_forward(x: Array, out: Array) -> None:
    _softmax(x, out, True)


def softmax_backward(grad: Array, out: Array, grad_in: Array) -> None:
    _softmax_backward(grad, out, grad_in, False)


def log_softmax_backward(grad: Array, out: Array, grad_in: Array) -> None:
    _softmax_backward(grad, out, grad_in, True)


# -- cross-entropy ------------------------------------------------------------------------------


def cross_entropy_forward(logits: Array, target: Array, weight: Array | None, ignore_index: int,
                          label_smoothing: float, loss: Array, logsumexp: Array) -> None:
    logits = contiguous(logits)
    rows, classes = logits.shape
    if rows == 0:
        return
    block = row_block(classes)
    launch(cross_entropy_forward_kernel, (rows,), logits, contiguous(target),
           logits if weight is None else contiguous(weight), output(loss), output(logsumexp), classes,
           int(ignore_index), float(label_smoothing), HAS_WEIGHT=weight is not None,
           SMOOTH=label_smoothing > 0.0, BLOCK=block, num_warps=warps_for(block))


def cross_entropy_backward(grad_loss: Array, logits: Array, target: Array, weight: Array | None, logsumexp: Array,
                           ignore_index: int, label_smoothing: float, grad_logits: Array) -> None:
    logits = contiguous(logits)
    rows, classes = logits.shape
    if rows == 0:
        return
    if grad_loss.ndim != 1:
        grad_loss = contiguous(grad_loss).reshape(-1)
    stride = grad_loss.strides[0] // grad_loss.itemsize  # 0 for one gradient broadcast to every row
    block = row_block(classes)
    launch(cross_entropy_backward_kernel, (rows,), grad_loss, stride, logits, contiguous(target),
           logits if weight is None else contiguous(weight), contiguous(logsumexp), output(grad_logits),
           classes, int(ignore_index), float(label_smoothing), HAS_WEIGHT=weight is not None,
           SMOOTH=label_smoothing > 0.0, BLOCK=block, num_warps=warps_for(block))


def class_loss_mean(loss: Array, target: Array, weight: Array | None, ignore_index: int, mean: Array,
                    divisor: Array) -> None:
    """The CPU contract (sum of the losses over the count, or weight, of the kept rows), in
    one launch of one program that stays on the device: nothing is read back."""
    rows = loss.shape[0]
    classes = 0 if weight is None else weight.shape[0]   # (read only to keep weight's loads inside it)
    launch(class_loss_mean_kernel, (1,), contiguous(loss), contiguous(target),
           loss if weight is None else contiguous(weight), output(mean), output(divisor), rows, classes,
           int(ignore_index), HAS_WEIGHT=weight is not None, BLOCK=CLASS_LOSS_MEAN_BLOCK, num_warps=4)


CLASS_LOSS_MEAN_BLOCK = 1024   # rows per step of class_loss_mean's one program
NLL_ROWS = 256                 # rows per program of the NLL forward (a gather: one value a row)


def nll_loss_forward(log_probs: Array, target: Array, weight: Array | None, ignore_index: int, loss: Array) -> None:
    """loss (N,) = -w[t] * log_probs[t] per row, 0 where ignored."""
    log_probs = contiguous(log_probs)
    rows, classes = log_probs.shape
    if rows == 0:
        return
    launch(nll_forward_kernel, (cdiv(rows, NLL_ROWS),), log_probs, contiguous(target),
           log_probs if weight is None else contiguous(weight), output(loss), rows, classes, int(ignore_index),
           HAS_WEIGHT=weight is not None, BLOCK=NLL_ROWS, num_warps=4)


def nll_loss_backward(grad_loss: Array, target: Array, weight: Array | None, ignore_index: int,
                      grad_input: Array) -> None:
    """grad_input (N, C): -w[t] * grad_loss at the target, 0 elsewhere: every element
    written in one launch (no separate fill)."""
    rows, classes = grad_input.shape
    if rows == 0 or classes == 0:
        return
    block = row_block(classes)
    launch(nll_backward_kernel, (rows, cdiv(classes, block)), contiguous(grad_loss), contiguous(target),
           grad_input if weight is None else contiguous(weight), output(grad_input), classes, int(ignore_index),
           HAS_WEIGHT=weight is not None, BLOCK=block, num_warps=warps_for(block))


# -- layer norm -----------------------------------------------------------------------------

# Widest row a program holds in registers; wider rows take the CuPy composition below.
LAYER_NORM_MAX_BLOCK = 16384
# Rows per program in the backward: each program writes one row of partial weight/bias
# gradients, summed afterwards; a fixed count gives the same sums on every GPU.
LAYER_NORM_ROWS_PER_PROGRAM = 32


def layer_norm_forward(x: Array, weight: Array | None, bias: Array | None, eps: float, out: Array, mean: Array,
                       rstd: Array) -> None:
    x = contiguous(x)
    rows, width = x.shape
    if rows == 0:
        return
    block = max(16, next_power_of_2(width))
    if block > LAYER_NORM_MAX_BLOCK:
        _layer_norm_forward_wide(x, weight, bias, eps, out, mean, rstd)
        return
    launch(layer_norm_forward_kernel, (rows,), x, x if weight is None else contiguous(weight),
           x if bias is None else contiguous(bias), output(out), output(mean), output(rstd), width, float(eps),
           HAS_WEIGHT=weight is not None, HAS_BIAS=bias is not None, BLOCK=block, num_warps=warps_for(block))


def layer_norm_backward(grad: Array, x: Array, weight: Array | None, mean: Array, rstd: Array, grad_x: Array,
                        grad_weight: Array | None, grad_bias: Array | None) -> None:
    x = contiguous(x)
    rows, width = x.shape
    xp = array_module(x)
    want_params = grad_weight is not None or grad_bias is not None
    block = max(16, next_power_of_2(width))
    if block > LAYER_NORM_MAX_BLOCK:
        _layer_norm_backward_wide(grad, x, weight, mean, rstd, grad_x, grad_weight, grad_bias)
        return
    programs = max(1, cdiv(rows, LAYER_NORM_ROWS_PER_PROGRAM))
    partial = xp.empty((programs, 2 * width) if want_params else (1, 2),               # per program: dweight | dbias
                       accumulator_dtype(x.dtype))                                     # (float32 for 16-bit x)
    if rows:
        launch(layer_norm_backward_kernel, (programs,), contiguous(grad), x,
               x if weight is None else contiguous(weight), contiguous(mean), contiguous(rstd), output(grad_x),
               partial, rows, width, LAYER_NORM_ROWS_PER_PROGRAM,
               HAS_WEIGHT=weight is not None, WANT_PARAMS=want_params, BLOCK=block, num_warps=warps_for(block))
    else:
        partial.fill(0)
    if grad_weight is not None and grad_bias is not None:
        column_sums(partial, grad_weight, grad_bias)   # both in the same launches
    elif grad_weight is not None:
        column_sums(partial[:, :width], grad_weight)
    elif grad_bias is not None:
        column_sums(partial[:, width:], grad_bias)


def _layer_norm_forward_wide(x: Array, weight: Array | None, bias: Array | None, eps: float, out: Array,
                             mean: Array, rstd: Array) -> None:
    """Rows wider than a program's registers: the same formulas as whole-array operations."""
    xp = array_module(x)
    mu = x.mean(axis=1, keepdims=True)
    centred = x - mu
    inverse = 1.0 / xp.sqrt((centred * centred).mean(axis=1, keepdims=True) + eps)
    y = centred * inverse
    if weight is not None:
        y *= weight
    if bias is not None:
        y += bias
    xp.copyto(out, y, casting="unsafe")
    xp.copyto(mean, mu[:, 0], casting="unsafe")
    xp.copyto(rstd, inverse[:, 0], casting="unsafe")


def _layer_norm_backward_wide(grad: Array, x: Array, weight: Array | None, mean: Array, rstd: Array,
                              grad_x: Array, grad_weight: Array | None, grad_bias: Array | None) -> None:
    xhat = (x - mean[:, None]) * rstd[:, None]
    g = grad * weight if weight is not None else grad
    mean_g = g.mean(axis=1, keepdims=True)
    mean_gx = (g * xhat).mean(axis=1, keepdims=True)
    xp = array_module(x)
    xp.copyto(grad_x, rstd[:, None] * (g - mean_g - xhat * mean_gx), casting="unsafe")
    if grad_weight is not None:
        xp.copyto(grad_weight, (grad * xhat).sum(axis=0), casting="unsafe")
    if grad_bias is not None:
        xp.copyto(grad_bias, grad.sum(axis=0), casting="unsafe")


# -- dropout --------------------------------------------------------------------------------


def dropout_forward(x: Array, p: float, seed: int, out: Array) -> None:
    x = flat(x)
    launch(dropout_kernel, elementwise_grid(x.size), x, output(out).reshape(-1), x.size, keep_threshold(p),
           int(seed), keep_scale(p), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def dropout_backward(grad: Array, p: float, seed: int, grad_in: Array) -> None:
    dropout_forward(grad, p, seed, grad_in)  # the same mask, regenerated from the seed


def dropout_forward_seeded(x: Array, p: float, seed: Array, out: Array) -> None:
    """dropout_forward with the seed read by the kernel from ``seed`` (1 element, int64)."""
    if seed.size != 1 or seed.dtype.itemsize != 8 or seed.dtype.kind not in "iu":
        raise TypeError(f"dropout: the seed array must hold one 64-bit integer, got {seed.dtype} {seed.shape}")
    x = flat(x)
    launch(dropout_seeded_kernel, elementwise_grid(x.size), x, output(out).reshape(-1), x.size, keep_threshold(p),
           flat(seed), keep_scale(p), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def dropout_backward_seeded(grad: Array, p: float, seed: Array, grad_in: Array) -> None:
    dropout_forward_seeded(grad, p, seed, grad_in)  # the same mask, the seed read again
