"""Column sums: a (rows, columns) matrix summed over its rows, as bias gradients need; and
the extremes of integer indices, for the range checks of gathers and class targets.

Each program sums a band of rows for a block of columns; with more than one band the
bands' sums go to a (bands, columns) scratch that a second launch of the same kernel
adds up -- in a fixed order, so a run repeats to the bit (no atomics)."""
import triton
import triton.language as tl

from .precision import wide


@triton.jit
def column_sums_kernel(x_ptr, out_ptr, second_ptr, rows, columns, split, row_stride, band_rows,
                       FLOAT64: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """out[band, c] = sum of x[r, c] over the rows r of band ``program_id(1)`` (``band_rows``
    each), for the columns c of block ``program_id(0)``; summed in float64 (FLOAT64) or
    float32 (x float32, float16 or bfloat16), each sum rounded once to out's dtype.
    Columns from ``split`` on go to ``second`` instead (one launch for two outputs, as the
    layer norm's weight and bias gradients; ``split`` = ``columns`` for none)."""
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
        total += wide(tl.load(x_ptr + r[:, None] * row_stride + c[None, :], mask=mask, other=0.0))
    sums = tl.sum(total, axis=0)
    inside = c < columns
    tl.store(out_ptr + tl.program_id(1).to(tl.int64) * split + c, sums, mask=inside & (c < split))
    tl.store(second_ptr + (c - split), sums, mask=inside & (c >= split))


@triton.jit
def index_extremes_kernel(index_ptr, n, ignore, replacement, parts_ptr, HAS_IGNORE: tl.constexpr,
                          CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    """parts[program] = (smallest, largest) of the CHUNK indices of this program (with
    HAS_IGNORE, an entry equal to ``ignore`` counted as ``replacement``); int64. The host
    takes the extremes of the parts when it reads them (a check deferred to the next read)."""
    first = tl.program_id(0).to(tl.int64) * CHUNK
    smallest = tl.full((BLOCK,), 9223372036854775807, tl.int64)
    largest = tl.full((BLOCK,), -9223372036854775807 - 1, tl.int64)
    for start in range(0, CHUNK, BLOCK):
        offsets = first + start + tl.arange(0, BLOCK)
        inside = offsets < n
        value = tl.load(index_ptr + offsets, mask=inside, other=0).to(tl.int64)
        if HAS_IGNORE:
            value = tl.where(value == ignore, replacement, value)
        smallest = tl.where(inside, tl.minimum(smallest, value), smallest)
        largest = tl.where(inside, tl.maximum(largest, value), largest)
    tl.store(parts_ptr + 2 * tl.program_id(0), tl.min(smallest, axis=0))
    tl.store(parts_ptr + 2 * tl.program_id(0) + 1, tl.max(largest, axis=0))
