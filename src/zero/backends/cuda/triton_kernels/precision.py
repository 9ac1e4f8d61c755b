"""The arithmetic type of the Triton kernels: float32 for 16-bit floats, else the arrays' own.

A kernel reading float16 or bfloat16 arrays loads them, widens each value to float32 with
``wide`` and does all its arithmetic -- sums, statistics, accumulators -- in float32; its
stores round each result once to the output's element type (``tl.store`` converts a value
to the pointer's type). ``wide`` is the identity for float32 and float64 (and for integers):
those kernels compile to exactly what they did before. The choice is made at compile time
(the element type is known then): no branch runs on the GPU.

An accumulator made from a pointer's type, ``wide(tl.zeros([BLOCK], ptr.dtype.element_ty))``,
is float32 for a 16-bit array (the conversion of a constant folds away). Attention keeps
its q·kᵀ and p·v products on 16-bit tiles (``tl.dot`` accumulates them in float32, the
point of 16-bit tensor cores) with its softmax statistics in float32.
"""
import triton
import triton.language as tl


@triton.jit
def wide(x):
    """x as float32 when its element type is float16 or bfloat16, else x itself."""
    if x.dtype.is_fp16() or x.dtype.is_bf16():
        x = x.to(tl.float32)
    return x


@triton.jit
def wide_scalar(value, ptr):
    """A scalar argument (a ``tl.float64`` eps or scale) in the type ``wide`` gives the
    elements of ``ptr``: float32 for a 16-bit float array, else the array's own type."""
    return tl.cast(value, wide(tl.zeros([1], ptr.dtype.element_ty)).dtype)
