"""Max and average pooling, forward and backward, over (N, C, H, W) planes.

The windows and results are those of the CPU kernels (``zero.backends.cpu.kernels.pooling``).
Forward: one output element per lane, the window's kH kW elements read through x's
strides. Backward is a gather too: one element of grad_x per lane, which visits the
windows that hold it -- for each kernel offset at most one -- and adds their share
(max: grad where the window chose this element; average: grad / divisor). No atomics,
so results are the same from run to run.
"""
import triton
import triton.language as tl

from .precision import wide


@triton.jit
def _plane_position(offsets, channels, out_h, out_w):
    """(n, c, y, x) of flat offsets into a contiguous (N, C, out_h, out_w) array."""
    x_out = offsets % out_w
    rest = offsets // out_w
    y = rest % out_h
    rest = rest // out_h
    return rest // channels, rest % channels, y, x_out


@triton.jit
def _input_position(total, height, width, BLOCK: tl.constexpr):
    """This program's elements of a contiguous (N, C, H, W) input: offsets, mask, (plane, h, w)."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    w = offsets % width
    rest = offsets // width
    return offsets, offsets < total, rest // height, rest % height, w


@triton.jit
def _window_of(position, out_size, stride, pad, offset):
    """The window index along one axis whose element ``offset`` is ``position``, and whether
    there is one (position + pad - offset must be a multiple of stride, in range)."""
    rise = position + pad - offset
    window = rise // stride
    return window, (rise >= 0) & (window * stride == rise) & (window < out_size)


@triton.jit
def max_pool_forward_kernel(x_ptr, out_ptr, indices_ptr, total, channels, height, width, out_h, out_w,
                            x_stride_n, x_stride_c, x_stride_h, x_stride_w, stride_h, stride_w, pad_h, pad_w,
                            dilation_h, dilation_w, kernel_h, kernel_w,
                            BLOCK: tl.constexpr):
    """out = the window's largest element (the first of equal ones, the last NaN); indices = its h W + w."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < total
    n, c, y, x_out = _plane_position(offsets, channels, out_h, out_w)
    base = x_ptr + n * x_stride_n + c * x_stride_c
    best = wide(tl.full([BLOCK], float("-inf"), x_ptr.dtype.element_ty))
    where = tl.full([BLOCK], -1, tl.int64)
    for i in range(0, kernel_h):
        h = y * stride_h - pad_h + i * dilation_h
        for j in range(0, kernel_w):
            w = x_out * stride_w - pad_w + j * dilation_w
            inside = mask & (h >= 0) & (h < height) & (w >= 0) & (w < width)
            value = wide(tl.load(base + h * x_stride_h + w * x_stride_w, mask=inside, other=float("-inf")))
            take = inside & ((where < 0) | (value > best) | (value != value))
            best = tl.where(take, value, best)
            where = tl.where(take, h * width + w, where)
    tl.store(out_ptr + offsets, best, mask=mask)
    tl.store(indices_ptr + offsets, where, mask=mask)


@triton.jit
def max_pool_backward_kernel(grad_ptr, indices_ptr, grad_x_ptr, total, height, width, out_h, out_w, stride_h,
                             stride_w, pad_h, pad_w, dilation_h, dilation_w, kernel_h, kernel_w,
                             BLOCK: tl.constexpr):
    """grad_x (N, C, H, W) = the sum of grad over the windows that chose the element."""
    offsets, mask, plane, h, w = _input_position(total, height, width, BLOCK)
    me = h * width + w
    acc = wide(tl.zeros([BLOCK], dtype=grad_x_ptr.dtype.element_ty))
    for i in range(0, kernel_h):
        y, row_ok = _window_of(h, out_h, stride_h, pad_h, i * dilation_h)
        for j in range(0, kernel_w):
            x_out, column_ok = _window_of(w, out_w, stride_w, pad_w, j * dilation_w)
            ok = mask & row_ok & column_ok
            at = (plane * out_h + y) * out_w + x_out
            chosen = tl.load(indices_ptr + at, mask=ok, other=-1)
            acc += wide(tl.load(grad_ptr + at, mask=ok & (chosen == me), other=0.0))
    tl.store(grad_x_ptr + offsets, acc, mask=mask)


@triton.jit
def _clipped(position, stride, pad, kernel, size):
    """A window along one axis: [first, last) inside the input, and its length in the padded axis."""
    start = position * stride - pad
    end = tl.minimum(start + kernel, size + pad)
    return tl.maximum(start, 0), tl.minimum(end, size), end - start


@triton.jit
def _divisor(y, x_out, height, width, stride_h, stride_w, pad_h, pad_w, divisor_override,
             kernel_h, kernel_w, COUNT_INCLUDE_PAD: tl.constexpr):
    first_h, last_h, span_h = _clipped(y, stride_h, pad_h, kernel_h, height)
    first_w, last_w, span_w = _clipped(x_out, stride_w, pad_w, kernel_w, width)
    if COUNT_INCLUDE_PAD:
        count = span_h * span_w
    else:
        count = (last_h - first_h) * (last_w - first_w)
    return tl.where(divisor_override != 0, divisor_override, count)


@triton.jit
def avg_pool_forward_kernel(x_ptr, out_ptr, total, channels, height, width, out_h, out_w, x_stride_n, x_stride_c,
                            x_stride_h, x_stride_w, stride_h, stride_w, pad_h, pad_w, divisor_override,
                            kernel_h, kernel_w, COUNT_INCLUDE_PAD: tl.constexpr,
                            BLOCK: tl.constexpr):
    """out = the sum of the window's elements inside the input / its divisor."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < total
    n, c, y, x_out = _plane_position(offsets, channels, out_h, out_w)
    base = x_ptr + n * x_stride_n + c * x_stride_c
    acc = wide(tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty))
    for i in range(0, kernel_h):
        h = y * stride_h - pad_h + i
        for j in range(0, kernel_w):
            w = x_out * stride_w - pad_w + j
            inside = mask & (h >= 0) & (h < height) & (w >= 0) & (w < width)
            acc += wide(tl.load(base + h * x_stride_h + w * x_stride_w, mask=inside, other=0.0))
    divisor = _divisor(y, x_out, height, width, stride_h, stride_w, pad_h, pad_w, divisor_override, kernel_h,
                       kernel_w, COUNT_INCLUDE_PAD)
    tl.store(out_ptr + offsets, acc / divisor, mask=mask)


@triton.jit
def avg_pool_backward_kernel(grad_ptr, grad_x_ptr, total, height, width, out_h, out_w, stride_h, stride_w, pad_h,
                             pad_w, divisor_override, kernel_h, kernel_w,
                             COUNT_INCLUDE_PAD: tl.constexpr, BLOCK: tl.constexpr):
    """grad_x (N, C, H, W): the sum of grad / divisor over the windows holding the element."""
    offsets, mask, plane, h, w = _input_position(total, height, width, BLOCK)
    acc = wide(tl.zeros([BLOCK], dtype=grad_x_ptr.dtype.element_ty))
    for i in range(0, kernel_h):
        y, row_ok = _window_of(h, out_h, stride_h, pad_h, i)
        for j in range(0, kernel_w):
            x_out, column_ok = _window_of(w, out_w, stride_w, pad_w, j)
            ok = mask & row_ok & column_ok
            share = wide(tl.load(grad_ptr + (plane * out_h + y) * out_w + x_out, mask=ok, other=0.0))
            divisor = _divisor(y, x_out, height, width, stride_h, stride_w, pad_h, pad_w, divisor_override,
                               kernel_h, kernel_w, COUNT_INCLUDE_PAD)
            acc += share / tl.where(ok, divisor, 1)
    tl.store(grad_x_ptr + offsets, acc, mask=mask)
