"""Column sums: a (rows, columns) matrix summed over its rows, as bias gradients need.

Each program sums a band of rows for a block of columns; with more than one band the
bands' sums go to a (bands, columns) scratch that a second launch of the same kernel
adds up -- in a fixed order, so a run repeats to the bit (no atomics)."""
import triton
import triton.language as tl


@triton.jit
def column_sums_kernel(x_ptr, out_ptr, rows, columns, row_stride, band_rows, FLOAT64: tl.constexpr,
                       BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """out[band, c] = sum of x[r, c] over the rows r of band ``program_id(1)`` (``band_rows``
    each), for the columns c of block ``program_id(0)``; summed in x's dtype or float32."""
    c = tl.program_id(0).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    first = tl.program_id(1).to(tl.int64) * band_rows
    last = tl.minimum(first + band_rows, rows)
    if FLOAT64:
        total = tl.zeros((BLOCK_R, BLOCK_C), tl.float64)
    else:
        total = tl.zeros((BLOCK_R, BLOCK_C), tl.float32)
    for r0 in range(first, last, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R).to(tl.int64)
        mask = (r[:, None] < last) & (c[None, :] < columns)
        total += tl.load(x_ptr + r[:, None] * row_stride + c[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + tl.program_id(1).to(tl.int64) * columns + c, tl.sum(total, axis=0), mask=c < columns)
