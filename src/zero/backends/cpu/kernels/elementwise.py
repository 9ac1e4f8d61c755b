"""Elementwise kernels of the CPU's own: the copy, ``where`` and relu as select loops on
contiguous floats, an array plus a row repeated over it (``add``, and ``add_row_in_place``
for the fused kernels' biases), and the activations that are Numba loops (sigmoid, SiLU,
both GELUs). Each computes the arrays it is given; the kernel table runs the large ones
on both cores (``cpu/parallel.py``). The rest of the elementwise contract -- the other
arithmetic, comparisons, clamp, the unary math functions -- is one NumPy call each
(``zero.backends.array_kernels``), as is whatever these loops do not take.
"""
from __future__ import annotations

import numpy as np

from ...array_kernels import arithmetic, unary
from ...kernel_contract import Array, Operand
from ._fastmath import fast_exp, gelu as gelu_value, gelu_with_slope, like
from ._jit import njit, prange

__all__ = ["add", "add_row_in_place", "copy", "gelu", "gelu_backward", "relu", "relu_backward", "sigmoid", "silu",
           "where"]

_FLOATS = (np.float32, np.float64)


def copy(src: Operand, out: Array) -> None:
    """Strided copy with broadcasting and dtype conversion (the book's stride-aware copy)."""
    np.copyto(out, src, casting="unsafe")


def add(a: Operand, b: Operand, out: Array) -> None:
    """out = a + b. A float array plus an array of its trailing shape (x + bias, token plus
    position embeddings), either way round, takes a Numba loop by rows (NumPy's broadcasting
    add runs at half its speed; the sums are the same bits); in place (x += bias), a loop
    that reads out only. Anything else: NumPy."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.ndim < b.ndim:
            a, b = b, a
        if 0 < b.ndim < a.ndim and _row_of(a, b, out) and not np.may_share_memory(b, out):
            width = b.size
            if a is out:
                _add_row_in_place_loop(out.reshape(-1, width), b.reshape(-1))
                return
            if not np.may_share_memory(a, out):
                _add_row_loop(a.reshape(-1, width), b.reshape(-1), out.reshape(-1, width))
                return
    arithmetic.add(np, a, b, out)


def add_row_in_place(out: Array, row: Array) -> None:
    """out (R, C) += row (C,) for every row: the fused kernels' bias (``add``'s loop)."""
    if _row_of(out, row, out) and not np.may_share_memory(row, out):
        _add_row_in_place_loop(out, row)
    else:
        out += row


def _row_of(x: Array, row: Array, out: Array) -> bool:
    """Whether ``row`` is x's trailing shape, not empty, and all three are contiguous arrays
    of one float dtype, out of x's shape: x + row is then rows of x plus row."""
    return (row.size > 0 and out.dtype in _FLOATS and x.dtype == row.dtype == out.dtype
            and x.shape == out.shape and x.shape[x.ndim - row.ndim:] == row.shape
            and x.flags.c_contiguous and row.flags.c_contiguous and out.flags.c_contiguous)


def where(condition: Array, a: Operand, b: Operand, out: Array) -> None:
    """out = a where condition else b (b may be a number). Float operands of out's shape and
    dtype take one Numba select loop: NumPy's masked copy branches on every element, and on
    a mask of random signs (relu's backward) mispredicts half of them. Anything else: NumPy."""
    if (out.dtype in _FLOATS and isinstance(a, np.ndarray) and _can_flatten(a, out)
            and condition.shape == out.shape and condition.dtype == np.bool_):
        if isinstance(b, (bool, int, float)):
            _select_number_loop(_flat_in(condition), _flat_in(a), out.dtype.type(b), out.reshape(-1))
            return
        if isinstance(b, np.ndarray) and _can_flatten(b, out):
            _select_loop(_flat_in(condition), _flat_in(a), _flat_in(b), out.reshape(-1))
            return
    arithmetic.where(np, condition, a, b, out)


# -- activations: Numba loops over flat arrays --------------------------------------------------


def relu(x: Array, out: Array) -> None:
    """One select per element on contiguous floats (NumPy's NaN-propagating maximum is
    three times a copy); anything else: NumPy."""
    if out.dtype in _FLOATS and _can_flatten(x, out):
        _relu_loop(_flat_in(x), out.reshape(-1))
    else:
        unary.relu(np, x, out)


def relu_backward(grad: Array, out: Array, grad_in: Array) -> None:
    """grad_in = 0 where out <= 0, else grad, in one select per element (instead of a mask,
    its negation and a masked copy) when all three are contiguous floats of one shape."""
    if grad_in.dtype in _FLOATS and _can_flatten(grad, grad_in) and _can_flatten(out, grad_in):
        _relu_backward_loop(_flat_in(grad), _flat_in(out), grad_in.reshape(-1))
    else:
        unary.relu_backward(np, grad, out, grad_in)


def sigmoid(x: Array, out: Array) -> None:
    if _can_flatten(x, out):
        _sigmoid_loop(_flat_in(x), out.reshape(-1))
    else:
        _sigmoid_numpy(x, out)


def silu(x: Array, out: Array) -> None:
    if _can_flatten(x, out):
        _silu_loop(_flat_in(x), out.reshape(-1))
    else:
        _sigmoid_numpy(x, out)
        np.multiply(out, x, out=out)


def gelu(x: Array, out: Array, approximate: str = "none") -> None:
    """Exact GELU x·Φ(x), or ``approximate="tanh"``: ½x(1 + tanh(√(2/π)(x + 0.044715 x³)));
    one Numba loop per form, in the input's precision."""
    loop = _gelu_tanh_loop if approximate == "tanh" else _gelu_loop
    loop(_flat_in(x), _flat_out(out))


def gelu_backward(grad: Array, x: Array, out: Array, approximate: str = "none") -> None:
    """out = grad * d gelu(x) / dx."""
    loop = _gelu_tanh_backward_loop if approximate == "tanh" else _gelu_backward_loop
    loop(_flat_in(grad), _flat_in(x), _flat_out(out))


def _sigmoid_numpy(x: Array, out: Array) -> None:
    with np.errstate(over="ignore"):
        np.negative(x, out=out, casting="unsafe")
        np.exp(out, out=out)
        out += 1
        np.reciprocal(out, out=out)


def _can_flatten(x: Array, out: Array) -> bool:
    return x.shape == out.shape and x.dtype == out.dtype and out.flags.c_contiguous


def _flat_in(x: Array) -> Array:
    """A contiguous 1-D view (copying only if the input is not contiguous)."""
    return np.ascontiguousarray(x).reshape(-1)


def _flat_out(out: Array) -> Array:
    if not out.flags.c_contiguous:
        raise ValueError("kernel output must be contiguous")
    return out.reshape(-1)


# -- the Numba loops behind the activations (1-D, contiguous) ------------------------------

@njit
def _select_loop(condition, a, b, out):
    for i in prange(out.size):
        out[i] = a[i] if condition[i] else b[i]


@njit
def _select_number_loop(condition, a, b, out):
    for i in prange(out.size):
        out[i] = a[i] if condition[i] else b


@njit
def _add_row_loop(rows, row, out):       # rows, out (R, C); row (C,)
    for r in prange(rows.shape[0]):
        source, target = rows[r], out[r]
        for j in range(row.size):
            target[j] = source[j] + row[j]


@njit
def _add_row_in_place_loop(out, row):    # out (R, C) += row (C,): reads out only, so it vectorises
    for r in prange(out.shape[0]):
        target = out[r]
        for j in range(row.size):
            target[j] += row[j]


@njit
def _relu_loop(x, out):
    for i in prange(x.size):
        v = x[i]
        out[i] = like(v, 0.0) if v <= like(v, 0.0) else v     # NaN stays NaN, as in PyTorch


@njit
def _relu_backward_loop(grad, out, grad_in):
    for i in prange(out.size):
        grad_in[i] = like(grad[i], 0.0) if out[i] <= like(out[i], 0.0) else grad[i]


@njit
def _sigmoid_loop(x, out):
    for i in prange(x.size):
        v = x[i]
        one = like(v, 1.0)
        out[i] = np.divide(one, one + fast_exp(-v))


@njit
def _silu_loop(x, out):
    for i in prange(x.size):
        v = x[i]
        out[i] = np.divide(v, like(v, 1.0) + fast_exp(-v))


def _gelu_loops(tanh: bool):
    """The forward and backward loops of one GELU form (``tanh`` is a constant inside them)."""
    @njit
    def forward(x, out):
        for i in prange(x.size):
            out[i] = gelu_value(x[i], tanh)

    @njit
    def backward(grad, x, out):
        for i in prange(x.size):
            out[i] = grad[i] * gelu_with_slope(x[i], tanh)[1]

    return forward, backward


_gelu_loop, _gelu_backward_loop = _gelu_loops(tanh=False)
_gelu_tanh_loop, _gelu_tanh_backward_loop = _gelu_loops(tanh=True)
