"""Softmax, log-softmax and cross-entropy (log-softmax + NLL in one pass): one program per row.
Then the other losses over class targets: NLL on log-probabilities, and the mean of a
per-row loss over the kept rows (one launch each, where CuPy's gathers, masks and
reductions had been five to eight launches).

A row is read in chunks of ``BLOCK`` columns, so any width works (a vocabulary of
50k classes as well as 65). The statistics come from one pass with an *online*
maximum: each lane keeps the largest value it has seen and the sum of
``exp(x - largest)``, rescaling the sum when the largest grows; the lanes are
combined at the end. A fully masked row (all -inf) has maximum -inf and sum 0: softmax
gives NaN there by itself (exp(-inf - -inf), as PyTorch's), and zeros under ``MASKED``
(attention's rule).
"""
import triton
import triton.language as tl

from .precision import wide

NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def _row_max_and_sum(row_ptr, width, BLOCK: tl.constexpr):
    """(max, sum of exp(x - max)) of one row; (-inf, 0) when every value is -inf."""
    columns = tl.arange(0, BLOCK)
    peak = wide(tl.full([BLOCK], NEG_INF, dtype=row_ptr.dtype.element_ty))
    total = tl.zeros([BLOCK], dtype=peak.dtype)
    for start in range(0, width, BLOCK):
        x = wide(tl.load(row_ptr + start + columns, mask=start + columns < width, other=NEG_INF))
        new_peak = tl.maximum(peak, x)
        shift = tl.where(new_peak == NEG_INF, 0.0, new_peak)  # keeps -inf - -inf (nan) out
        total = total * tl.exp(peak - shift) + tl.exp(x - shift)
        peak = new_peak
    row_peak = tl.max(peak, axis=0)
    shift = tl.where(row_peak == NEG_INF, 0.0, row_peak)
    return row_peak, tl.sum(total * tl.exp(peak - shift), axis=0)


@triton.jit
def softmax_forward_kernel(x_ptr, out_ptr, width, LOG: tl.constexpr, BLOCK: tl.constexpr,
                           MASKED: tl.constexpr):
    """softmax: exp(x - max) / sum (NaN for a row all -inf; zeros under MASKED);
    LOG: x - max - log(sum)."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * width
    out_row = out_ptr + row * width
    peak, total = _row_max_and_sum(x_row, width, BLOCK)
    log_total = tl.log(total)
    inverse = 1.0 / total
    columns = tl.arange(0, BLOCK)
    for start in range(0, width, BLOCK):
        mask = start + columns < width
        x = wide(tl.load(x_row + start + columns, mask=mask, other=0.0))
        if LOG:  # (x - max) - log(sum), not x - (max + log(sum)): exact where x is large
            y = (x - peak) - log_total
        elif MASKED:
            y = tl.where(peak == NEG_INF, 0.0, tl.exp(x - peak) * inverse)
        else:
            y = tl.exp(x - peak) * inverse
        tl.store(out_row + start + columns, y, mask=mask)


@triton.jit
def softmax_backward_kernel(grad_ptr, out_ptr, grad_in_ptr, width, LOG: tl.constexpr, BLOCK: tl.constexpr):
    """softmax: grad_in = out * (grad - sum(grad * out)); LOG: grad - exp(out) * sum(grad)."""
    row = tl.program_id(0).to(tl.int64)
    offset = row * width
    columns = tl.arange(0, BLOCK)
    acc = wide(tl.zeros([BLOCK], dtype=grad_in_ptr.dtype.element_ty))
    for start in range(0, width, BLOCK):
        mask = start + columns < width
        grad = wide(tl.load(grad_ptr + offset + start + columns, mask=mask, other=0.0))
        if LOG:
            acc += grad
        else:
            acc += grad * wide(tl.load(out_ptr + offset + start + columns, mask=mask, other=0.0))
    dot = tl.sum(acc, axis=0)
    for start in range(0, width, BLOCK):
        mask = start + columns < width
        grad = wide(tl.load(grad_ptr + offset + start + columns, mask=mask, other=0.0))
        out = wide(tl.load(out_ptr + offset + start + columns, mask=mask, other=0.0))
        if LOG:
            y = grad - tl.exp(out) * dot
        else:
            y = out * (grad - dot)
        tl.store(grad_in_ptr + offset + start + columns, y, mask=mask)


@triton.jit
def _target_of(target_ptr, row, classes, ignore_index):
    """(ignored?, the target clamped into the row so that no load leaves it) of one row."""
    return _checked_targets(tl.load(target_ptr + row), classes, ignore_index)


@triton.jit
def _checked_targets(target, classes, ignore_index):
    """(ignored?, target) with ignored and out-of-range targets replaced by class 0, so that
    no load leaves its row (a GPU checks the range later, at the next read: index_checks)."""
    ignored = target == ignore_index
    return ignored, tl.where(ignored | (target < 0) | (target >= classes), 0, target)


@triton.jit
def cross_entropy_forward_kernel(logits_ptr, target_ptr, weight_ptr, loss_ptr, lse_ptr, classes, ignore_index,
                                 smoothing: tl.float64, HAS_WEIGHT: tl.constexpr, SMOOTH: tl.constexpr,
                                 BLOCK: tl.constexpr):
    """loss = (1 - s) w[t] (lse - x[t]) + s / C * sum_c w[c] (lse - x[c]); 0 on ignored rows.
    lse - x is computed as log(sum) - (x - max), with no cancellation of two large numbers;
    lse itself is stored in float64 (lse_ptr is float64 whatever the logits' dtype)."""
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * classes
    peak, total = _row_max_and_sum(x_row, classes, BLOCK)
    log_total = tl.log(total)
    tl.store(lse_ptr + row, peak.to(tl.float64) + log_total.to(tl.float64))
    ignored, safe = _target_of(target_ptr, row, classes, ignore_index)
    picked = wide(tl.load(x_row + safe))
    if HAS_WEIGHT:
        value = (1.0 - smoothing) * wide(tl.load(weight_ptr + safe)) * (log_total - (picked - peak))
    else:
        value = (1.0 - smoothing) * (log_total - (picked - peak))
    if SMOOTH:
        columns = tl.arange(0, BLOCK)
        acc = wide(tl.zeros([BLOCK], dtype=logits_ptr.dtype.element_ty))
        for start in range(0, classes, BLOCK):
            mask = start + columns < classes
            x = wide(tl.load(x_row + start + columns, mask=mask, other=0.0))
            term = tl.where(mask, log_total - (x - peak), 0.0)
            if HAS_WEIGHT:
                term = term * wide(tl.load(weight_ptr + start + columns, mask=mask, other=0.0))
            acc += term
        value += smoothing / classes * tl.sum(acc, axis=0)
    tl.store(loss_ptr + row, tl.where(ignored, 0.0, value))


@triton.jit
def cross_entropy_backward_kernel(grad_loss_ptr, grad_loss_stride, logits_ptr, target_ptr, weight_ptr, lse_ptr,
                                  grad_ptr, classes, ignore_index, smoothing: tl.float64,
                                  HAS_WEIGHT: tl.constexpr, SMOOTH: tl.constexpr, BLOCK: tl.constexpr):
    """d loss / d x_c = p_c (hit + s/C W) - s/C w_c - hit [c == t], hit = (1 - s) w[t],
    W = sum of the weights; times the row's upstream gradient (``grad_loss_stride`` 0 reads
    one number for every row, as a mean's backward gives)."""
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * classes
    ignored, safe = _target_of(target_ptr, row, classes, ignore_index)
    g = wide(tl.load(grad_loss_ptr + row * grad_loss_stride))
    columns = tl.arange(0, BLOCK)
    if HAS_WEIGHT:
        hit = (1.0 - smoothing) * wide(tl.load(weight_ptr + safe))
    else:
        hit = 1.0 - smoothing
    if HAS_WEIGHT:  # W, the sum of the weights (only smoothing needs it)
        acc = wide(tl.zeros([BLOCK], dtype=logits_ptr.dtype.element_ty))
        if SMOOTH:
            for start in range(0, classes, BLOCK):
                acc += wide(tl.load(weight_ptr + start + columns, mask=start + columns < classes, other=0.0))
        weight_total = tl.sum(acc, axis=0)
    else:
        weight_total = classes * 1.0
    scale = g * (hit + smoothing / classes * weight_total)
    spread = g * smoothing / classes
    hit_grad = g * hit
    lse = tl.load(lse_ptr + row)  # float64
    for start in range(0, classes, BLOCK):
        mask = start + columns < classes
        x = wide(tl.load(x_row + start + columns, mask=mask, other=0.0))
        y = scale * tl.exp((x.to(tl.float64) - lse).to(x.dtype))
        if SMOOTH:
            if HAS_WEIGHT:
                y -= spread * wide(tl.load(weight_ptr + start + columns, mask=mask, other=0.0))
            else:
                y -= spread
        y = tl.where(start + columns == safe, y - hit_grad, y)
        tl.store(grad_ptr + row * classes + start + columns, tl.where(ignored, 0.0, y), mask=mask)


# -- NLL on log-probabilities, and the mean over kept rows --------------------------------------


@triton.jit
def nll_forward_kernel(log_probs_ptr, target_ptr, weight_ptr, loss_ptr, rows, classes, ignore_index,
                       HAS_WEIGHT: tl.constexpr, BLOCK: tl.constexpr):
    """loss[r] = -w[t] log_probs[r, t] for the BLOCK rows of this program; 0 where t is ignored."""
    row = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = row < rows
    ignored, safe = _checked_targets(tl.load(target_ptr + row, mask=inside, other=ignore_index), classes,
                                     ignore_index)
    picked = wide(tl.load(log_probs_ptr + row * classes + safe, mask=inside, other=0.0))
    if HAS_WEIGHT:
        picked = picked * wide(tl.load(weight_ptr + safe, mask=inside, other=0.0))
    tl.store(loss_ptr + row, tl.where(ignored, 0.0, -picked), mask=inside)


@triton.jit
def nll_backward_kernel(grad_loss_ptr, target_ptr, weight_ptr, grad_ptr, classes, ignore_index,
                        HAS_WEIGHT: tl.constexpr, BLOCK: tl.constexpr):
    """grad[r, c] = -w[t] grad_loss[r] where c == t (not ignored), else 0: row
    ``program_id(0)``, columns of block ``program_id(1)``, every element written."""
    row = tl.program_id(0).to(tl.int64)
    columns = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ignored, safe = _target_of(target_ptr, row, classes, ignore_index)
    g = -wide(tl.load(grad_loss_ptr + row))
    if HAS_WEIGHT:
        g = g * wide(tl.load(weight_ptr + safe))
    value = tl.where(ignored, 0.0, tl.where(columns == safe, g, 0.0))
    tl.store(grad_ptr + row * classes + columns, value.to(grad_ptr.dtype.element_ty), mask=columns < classes)


@triton.jit
def class_loss_mean_kernel(loss_ptr, target_ptr, weight_ptr, mean_ptr, divisor_ptr, rows, classes, ignore_index,
                           HAS_WEIGHT: tl.constexpr, BLOCK: tl.constexpr):
    """mean = sum(loss) / divisor, divisor = the count of rows whose target is kept (or the
    sum of their w[t]); one program, sums in float64 over blocks in order (the same sum every
    run), each result rounded once. No kept row: 0 / 0 = nan."""
    total = tl.zeros((BLOCK,), tl.float64)
    kept = tl.zeros((BLOCK,), tl.float64)
    for start in range(0, rows, BLOCK):
        row = start + tl.arange(0, BLOCK).to(tl.int64)
        inside = row < rows
        total += tl.load(loss_ptr + row, mask=inside, other=0.0).to(tl.float64)
        ignored, safe = _checked_targets(tl.load(target_ptr + row, mask=inside, other=ignore_index), classes,
                                         ignore_index)
        if HAS_WEIGHT:
            kept += tl.load(weight_ptr + safe, mask=inside & ~ignored, other=0.0).to(tl.float64)
        else:
            kept += (~ignored).to(tl.float64)
    total_sum = tl.sum(total, axis=0)
    kept_sum = tl.sum(kept, axis=0)
    tl.store(mean_ptr, (total_sum / kept_sum).to(mean_ptr.dtype.element_ty))
    tl.store(divisor_ptr, kept_sum.to(divisor_ptr.dtype.element_ty))
