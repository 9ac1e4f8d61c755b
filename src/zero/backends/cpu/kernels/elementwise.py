"""Elementwise kernels of the CPU's own: the copy, ``where`` on contiguous floats, an array
plus a row repeated over it (``add``, and ``add_row_in_place`` for the fused kernels' biases),
the activations that are Numba loops (sigmoid, SiLU, both GELUs), and the four arithmetic
operations, NumPy's, on both cores when large. The rest of the elementwise contract --
comparisons, clamp, the unary math functions, ``where`` on anything else -- is one NumPy
call each (``zero.backends.array_kernels``)."""
from __future__ import annotations

import numpy as np

from ...array_kernels import array_kernels
from ..threads import parallel_flat, parallel_for
from ._fastmath import fast_exp, gelu as gelu_value, gelu_with_slope, like
from ._jit import njit, prange

__all__ = ["add", "copy", "div", "gelu", "gelu_backward", "mul", "relu", "relu_backward", "sigmoid", "silu", "sub",
           "where"]


_shared = array_kernels(np)
_masked_copy_where, _maximum_relu, _where_relu_backward = _shared["where"], _shared["relu"], _shared["relu_backward"]


# -- memory-bound loops on both cores ---------------------------------------------------------
#
# One core moves less data than the machine's memory can: these loops (two or three arrays
# read and written, one operation per element) ran in 0.42-1.02x the time on two threads at
# 2^21 float32 elements and 0.52-0.79x at 2^22, back to back; with the cache emptied before
# each call (so the worker had gone to sleep), 0.90-1.07x and 0.64-1.12x
# (``benchmarks/split_costs.py --sections gain [--cold]``). At 2^20 they lost back to back,
# 1.16-1.59x (the operands stay in the cache), and parts of 2^19 for operands from memory
# read 0.64-0.78x in one try and 1.07-1.13x in another (add and mul at (4096, 256), forward
# + backward, ``op_ab.py``), the medium GPT's step 1.005 (``step_ab.py``): not a gain to
# count on. So they split into parts of at least MEMORY_PART elements, from 2^21.
MEMORY_PART = 1 << 20
SPLIT_FROM = 2 * MEMORY_PART   # below, one plain call and no checks


def _flat_operand(x, out):
    """``x`` as ``parallel_flat`` can cut it alongside out's elements: a number or a single
    element as it is; an array of out's size, C-contiguous (so out's elements in out's
    order), flat; None when x broadcasts otherwise, or overlaps out other than element for
    element (an in-place op)."""
    if not isinstance(x, np.ndarray):
        return x
    if x.size == 1 and not np.may_share_memory(x, out):
        return x.reshape(())    # broadcast to every part
    if x.size != out.size or not x.flags.c_contiguous:
        return None
    if np.may_share_memory(x, out) and (x.ctypes.data != out.ctypes.data or x.itemsize != out.itemsize):
        return None
    return x.reshape(-1)


def _split_flat(numpy_kernel, out, *operands) -> bool:
    """``numpy_kernel(*operands, out)`` cut into ranges of out's elements on the pool's
    threads (``parallel_flat``), when out is contiguous and every operand can be cut with
    it (``_flat_operand``). Returns whether it ran; the caller makes one plain call if not."""
    if not out.flags.c_contiguous:
        return False
    flat = [_flat_operand(x, out) for x in operands]
    if any(x is None for x in flat):
        return False
    parallel_flat(lambda out_part, *parts: numpy_kernel(*parts, out_part), out.reshape(-1), *flat,
                  part=MEMORY_PART)
    return True


def _on_both_cores(numpy_kernel):
    """``numpy_kernel(a, b, out)`` (one NumPy ufunc call), on both cores when large
    (``_split_flat``). Each element is computed as NumPy computes it, so the results are the
    same bit for bit however the work is shared."""
    def kernel(a, b, out) -> None:
        if out.size < SPLIT_FROM or not _split_flat(numpy_kernel, out, a, b):
            numpy_kernel(a, b, out)
    kernel.__name__ = kernel.__qualname__ = numpy_kernel.__name__
    kernel.__doc__ = f"out = {numpy_kernel.__name__}(a, b): NumPy, on both cores when large (``_on_both_cores``)."
    return kernel


def copy(src, out) -> None:
    """Strided copy with broadcasting and dtype conversion (the book's stride-aware copy); a
    large one between contiguous arrays of one size on both cores, as the arithmetic (``_on_both_cores``)."""
    if out.size < SPLIT_FROM or not _split_flat(_copy_into, out, src):
        _copy_into(src, out)


def _copy_into(src, out) -> None:
    np.copyto(out, src, casting="unsafe")


_numpy_add = _on_both_cores(_shared["add"])
sub = _on_both_cores(_shared["sub"])
mul = _on_both_cores(_shared["mul"])
div = _on_both_cores(_shared["div"])


def add(a, b, out) -> None:
    """out = a + b. A float array plus an array of its trailing shape (x + bias, token plus
    position embeddings), either way round, takes a Numba loop by rows: NumPy's broadcasting
    add ran at half its speed (2048 x 512 + (512,) float32: 278 against 129 µs; in place
    2.2-2.5x from (16, 96) to (8192, 384)), the sums bit for bit the same. Anything else:
    NumPy. Both on both cores when large."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.ndim < b.ndim:
            a, b = b, a
        if 0 < b.ndim < a.ndim and _row_of(a, b, out) and not np.may_share_memory(b, out):
            width = b.size
            if a is out:        # in place (x += bias): a loop that reads out only
                _add_row_in_place_on_cores(out.reshape(-1, width), b.reshape(-1))
                return
            if not np.may_share_memory(a, out):
                rows, row, target = a.reshape(-1, width), b.reshape(-1), out.reshape(-1, width)
                parallel_for(rows.shape[0], lambda lo, hi: _add_row_loop(rows[lo:hi], row, target[lo:hi]),
                             _rows_per_part(width))
                return
    _numpy_add(a, b, out)


def add_row_in_place(out, row) -> None:
    """out (R, C) += row (C,) for every row: the fused kernels' bias (``add``'s loop)."""
    if _row_of(out, row, out) and not np.may_share_memory(row, out):
        _add_row_in_place_on_cores(out, row)
    else:
        out += row


def _add_row_in_place_on_cores(out, row) -> None:
    parallel_for(out.shape[0], lambda lo, hi: _add_row_in_place_loop(out[lo:hi], row), _rows_per_part(row.size))


def _rows_per_part(width: int) -> int:
    """Rows of ``width`` elements that make a part of at least MEMORY_PART elements."""
    return -(-MEMORY_PART // width)


def _row_of(x, row, out) -> bool:
    """Whether ``row`` is x's trailing shape, not empty, and all three are contiguous arrays
    of one float dtype, out of x's shape: x + row is then rows of x plus row."""
    return (row.size > 0 and out.dtype in (np.float32, np.float64) and x.dtype == row.dtype == out.dtype
            and x.shape == out.shape and x.shape[x.ndim - row.ndim:] == row.shape
            and x.flags.c_contiguous and row.flags.c_contiguous and out.flags.c_contiguous)


def where(condition, a, b, out) -> None:
    """out = a where condition else b (b may be a number). Float operands of out's shape and
    dtype take one Numba select loop: NumPy's masked copy branches on every element, and
    on a mask of random signs (relu's backward) mispredicts half of them -- measured
    5.3 ms for 1 M float32 elements, 10x a multiply. Anything else: NumPy."""
    number = isinstance(b, (bool, int, float))
    if (out.dtype in (np.float32, np.float64) and isinstance(a, np.ndarray) and _can_flatten(a, out)
            and condition.shape == out.shape and condition.dtype == np.bool_ and (number or _can_flatten(b, out))):
        if number:
            parallel_flat(_select_number_loop, _flat_in(condition), _flat_in(a), out.dtype.type(b), _flat_out(out),
                          part=MEMORY_PART)
        else:
            parallel_flat(_select_loop, _flat_in(condition), _flat_in(a), _flat_in(b), _flat_out(out),
                          part=MEMORY_PART)
    else:
        _masked_copy_where(condition, a, b, out)


# -- activations: Numba loops over flat arrays --------------------------------------------------


def relu(x, out) -> None:
    """One select per element on contiguous floats (NumPy's NaN-propagating maximum measured
    3x a copy: 0.52 against 0.18 ms for 1 M float32); anything else: NumPy."""
    if out.dtype in (np.float32, np.float64) and _can_flatten(x, out):
        parallel_flat(_relu_loop, _flat_in(x), _flat_out(out), part=MEMORY_PART)
    else:
        _maximum_relu(x, out)


def relu_backward(grad, out, grad_in) -> None:
    """grad_in = 0 where out <= 0, else grad, in one select per element (instead of a mask,
    its negation and a masked copy) when all three are contiguous floats of one shape."""
    if (grad_in.dtype in (np.float32, np.float64) and _can_flatten(grad, grad_in)
            and _can_flatten(out, grad_in)):
        parallel_flat(_relu_backward_loop, _flat_in(grad), _flat_in(out), _flat_out(grad_in),
                      part=MEMORY_PART)
    else:
        _where_relu_backward(grad, out, grad_in)


# One core's time per float32 element of each loop (1 M elements, measured by
# ``benchmarks/split_costs.py --sections costs``): how large a loop must be to be split over
# the pool's threads (threads.SPLIT_NS).
SIGMOID_NS, SILU_NS = 0.3, 0.36
GELU_NS, GELU_BACKWARD_NS = 0.72, 0.8
GELU_TANH_NS, GELU_TANH_BACKWARD_NS = 0.52, 0.6


def sigmoid(x, out) -> None:
    if _can_flatten(x, out):
        parallel_flat(_sigmoid_loop, _flat_in(x), _flat_out(out), ns_per_element=SIGMOID_NS)
    else:
        _sigmoid_numpy(x, out)


def silu(x, out) -> None:
    if _can_flatten(x, out):
        parallel_flat(_silu_loop, _flat_in(x), _flat_out(out), ns_per_element=SILU_NS)
    else:
        _sigmoid_numpy(x, out)
        np.multiply(out, x, out=out)


def gelu(x, out, approximate: str = "none") -> None:
    """Exact GELU x·Φ(x), or ``approximate="tanh"``: ½x(1 + tanh(√(2/π)(x + 0.044715x³)));
    one Numba loop per form, in the input's precision."""
    loop, cost = (_gelu_tanh_loop, GELU_TANH_NS) if approximate == "tanh" else (_gelu_loop, GELU_NS)
    parallel_flat(loop, _flat_in(x), _flat_out(out), ns_per_element=cost)


def gelu_backward(grad, x, out, approximate: str = "none") -> None:
    """out = grad * d gelu(x) / dx."""
    loop, cost = ((_gelu_tanh_backward_loop, GELU_TANH_BACKWARD_NS) if approximate == "tanh"
                  else (_gelu_backward_loop, GELU_BACKWARD_NS))
    parallel_flat(loop, _flat_in(grad), _flat_in(x), _flat_out(out), ns_per_element=cost)


def _sigmoid_numpy(x, out) -> None:
    with np.errstate(over="ignore"):
        np.negative(x, out=out, casting="unsafe")
        np.exp(out, out=out)
        out += 1
        np.reciprocal(out, out=out)


def _can_flatten(x, out) -> bool:
    return x.shape == out.shape and x.dtype == out.dtype and out.flags.c_contiguous


def _flat_in(x):
    """A contiguous 1-D view (copying only if the input is not contiguous)."""
    return np.ascontiguousarray(x).reshape(-1)


def _flat_out(out):
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
