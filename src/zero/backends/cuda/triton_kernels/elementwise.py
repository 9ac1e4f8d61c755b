"""Elementwise Triton kernels: GELU forward and backward (with an optional bias, for the FFN),
dropout. Flat, contiguous arrays."""
import triton
import triton.language as tl

from .precision import wide

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
INV_SQRT_2 = tl.constexpr(0.7071067811865476)
INV_SQRT_2PI = tl.constexpr(0.3989422804014327)
GELU_TANH_C = tl.constexpr(0.044715)


@triton.jit
def _offsets(n, BLOCK: tl.constexpr):
    """This program's element indices (int64, so arrays past 2**31 elements work) and mask."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    return offsets, offsets < n


@triton.jit
def _tanh(v):
    # tanh(v) = 2 sigmoid(2v) - 1: exp overflows to inf for large -v, giving exactly -1.
    return 2.0 / (1.0 + tl.exp(-2.0 * v)) - 1.0


@triton.jit
def _with_bias(x, bias_ptr, offsets, mask, width, HAS_BIAS: tl.constexpr):
    """x + bias[column] for rows of ``width`` elements (the FFN's first bias), or x."""
    if HAS_BIAS:
        x = x + wide(tl.load(bias_ptr + offsets % width, mask=mask, other=0.0))
    return x


@triton.jit
def gelu_forward_kernel(x_ptr, bias_ptr, out_ptr, n, width, HAS_BIAS: tl.constexpr, TANH: tl.constexpr,
                        BLOCK: tl.constexpr):
    """out = gelu(x [+ bias]): x Φ(x), or with TANH 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))).
    ``out`` may be ``x`` (in place)."""
    offsets, mask = _offsets(n, BLOCK)
    x = _with_bias(wide(tl.load(x_ptr + offsets, mask=mask, other=0.0)), bias_ptr, offsets, mask, width, HAS_BIAS)
    if TANH:
        y = 0.5 * x * (1.0 + _tanh(SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x)))
    else:
        y = 0.5 * x * (1.0 + tl.math.erf(x * INV_SQRT_2))
    tl.store(out_ptr + offsets, y, mask=mask)


@triton.jit
def gelu_backward_kernel(grad_ptr, x_ptr, bias_ptr, out_ptr, n, width, HAS_BIAS: tl.constexpr,
                         TANH: tl.constexpr, BLOCK: tl.constexpr):
    """out = grad * gelu'(x [+ bias]). ``out`` may be ``grad`` or ``x`` (in place)."""
    offsets, mask = _offsets(n, BLOCK)
    x = _with_bias(wide(tl.load(x_ptr + offsets, mask=mask, other=0.0)), bias_ptr, offsets, mask, width, HAS_BIAS)
    grad = wide(tl.load(grad_ptr + offsets, mask=mask, other=0.0))
    if TANH:
        t = _tanh(SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x))
        d_inner = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_C * x * x)
        slope = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner
    else:
        cdf = 0.5 * (1.0 + tl.math.erf(x * INV_SQRT_2))
        pdf = INV_SQRT_2PI * tl.exp(-0.5 * x * x)
        slope = cdf + x * pdf
    tl.store(out_ptr + offsets, grad * slope, mask=mask)


@triton.jit
def _dropout_block(x_ptr, out_ptr, n, threshold, seed, scale, BLOCK: tl.constexpr):
    """Both dropout kernels' block: the mask from (seed, element index), x scaled or zeroed."""
    offsets, mask = _offsets(n, BLOCK)
    z = seed.to(tl.uint64) + (offsets + 1).to(tl.uint64) * 0x9E3779B97F4A7C15
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    z = z ^ (z >> 31)
    keep = (z >> 11) >= threshold.to(tl.uint64)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.where(keep, x.to(tl.float64) * scale, 0.0)
    tl.store(out_ptr + offsets, y.to(x.dtype), mask=mask)


@triton.jit(do_not_specialize=["seed", "threshold"])
def dropout_kernel(x_ptr, out_ptr, n, threshold, seed, scale: tl.float64, BLOCK: tl.constexpr):
    """out[i] = x[i] * scale if (z >> 11) >= threshold else 0: ``backends/dropout_mask.py``'s
    recipe and integer test, so the mask is the CPU's bit for bit. The product is taken in
    float64 and rounded once, as the CPU loop does."""
    _dropout_block(x_ptr, out_ptr, n, threshold, seed, scale, BLOCK)


@triton.jit(do_not_specialize=["threshold"])
def dropout_seeded_kernel(x_ptr, out_ptr, n, threshold, seed_ptr, scale: tl.float64, BLOCK: tl.constexpr):
    """dropout_kernel with the seed loaded from seed_ptr[0] (int64): a CUDA graph's seed slot,
    which each replay reads afresh. The same mask as dropout_kernel given that value."""
    _dropout_block(x_ptr, out_ptr, n, threshold, tl.load(seed_ptr), scale, BLOCK)
