"""Elementwise kernels of CUDA's own: the copy (which also uploads host arrays), and the
activations. GELU and its gradient are Triton kernels (``triton_kernels``); sigmoid and
SiLU are one-line CuPy elementwise kernels, one pass each. The rest of the elementwise
contract -- arithmetic, comparisons, where, clamp, the unary math functions -- is one
CuPy ufunc each, with NumPy's broadcasting and strides (``zero.backends.array_kernels``).
"""
from __future__ import annotations

import numpy as np

from ...kernel_contract import Array, Operand
from ..runtime import cupy
from ..triton_kernels.elementwise import gelu_backward_kernel, gelu_forward_kernel
from ._arrays import flat, output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch

cp = cupy()

__all__ = ["copy", "gelu", "gelu_backward", "sigmoid", "silu"]


def copy(src: Operand, out: Array) -> None:
    """Strided copy with broadcasting and dtype conversion (host arrays are uploaded)."""
    if isinstance(src, np.ndarray):
        src = cp.asarray(src)
    elif isinstance(src, cp.ndarray) and cp.may_share_memory(src, out):
        src = src.copy()  # overlapping ranges: a parallel copy would read what it already wrote
    cp.copyto(out, src, casting="unsafe")


# -- activations --------------------------------------------------------------------------------

# One pass each; the arithmetic is in the output's float type. The input is converted
# to that type first (an integer tensor's sigmoid is a float tensor), since CuPy's
# "T x, T y" kernels take one type for both.
_sigmoid = cp.ElementwiseKernel("T x", "T y", "y = 1 / (1 + exp(-x))", "zero_sigmoid")
_silu = cp.ElementwiseKernel("T x", "T y", "y = x / (1 + exp(-x))", "zero_silu")


def _as_type_of(x: Array, out: Array) -> Array:
    """x in out's dtype: the float-only kernels compute in the output's type."""
    return x if x.dtype == out.dtype else x.astype(out.dtype)


def sigmoid(x: Array, out: Array) -> None:
    _sigmoid(_as_type_of(x, out), out)


def silu(x: Array, out: Array) -> None:
    _silu(_as_type_of(x, out), out)


def gelu(x: Array, out: Array, approximate: str = "none") -> None:
    x = flat(_as_type_of(x, out))
    launch(gelu_forward_kernel, elementwise_grid(x.size), x, x, output(out).reshape(-1), x.size, 1,
           HAS_BIAS=False, TANH=approximate == "tanh", BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def gelu_backward(grad: Array, x: Array, out: Array, approximate: str = "none") -> None:
    """out = grad * d gelu(x) / dx."""
    x, grad = flat(_as_type_of(x, out)), flat(_as_type_of(grad, out))
    launch(gelu_backward_kernel, elementwise_grid(x.size), grad, x, x, output(out).reshape(-1), x.size, 1,
           HAS_BIAS=False, TANH=approximate == "tanh", BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
