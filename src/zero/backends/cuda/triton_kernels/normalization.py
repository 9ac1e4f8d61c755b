"""Layer norm forward and backward: one program per row (forward), per group of rows (backward).

A row of ``width`` numbers is held in registers at once (``BLOCK >= width``), so
the statistics and the output need one read of the row. The launcher sends rows
wider than the largest block to a CuPy composition instead.
"""
import triton
import triton.language as tl

from .precision import wide, wide_scalar


@triton.jit
def layer_norm_forward_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, mean_ptr, rstd_ptr, width, eps: tl.float64,
                              HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    """out = (x - mean) * rstd * weight + bias for one row; saves mean and rstd. ``eps`` is
    passed as float64 and used in x's arithmetic type (a float32 eps would change float64
    results; float32 for 16-bit x)."""
    row = tl.program_id(0).to(tl.int64)
    eps = wide_scalar(eps, x_ptr)
    columns = tl.arange(0, BLOCK)
    mask = columns < width
    x = wide(tl.load(x_ptr + row * width + columns, mask=mask, other=0.0))
    mean = tl.sum(x, axis=0) / width
    centred = tl.where(mask, x - mean, 0.0)  # two passes: no cancellation in the variance
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=0) / width + eps)
    y = centred * rstd
    if HAS_WEIGHT:
        y = y * wide(tl.load(weight_ptr + columns, mask=mask, other=0.0))
    if HAS_BIAS:
        y = y + wide(tl.load(bias_ptr + columns, mask=mask, other=0.0))
    tl.store(out_ptr + row * width + columns, y, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def layer_norm_backward_kernel(grad_ptr, x_ptr, weight_ptr, mean_ptr, rstd_ptr, grad_x_ptr, partial_ptr,
                               rows, width, rows_per_program, HAS_WEIGHT: tl.constexpr, WANT_PARAMS: tl.constexpr,
                               BLOCK: tl.constexpr):
    """grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad * weight, for the
    program's rows; the program's sums of grad * xhat and of grad go to row ``program_id``
    of the (programs, 2 * width) partial buffer (float32 for 16-bit x), side by side (the launcher adds the rows up
    in one pass for both: no atomics, same result every run)."""
    program = tl.program_id(0)
    columns = tl.arange(0, BLOCK)
    mask = columns < width
    if HAS_WEIGHT:
        weight = wide(tl.load(weight_ptr + columns, mask=mask, other=0.0))
    sum_weight = wide(tl.zeros([BLOCK], dtype=grad_x_ptr.dtype.element_ty))
    sum_bias = tl.zeros([BLOCK], dtype=sum_weight.dtype)
    first = program * rows_per_program
    last = tl.minimum(first + rows_per_program, rows)
    for row in range(first, last):
        offset = tl.cast(row, tl.int64) * width
        x = wide(tl.load(x_ptr + offset + columns, mask=mask, other=0.0))
        dy = wide(tl.load(grad_ptr + offset + columns, mask=mask, other=0.0))
        mean = wide(tl.load(mean_ptr + row))
        rstd = wide(tl.load(rstd_ptr + row))
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        if HAS_WEIGHT:
            g = dy * weight
        else:
            g = dy
        mean_g = tl.sum(g, axis=0) / width
        mean_gx = tl.sum(g * xhat, axis=0) / width
        tl.store(grad_x_ptr + offset + columns, rstd * (g - mean_g - xhat * mean_gx), mask=mask)
        if WANT_PARAMS:
            sum_weight += dy * xhat
            sum_bias += dy
    if WANT_PARAMS:
        partial = program.to(tl.int64) * (2 * width) + columns
        tl.store(partial_ptr + partial, sum_weight, mask=mask)
        tl.store(partial_ptr + partial + width, sum_bias, mask=mask)
