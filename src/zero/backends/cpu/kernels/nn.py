"""Neural-network kernels: softmax, cross-entropy, NLL, layer norm, dropout.

Each computes the rows (or elements) it is given; the kernel table runs the large ones on
both cores (``cpu/parallel.py``), except layer norm's backward, whose fixed chunks of rows
and their partial sums are part of its arithmetic (it splits the chunks itself). The
contract's signatures (``zero.backends.kernel_contract``), in more detail.

Arrays are C-contiguous; "rows" is the product of all leading dimensions, the op
having moved the reduced dimension last. Outputs are written, never returned.
Float arrays share the input's dtype (float32 or float64). The sums of softmax and
log-softmax (both directions), of cross-entropy's forward and of layer norm's backward run
in the input's precision (faster so, within the tests' tolerances), as do layer norm's
statistics; label smoothing's sums over the class weights run in float64.
``weight``/``bias`` (and the matching gradients) may be ``None``.

    softmax_forward(x, out)                         x, out: (rows, C)
        out = exp(x - max) / sum(exp(x - max)) per row; a row that is all -inf gives
        NaN, as PyTorch's softmax (its max is -inf, and exp(-inf - -inf) is NaN by itself).
    masked_softmax_forward(x, out)                  x, out: (rows, C)
        the same, but a row that is all -inf (a fully masked attention row) gives zeros,
        as PyTorch's scaled_dot_product_attention does.
    softmax_backward(grad, out, grad_in)            (rows, C) each
        grad_in = out * (grad - sum(grad * out))
    log_softmax_forward(x, out)                     (rows, C)
        out = x - max - log(sum(exp(x - max)))
    log_softmax_backward(grad, out, grad_in)        (rows, C) each
        grad_in = grad - exp(out) * sum(grad)

    cross_entropy_forward(logits, target, weight, ignore_index, label_smoothing, loss, logsumexp)
        logits (N, C); target (N,) int64/int32 in [0, C) or == ignore_index; weight (C,)
        or None; loss (N,) per-row loss, 0 where ignored; logsumexp (N,) float64 (whatever
        the logits' dtype: at logits of 1e7 a float32 lse would put backward's exp(x - lse)
        off by a factor e), saved for backward.
        loss = (1 - s) * w[t] * (lse - x[t]) + s / C * sum_c w[c] * (lse - x[c])
    cross_entropy_backward(grad_loss, logits, target, weight, logsumexp, ignore_index,
                           label_smoothing, grad_logits)
        grad_loss (N,) per-row upstream gradient; grad_logits (N, C), 0 on ignored rows.
    nll_loss_forward(log_probs, target, weight, ignore_index, loss)
        log_probs (N, C); loss (N,) = -w[t] * log_probs[t], 0 where ignored.
    nll_loss_backward(grad_loss, target, weight, ignore_index, grad_input)
        grad_input (N, C): -w[t] * grad_loss at the target, 0 elsewhere.
    class_loss_mean(loss, target, weight, ignore_index, mean, divisor)
        loss (N,); mean, divisor 0-d: divisor = the number of rows whose target is not
        ignore_index (with weight: the sum of their w[t]), mean = sum(loss) / divisor.

    layer_norm_forward(x, weight, bias, eps, out, mean, rstd)
        x, out (rows, D); weight, bias (D,) or None; mean, rstd (rows,):
        out = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(var + eps) (biased var).
    layer_norm_backward(grad, x, weight, mean, rstd, grad_x, grad_weight, grad_bias)
        grad, x, grad_x (rows, D); grad_weight, grad_bias (D,) or None (not wanted).

    dropout_forward(x, p, seed, out)                x, out: (n,) flat
        out[i] = x[i] / (1 - p) if uniform(seed, i) >= p else 0   (p == 1: all zeros)
    dropout_backward(grad, p, seed, grad_in)        the same mask applied to grad.
    dropout_forward_seeded / dropout_backward_seeded     the same, seed a 1-element int64
        array read by the loop (a CUDA graph's seed slot, rewritten between replays).

The dropout mask is a counter-based random number, ``uniform(seed, i)`` from SplitMix64
(``zero.backends.dropout_mask`` has the recipe, which every device follows bit for bit):
it depends only on (seed, i), so any thread can compute any element, and backward
regenerates the mask from the seed instead of storing it.
"""
from __future__ import annotations

import math

import numpy as np

from ...dropout_mask import SPLITMIX_GAMMA, SPLITMIX_M1, SPLITMIX_M2, keep_scale, keep_threshold
from ...kernel_contract import Array
from .. import parallel
from ._fastmath import fast_exp, like, minus_in_order, row_peak
from ._jit import jit, njit, prange
from .linalg import ones_vector

__all__ = ["class_loss_mean", "cross_entropy_backward", "cross_entropy_forward", "dropout_backward", "dropout_forward",
           "layer_norm_backward", "layer_norm_forward", "log_softmax_backward", "log_softmax_forward",
           "nll_loss_backward", "nll_loss_forward", "softmax_backward", "softmax_forward"]
__all__ += ["masked_softmax_forward"]
__all__ += ["dropout_backward_seeded", "dropout_forward_seeded"]


def _rows_out(out: Array) -> Array:
    if not out.flags.c_contiguous:
        raise ValueError("kernel output must be contiguous")
    return out


def int64_targets(target: Array) -> Array:
    """Targets as int64, so the loops compile once per float dtype, not per index dtype."""
    return np.ascontiguousarray(target, dtype=np.int64)


def _weight_or_ones(weight: Array | None, classes: int, dtype: np.dtype | type) -> Array:
    """The class weights, or the cached read-only ones of an unweighted loss (rather than a
    fresh np.ones in every call of every loss kernel)."""
    return ones_vector(classes, np.dtype(dtype)) if weight is None else np.ascontiguousarray(weight)


# -- softmax and log-softmax ----------------------------------------------------------------


def softmax_forward(x: Array, out: Array) -> None:
    if x.shape[1]:
        _softmax_rows(np.ascontiguousarray(x), _rows_out(out), False)


def masked_softmax_forward(x: Array, out: Array) -> None:
    if x.shape[1]:
        _softmax_rows(np.ascontiguousarray(x), _rows_out(out), True)


def log_softmax_forward(x: Array, out: Array) -> None:
    if x.shape[1]:
        _log_softmax_rows(np.ascontiguousarray(x), _rows_out(out))


def softmax_backward(grad: Array, out: Array, grad_in: Array) -> None:
    if grad.shape[1]:
        _softmax_backward_rows(np.ascontiguousarray(grad), np.ascontiguousarray(out), _rows_out(grad_in))


def log_softmax_backward(grad: Array, out: Array, grad_in: Array) -> None:
    if grad.shape[1]:
        _log_softmax_backward_rows(np.ascontiguousarray(grad), np.ascontiguousarray(out), _rows_out(grad_in))


# Each direction of each function is its own 2-D loop over (rows, C), with no flag inside it
# and sums in the row's precision (faster than a loop calling a function per 1-D row with a
# softmax / log-softmax flag).


@njit
def _softmax_rows(x, out, masked):
    """exp(x - peak) is computed once, into out, then scaled. A row all -inf has peak -inf
    and gives NaN by itself (PyTorch's softmax); ``masked`` (attention) gives zeros there,
    one test per row, outside the loops over its elements."""
    rows, classes = x.shape
    for r in prange(rows):
        peak = row_peak(x[r])
        if masked and peak == -np.inf and not _has_nan(x[r]):   # fully masked row: zeros
            for c in range(classes):
                out[r, c] = 0.0
            continue
        total = like(peak, 0.0)
        for c in range(classes):
            e = fast_exp(x[r, c] - peak)
            out[r, c] = e
            total += e
        inverse = like(peak, 1.0) / total
        for c in range(classes):
            out[r, c] *= inverse


@njit
def _log_softmax_rows(x, out):
    rows, classes = x.shape
    for r in prange(rows):
        peak = row_peak(x[r])
        total = like(peak, 0.0)
        for c in range(classes):
            total += fast_exp(x[r, c] - peak)
        log_total = math.log(total)
        for c in range(classes):
            out[r, c] = minus_in_order(x[r, c], peak, log_total)


@njit
def _has_nan(x):
    for c in range(x.size):
        if math.isnan(x[c]):
            return True
    return False


@njit
def _softmax_backward_rows(grad, out, grad_in):
    """d softmax: out * (grad - <grad, out>)."""
    rows, classes = grad.shape
    for r in prange(rows):
        total = like(grad[r, 0], 0.0)
        for c in range(classes):
            total += grad[r, c] * out[r, c]
        for c in range(classes):
            grad_in[r, c] = out[r, c] * (grad[r, c] - total)


@njit
def _log_softmax_backward_rows(grad, out, grad_in):
    """d log_softmax: grad - softmax * sum(grad)."""
    rows, classes = grad.shape
    for r in prange(rows):
        total = like(grad[r, 0], 0.0)
        for c in range(classes):
            total += grad[r, c]
        for c in range(classes):
            grad_in[r, c] = grad[r, c] - fast_exp(out[r, c]) * total


# -- cross-entropy (log-softmax and NLL in one pass) -----------------------------------------


def cross_entropy_forward(logits: Array, target: Array, weight: Array | None, ignore_index: int,
                          label_smoothing: float, loss: Array, logsumexp: Array) -> None:
    logits = np.ascontiguousarray(logits)
    if logits.shape[1] == 0:    # no classes: every target was ignore_index (the op checks)
        loss.fill(0.0)
        logsumexp.fill(-np.inf)
        return
    _cross_entropy_rows(logits, int64_targets(target), _weight_or_ones(weight, logits.shape[1], logits.dtype),
                        int(ignore_index), float(label_smoothing), _rows_out(loss), _rows_out(logsumexp))


def cross_entropy_backward(grad_loss: Array, logits: Array, target: Array, weight: Array | None, logsumexp: Array,
                           ignore_index: int, label_smoothing: float, grad_logits: Array) -> None:
    logits = np.ascontiguousarray(logits)
    _cross_entropy_backward_rows(np.ascontiguousarray(grad_loss, dtype=logits.dtype), logits, int64_targets(target),
                                 _weight_or_ones(weight, logits.shape[1], logits.dtype),
                                 np.ascontiguousarray(logsumexp), int(ignore_index), float(label_smoothing),
                                 _rows_out(grad_logits))


@njit
def _cross_entropy_rows(logits, target, weight, ignore_index, smoothing, loss, lse):
    for r in prange(logits.shape[0]):
        loss[r], lse[r] = cross_entropy_row(logits[r], target[r], weight, ignore_index, smoothing)


@jit(inline="always")
def cross_entropy_row(logits, t, weight, ignore_index, smoothing):
    """(loss, logsumexp) of one 1-D row; the logsumexp in float64: backward's exp(x - lse)
    needs its low digits at large logits."""
    classes = logits.size
    peak = row_peak(logits)
    total = like(peak, 0.0)     # in the logits' precision: a float32 sum is twice as fast
    for c in range(classes):
        total += fast_exp(logits[c] - peak)
    log_total = math.log(np.float64(total))
    lse = np.float64(peak) + log_total
    if t == ignore_index:
        return 0.0, lse
    # lse - x[c] as -minus_in_order: no cancellation of two large numbers
    value = -(1.0 - smoothing) * weight[t] * minus_in_order(logits[t], peak, log_total)
    if smoothing > 0.0:
        smooth = 0.0
        for c in range(classes):
            smooth -= weight[c] * minus_in_order(logits[c], peak, log_total)
        value += smoothing / classes * smooth
    return value, lse


@njit
def _cross_entropy_backward_rows(grad_loss, logits, target, weight, lse, ignore_index, smoothing, grad_logits):
    weight_total = 0.0
    for c in range(weight.size):
        weight_total += weight[c]
    for r in prange(logits.shape[0]):
        cross_entropy_backward_row(grad_loss[r], logits[r], target[r], weight, weight_total, lse[r],
                                   ignore_index, smoothing, grad_logits[r])


@jit(inline="always")
def cross_entropy_backward_row(g, logits, t, weight, weight_total, lse, ignore_index, smoothing, grad_logits):
    """One 1-D row, in the logits' precision: p_c = exp((x_c - peak) - (lse - peak)), the
    row's peak found again so that the float64 lse enters only as the small lse - peak
    (a float32 lse at logits of 1e7 would be off by 1, each p by a factor e). grad_logits
    may be logits itself (linear + cross-entropy works in place): inlined, the loop then
    reads and writes through one pointer, with no overlap test to fail."""
    classes = logits.size
    if t == ignore_index:
        for c in range(classes):
            grad_logits[c] = 0.0
        return
    hit = (1.0 - smoothing) * weight[t]
    # d loss / d x_c = p_c * (hit + s/C * W) - hit * [c == t] - s/C * w_c
    peak = row_peak(logits)
    shift = like(peak, lse - peak)
    scale = like(peak, g * (hit + smoothing / classes * weight_total))
    spread = like(peak, g * smoothing / classes)
    for c in range(classes):
        grad_logits[c] = scale * fast_exp(minus_in_order(logits[c], peak, shift)) - spread * weight[c]
    grad_logits[t] -= g * hit


# -- the mean of a loss over class targets ------------------------------------------------------


def class_loss_mean(loss: Array, target: Array, weight: Array | None, ignore_index: int, mean: Array,
                    divisor: Array) -> None:
    """mean = sum(loss) / divisor, divisor = the number of rows whose target is not
    ignore_index (with class weights: the sum of their weight[target]); both 0-d outputs.
    One pass, in float64 (rather than five array calls and three temporaries). No kept row:
    0 / 0 = nan, as in PyTorch."""
    weights = ones_vector(1, np.dtype(np.float64)) if weight is None else np.ascontiguousarray(weight)
    mean[()], divisor[()] = _mean_over_kept(np.ascontiguousarray(loss), int64_targets(target), weights,
                                            int(ignore_index), weight is not None)


@njit
def _mean_over_kept(loss, target, weight, ignore_index, weighted):
    """A loop per sum, each without a branch inside and vectorised (one loop holding the
    flag and the ignore test was six times slower)."""
    total = 0.0
    for r in range(loss.size):
        total += loss[r]
    kept = 0.0
    if weighted:
        for r in range(target.size):
            t = target[r]
            # a select, both sides computed: weight is read at a valid class even on an ignored row
            kept += weight[t if t != ignore_index else 0] if t != ignore_index else 0.0
    else:
        for r in range(target.size):
            kept += 1.0 if target[r] != ignore_index else 0.0
    return np.divide(total, kept), kept


# -- NLL on log-probabilities (a loop over rows: NumPy's gather and masks took twenty times
# as long) ------------------------------------------------------------------------------------


def nll_loss_forward(log_probs: Array, target: Array, weight: Array | None, ignore_index: int, loss: Array) -> None:
    log_probs = np.ascontiguousarray(log_probs)
    _nll_rows(log_probs, int64_targets(target), _weight_or_ones(weight, log_probs.shape[1], log_probs.dtype),
              int(ignore_index), _rows_out(loss))


def nll_loss_backward(grad_loss: Array, target: Array, weight: Array | None, ignore_index: int,
                      grad_input: Array) -> None:
    grad_input = _rows_out(grad_input)
    grad_input.fill(0)
    _nll_backward_rows(np.ascontiguousarray(grad_loss, dtype=grad_input.dtype), int64_targets(target),
                       _weight_or_ones(weight, grad_input.shape[1], grad_input.dtype), int(ignore_index),
                       grad_input)


@njit
def _nll_rows(log_probs, target, weight, ignore_index, loss):
    for r in range(target.size):
        t = target[r]
        loss[r] = 0.0 if t == ignore_index else -weight[t] * log_probs[r, t]


@njit
def _nll_backward_rows(grad_loss, target, weight, ignore_index, grad_input):
    for r in range(target.size):
        t = target[r]
        if t != ignore_index:
            grad_input[r, t] = -weight[t] * grad_loss[r]


# -- layer norm -----------------------------------------------------------------------------


def layer_norm_forward(x: Array, weight: Array | None, bias: Array | None, eps: float, out: Array, mean: Array,
                       rstd: Array) -> None:
    x = np.ascontiguousarray(x)
    width = x.shape[1]
    _layer_norm_rows(x, _weight_or_ones(weight, width, x.dtype),
                     np.zeros(width, x.dtype) if bias is None else np.ascontiguousarray(bias), x.dtype.type(eps),
                     _rows_out(out), _rows_out(mean), _rows_out(rstd))


# Row chunks of the backward: each accumulates its own partial weight/bias gradient, and the
# partials are summed at the end. A fixed count (not the thread count) keeps results
# identical from run to run and machine to machine; the chunks are shared among threads.
LAYER_NORM_CHUNKS = 32


def layer_norm_backward(grad: Array, x: Array, weight: Array | None, mean: Array, rstd: Array, grad_x: Array,
                        grad_weight: Array | None, grad_bias: Array | None) -> None:
    x = np.ascontiguousarray(x)
    rows, width = x.shape
    chunks = max(1, min(rows, LAYER_NORM_CHUNKS))
    # the partial parameter gradients are summed even when not wanted: one loop, no flag in it
    partial_weight = np.zeros((chunks, width), x.dtype)
    partial_bias = np.zeros_like(partial_weight)
    grad, mean, rstd, grad_x = (np.ascontiguousarray(grad), np.ascontiguousarray(mean),
                                np.ascontiguousarray(rstd), _rows_out(grad_x))
    weights = _weight_or_ones(weight, width, x.dtype)

    parallel.parallel_for(chunks, lambda lo, hi: _layer_norm_backward_rows(
        grad, x, weights, mean, rstd, grad_x, partial_weight, partial_bias, lo, hi),
        parallel.layer_norm_chunk_grain(chunks, rows, width))
    if grad_weight is not None:
        np.copyto(grad_weight, partial_weight.sum(axis=0), casting="unsafe")
    if grad_bias is not None:
        np.copyto(grad_bias, partial_bias.sum(axis=0), casting="unsafe")


# Both directions are 2-D loops in the rows' precision, with no flag inside a loop (a missing
# weight is ones, a missing bias zeros): so LLVM vectorises every inner loop. What keeps rows
# far from zero right (a float32 row of 1e4 + N(0, 1), where PyTorch's float32 loses digits):
# the sums run relative to the row's first element, the variance in a second pass.


@njit
def _layer_norm_rows(x, weight, bias, eps, out, mean, rstd):
    rows, width = x.shape
    per_element = like(eps, 1.0 / max(width, 1))
    for r in prange(rows):
        # Sums relative to the row's first element: a row far from zero (1e4 + N(0, 1)) keeps
        # the digits of its spread, which a float32 mean near 1e4 would round away.
        shift = x[r, 0]
        total = like(eps, 0.0)
        for j in range(width):
            total += x[r, j] - shift
        offset = total * per_element          # mean - shift
        squares = like(eps, 0.0)   # two passes: the variance of (x - mean) loses no digits to cancellation
        for j in range(width):
            d = minus_in_order(x[r, j], shift, offset)
            squares += d * d
        inverse = like(eps, 1.0) / np.sqrt(squares * per_element + eps)
        mean[r] = shift + offset
        rstd[r] = inverse
        for j in range(width):
            out[r, j] = minus_in_order(x[r, j], shift, offset) * inverse * weight[j] + bias[j]


@njit
def _layer_norm_backward_rows(grad, x, weight, mean, rstd, grad_x, partial_weight, partial_bias, first, stop):
    """Chunks first..stop-1 of the rows (a thread's range): a chunk's rows, and so its
    partial sums, do not depend on how the chunks are shared among threads. Each row adds
    its parameter gradients to its chunk's partial sums."""
    rows, width = x.shape
    chunks = partial_weight.shape[0]
    for k in prange(first, stop):
        for r in range(k * rows // chunks, (k + 1) * rows // chunks):
            mu, inverse = mean[r], rstd[r]
            per_element = like(mu, 1.0 / width)
            mean_g = like(mu, 0.0)    # mean over the row of g = grad * weight
            mean_gx = like(mu, 0.0)   # mean over the row of g * xhat
            for j in range(width):
                xhat = (x[r, j] - mu) * inverse
                g = grad[r, j] * weight[j]
                mean_g += g
                mean_gx += g * xhat
                partial_weight[k, j] += grad[r, j] * xhat
                partial_bias[k, j] += grad[r, j]
            mean_g *= per_element
            mean_gx *= per_element
            # grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat))
            for j in range(width):
                xhat = (x[r, j] - mu) * inverse
                grad_x[r, j] = inverse * (grad[r, j] * weight[j] - mean_g - xhat * mean_gx)


# -- dropout --------------------------------------------------------------------------------


def dropout_forward(x: Array, p: float, seed: int, out: Array, first: int = 0) -> None:
    """``first``: the index of x's first element in the array it is a part of (each element
    draws the number of its place in the whole: ``zero.backends.dropout_mask``)."""
    _dropout(x, p, np.array([seed], np.uint64), out, first)


def dropout_backward(grad: Array, p: float, seed: int, grad_in: Array, first: int = 0) -> None:
    dropout_forward(grad, p, seed, grad_in, first)  # the same mask, regenerated from the seed


def dropout_forward_seeded(x: Array, p: float, seed: Array, out: Array, first: int = 0) -> None:
    """dropout_forward with the seed in ``seed``, a 1-element int64 array, read by the loop
    (a captured graph's seed slot: each replay reads what was written into it)."""
    if seed.size != 1 or seed.dtype.itemsize != 8 or seed.dtype.kind not in "iu":
        raise TypeError(f"dropout: the seed array must hold one 64-bit integer, got {seed.dtype} {seed.shape}")
    _dropout(x, p, np.ascontiguousarray(seed).reshape(1).view(np.uint64), out, first)


def dropout_backward_seeded(grad: Array, p: float, seed: Array, grad_in: Array, first: int = 0) -> None:
    dropout_forward_seeded(grad, p, seed, grad_in, first)  # the same mask, the seed read again


def _dropout(x: Array, p: float, seeds: np.ndarray, out: Array, first: int) -> None:
    """Both dropouts: ``seeds`` a 1-element uint64 array (the int seed boxed, or the slot viewed)."""
    out_flat, x_flat = _rows_out(out).reshape(-1), np.ascontiguousarray(x).reshape(-1)
    _dropout_loop(x_flat, np.uint64(keep_threshold(p)), keep_scale(p), seeds, out_flat, first)


GAMMA, M1, M2 = np.uint64(SPLITMIX_GAMMA), np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2)


@njit
def _dropout_loop(x, threshold, scale, seeds, out, first):
    """Elements first.. of the whole array (``backends/dropout_mask.py``), the seed read from
    seeds[0]. The integers are compared rather than a float64 uniform (the same mask,
    faster); the product stays in float64, rounded once."""
    seed = seeds[0]
    for i in prange(x.size):
        # uint64 throughout: mixing signed and unsigned integers would make Numba use floats
        z = seed + np.uint64(first + i + 1) * GAMMA
        z = (z ^ (z >> np.uint64(30))) * M1
        z = (z ^ (z >> np.uint64(27))) * M2
        z = z ^ (z >> np.uint64(31))
        out[i] = x[i] * scale if (z >> np.uint64(11)) >= threshold else 0.0
