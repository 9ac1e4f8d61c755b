"""Elementwise kernels on the GPU: copies, fills, arithmetic, comparisons, activations.

CuPy's ufuncs do the work, with NumPy's broadcasting and strides, so each op is
one kernel launch that reads its (possibly strided or broadcast) inputs and
writes ``out``. GELU and its gradient are Triton kernels (``triton_kernels``);
sigmoid and SiLU are one-line CuPy elementwise kernels, one pass each.
"""
from __future__ import annotations

import numpy as np

from ..runtime import cupy
from ..triton_kernels.elementwise import gelu_backward_kernel, gelu_forward_kernel
from ._arrays import flat, output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch

cp = cupy()

__all__ = ["copy", "fill", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le",
           "gt", "ge", "logical_and", "logical_or", "logical_xor", "where", "clamp", "neg", "abs", "sign",
           "exp", "log", "sqrt", "sin", "cos", "tanh", "logical_not", "rsqrt", "relu", "sigmoid", "silu",
           "gelu", "gelu_backward"]

# -- copies and fills -------------------------------------------------------------------------


def copy(src, out) -> None:
    """Strided copy with broadcasting and dtype conversion (host arrays are uploaded)."""
    if isinstance(src, np.ndarray):
        src = cp.asarray(src)
    elif isinstance(src, cp.ndarray) and cp.may_share_memory(src, out):
        src = src.copy()  # overlapping ranges: a parallel copy would read what it already wrote
    cp.copyto(out, src, casting="unsafe")


def fill(out, value) -> None:
    out.fill(value)


# -- elementwise: binary ----------------------------------------------------------------------


def _binary(ufunc):
    def kernel(a, b, out):
        ufunc(a, b, out=out, casting="unsafe")

    kernel.__name__ = ufunc.__name__
    return kernel


add = _binary(cp.add)
sub = _binary(cp.subtract)
mul = _binary(cp.multiply)
div = _binary(cp.true_divide)  # x / 0 gives inf or nan, as on the CPU (GPUs raise no FP errors)
pow = _binary(cp.power)  # noqa: A001
maximum = _binary(cp.maximum)
minimum = _binary(cp.minimum)
eq = _binary(cp.equal)
ne = _binary(cp.not_equal)
lt = _binary(cp.less)
le = _binary(cp.less_equal)
gt = _binary(cp.greater)
ge = _binary(cp.greater_equal)
logical_and = _binary(cp.logical_and)
logical_or = _binary(cp.logical_or)
logical_xor = _binary(cp.logical_xor)


def where(condition, a, b, out) -> None:
    cp.copyto(out, b, casting="unsafe")
    cp.copyto(out, a, casting="unsafe", where=condition)


def clamp(x, low, high, out) -> None:
    cp.clip(x, low, high, out=out)


# -- elementwise: unary -----------------------------------------------------------------------


def _unary(ufunc):
    def kernel(x, out):
        ufunc(x, out=out, casting="unsafe")

    kernel.__name__ = ufunc.__name__
    return kernel


neg = _unary(cp.negative)
abs = _unary(cp.absolute)  # noqa: A001
sign = _unary(cp.sign)
exp = _unary(cp.exp)
log = _unary(cp.log)
sqrt = _unary(cp.sqrt)
sin = _unary(cp.sin)
cos = _unary(cp.cos)
tanh = _unary(cp.tanh)
logical_not = _unary(cp.logical_not)

_sigmoid = cp.ElementwiseKernel("T x", "T y", "y = 1 / (1 + exp(-x))", "zero_sigmoid")
_silu = cp.ElementwiseKernel("T x", "T y", "y = x / (1 + exp(-x))", "zero_silu")


def rsqrt(x, out) -> None:
    cp.sqrt(x, out=out, casting="unsafe")
    cp.reciprocal(out, out=out)


def relu(x, out) -> None:
    cp.maximum(x, 0, out=out, casting="unsafe")


def sigmoid(x, out) -> None:
    _sigmoid(x, out)


def silu(x, out) -> None:
    _silu(x, out)


def gelu(x, out, approximate: str = "none") -> None:
    x = flat(x)
    launch(gelu_forward_kernel, elementwise_grid(x.size), x, x, output(out).reshape(-1), x.size, 1,
           HAS_BIAS=False, TANH=approximate == "tanh", BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def gelu_backward(grad, x, out, approximate: str = "none") -> None:
    """out = grad * d gelu(x) / dx."""
    x = flat(x)
    launch(gelu_backward_kernel, elementwise_grid(x.size), flat(grad), x, x, output(out).reshape(-1), x.size, 1,
           HAS_BIAS=False, TANH=approximate == "tanh", BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
