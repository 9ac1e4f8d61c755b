"""The columns of a convolution: im2col (a gather) and col2im (its adjoint, also a gather).

Both work on the layout of the CPU kernels (``zero.backends.cpu.kernels.conv``):

    cols (C, kH, kW, N, Ho, Wo):  cols[c, i, j, n, y, x] = x[n, c, y sH - pH + i dH, x sW - pW + j dW]

(0 outside the input), flat and contiguous. Each program handles BLOCK elements of its
output: im2col one element of cols each, col2im one element of grad_x each, which sums
the kH kW column elements read from it (at most one per kernel offset) -- no atomics, so
the result is the same from run to run. Offsets are int64, so arrays past 2**31 elements
work.
"""
import triton
import triton.language as tl

from .precision import wide


@triton.jit
def im2col_kernel(x_ptr, cols_ptr, total, batch, height, width, out_h, out_w, kernel_h, kernel_w,
                  x_stride_n, x_stride_c, x_stride_h, x_stride_w, stride_h, stride_w, pad_h, pad_w,
                  dilation_h, dilation_w, BLOCK: tl.constexpr):
    """cols = im2col(x): x (N, C, H, W) read through its strides (in elements)."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < total
    x_out = offsets % out_w
    rest = offsets // out_w
    y = rest % out_h
    rest = rest // out_h
    n = rest % batch
    rest = rest // batch
    j = rest % kernel_w
    rest = rest // kernel_w
    i = rest % kernel_h
    c = rest // kernel_h
    h = y * stride_h - pad_h + i * dilation_h
    w = x_out * stride_w - pad_w + j * dilation_w
    inside = mask & (h >= 0) & (h < height) & (w >= 0) & (w < width)
    value = tl.load(x_ptr + n * x_stride_n + c * x_stride_c + h * x_stride_h + w * x_stride_w, mask=inside,
                    other=0.0)
    tl.store(cols_ptr + offsets, value, mask=mask)


@triton.jit
def col2im_kernel(cols_ptr, grad_x_ptr, total, batch, channels, height, width, out_h, out_w, stride_h, stride_w,
                  pad_h, pad_w, dilation_h, dilation_w, kernel_h, kernel_w,
                  BLOCK: tl.constexpr):
    """grad_x (N, C, H, W), contiguous: each element the sum of the column elements read from it."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < total
    w = offsets % width
    rest = offsets // width
    h = rest % height
    rest = rest // height
    c = rest % channels
    n = rest // channels
    positions = batch * out_h * out_w
    acc = wide(tl.zeros([BLOCK], dtype=grad_x_ptr.dtype.element_ty))
    for i in range(0, kernel_h):
        rise = h + pad_h - i * dilation_h            # = y * stride_h for the window row y that reads h
        y = rise // stride_h
        row_ok = (rise >= 0) & (y * stride_h == rise) & (y < out_h)
        for j in range(0, kernel_w):
            run = w + pad_w - j * dilation_w
            x_out = run // stride_w
            ok = mask & row_ok & (run >= 0) & (x_out * stride_w == run) & (x_out < out_w)
            at = ((c * kernel_h + i) * kernel_w + j) * positions + (n * out_h + y) * out_w + x_out
            acc += wide(tl.load(cols_ptr + at, mask=ok, other=0.0))
    tl.store(grad_x_ptr + offsets, acc, mask=mask)
