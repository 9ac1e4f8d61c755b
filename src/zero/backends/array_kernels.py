"""The kernels that are a call or two into the array library, written once for NumPy and CuPy.

Most of the kernel contract is a NumPy routine that CuPy offers under the same name with
the same arguments: ``add(a, b, out)`` is ``xp.add(a, b, out=out, casting="unsafe")``
whether ``xp`` is ``numpy`` (the CPU) or ``cupy`` (CUDA). ``array_kernels(xp)`` makes
those kernels for one array module; each backend's kernels package adds them to its
namespace beside its own (Numba loops on the CPU; Triton, cuBLAS and CuPy's elementwise
kernels on CUDA):

    globals().update(array_kernels(numpy))        # in zero.backends.cpu.kernels

So ``device.kernels.add`` is a plain attribute, as fast to call as a hand-written
wrapper: each kernel is a closure over the ufunc or module it calls. The two array
libraries differ in three places, and the kernels here say so where it matters:

- NumPy warns about division by zero, overflow and invalid values; PyTorch gives inf
  and nan silently, and so do GPUs. NumPy's calls that may meet them run under
  ``np.errstate(all="ignore")``; CuPy's need nothing. Addition, subtraction and
  multiplication, on every step's hot path, do not pay the microsecond that costs: a
  warnings filter for this module silences their rarer overflow and inf - inf instead.
- CuPy's advanced indexing wraps out-of-range indices instead of raising. ``index_get``
  and ``index_put`` check the bounds first on CuPy (reading two numbers back to the
  host), as NumPy does by itself; ``index_select``, on the hot path of every embedding,
  does not.
- Reducing over no axes at all is a copy; it is written as one rather than left to the
  library (CuPy's reductions are not documented for ``axis=()``).
"""
from __future__ import annotations

import builtins
import contextlib
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from . import special_functions

Kernel = Callable[..., Any]

# NumPy's floating-point warnings from this module's own calls (see above), once for every
# NumPy kernel; appended, so that a user's own filters (-W error, say) still come first.
warnings.filterwarnings("ignore", r".* encountered in ", RuntimeWarning, __name__.replace(".", r"\."), append=True)


def _binary(ufunc, quiet: bool) -> Kernel:
    """out = ufunc(a, b), broadcasting, cast to out's dtype (``quiet``: no NumPy warnings)."""
    if quiet:
        def kernel(a, b, out) -> None:
            with np.errstate(all="ignore"):
                ufunc(a, b, out=out, casting="unsafe")
    else:
        def kernel(a, b, out) -> None:
            ufunc(a, b, out=out, casting="unsafe")
    kernel.__name__ = kernel.__qualname__ = ufunc.__name__
    return kernel


def _unary(ufunc, quiet: bool) -> Kernel:
    """out = ufunc(x), cast to out's dtype (``quiet``: no NumPy warnings)."""
    if quiet:
        def kernel(x, out) -> None:
            with np.errstate(all="ignore"):
                ufunc(x, out=out, casting="unsafe")
    else:
        def kernel(x, out) -> None:
            ufunc(x, out=out, casting="unsafe")
    kernel.__name__ = kernel.__qualname__ = ufunc.__name__
    return kernel


def array_kernels(xp: ModuleType) -> dict[str, Kernel]:
    """The kernels below, on arrays of ``xp`` (``numpy`` or ``cupy``), by name."""
    warns = xp is np            # NumPy reports floating-point errors; CuPy cannot (see above)
    wraps_indices = xp is not np

    def _quiet():
        """A context without NumPy's floating-point warnings (nothing to silence on CuPy)."""
        if not warns:
            return contextlib.nullcontext()
        return np.errstate(all="ignore")

    # -- fills, arithmetic, comparisons, selections -------------------------------------------

    def fill(out, value) -> None:
        out.fill(value)

    add = _binary(xp.add, False)
    sub = _binary(xp.subtract, False)
    mul = _binary(xp.multiply, False)
    div = _binary(xp.true_divide, warns)    # x / 0 is inf or nan, as in PyTorch
    pow = _binary(xp.power, warns)
    maximum = _binary(xp.maximum, False)
    minimum = _binary(xp.minimum, False)
    eq = _binary(xp.equal, False)
    ne = _binary(xp.not_equal, False)
    lt = _binary(xp.less, False)
    le = _binary(xp.less_equal, False)
    gt = _binary(xp.greater, False)
    ge = _binary(xp.greater_equal, False)
    logical_and = _binary(xp.logical_and, False)
    logical_or = _binary(xp.logical_or, False)
    logical_xor = _binary(xp.logical_xor, False)
    bitwise_and = _binary(xp.bitwise_and, False)   # integers bit by bit; bools as logic
    bitwise_or = _binary(xp.bitwise_or, False)
    bitwise_xor = _binary(xp.bitwise_xor, False)

    def where(condition, a, b, out) -> None:
        # where has no out=; copyto with a mask writes straight into out.
        xp.copyto(out, b, casting="unsafe")
        xp.copyto(out, a, casting="unsafe", where=condition)

    def clamp(x, low, high, out) -> None:
        """out = min(max(x, low), high), either bound None: NumPy's clip, computed in the
        promoted type and cast to out's (an integer out rounds toward zero: clamp_(0.5, 2.5)
        of ints gives 0, 1, 2, 2). Two ufunc calls in that one type rather than clip,
        whose CuPy version has no casting argument; the values are clip's, as a cast to
        out's type is monotone."""
        dtype = xp.result_type(x, *(bound for bound in (low, high) if bound is not None))
        source = x
        if low is not None:
            xp.maximum(source, low, out=out, dtype=dtype, casting="unsafe")
            source = out
        if high is not None:
            xp.minimum(source, high, out=out, dtype=dtype, casting="unsafe")

    neg = _unary(xp.negative, False)
    abs = _unary(xp.absolute, False)
    bitwise_not = _unary(xp.invert, False)

    def sign(x, out) -> None:
        """-1, 0 or 1; the sign of NaN is 0, as PyTorch gives it (NumPy's is NaN)."""
        xp.sign(x, out=out, casting="unsafe")
        if out.dtype.kind == "f":
            xp.copyto(out, 0, where=xp.isnan(out))

    exp = _unary(xp.exp, warns)
    log = _unary(xp.log, warns)
    sqrt = _unary(xp.sqrt, warns)
    sin = _unary(xp.sin, False)
    cos = _unary(xp.cos, False)
    tanh = _unary(xp.tanh, False)
    logical_not = _unary(xp.logical_not, False)

    def rsqrt(x, out) -> None:
        with _quiet():
            xp.sqrt(x, out=out, casting="unsafe")
            xp.reciprocal(out, out=out)

    def relu(x, out) -> None:
        xp.maximum(x, 0, out=out, casting="unsafe")

    def relu_backward(grad, out, grad_in) -> None:
        """grad_in = 0 where relu's output out <= 0, else grad (a NaN output passes it on,
        and an infinite gradient is not multiplied by 0: PyTorch's threshold backward)."""
        xp.copyto(grad_in, xp.where(out <= 0, xp.zeros((), grad_in.dtype), grad), casting="unsafe")

    # -- reductions: over ``axes``, into ``out`` shaped as x without them --------------------

    def sum(x, axes: tuple, out) -> None:
        if not axes:
            xp.copyto(out, x, casting="unsafe")
        else:
            xp.sum(x, axis=axes, dtype=out.dtype, out=out)

    def _var64(x, axes: tuple, correction: int):
        """The variance accumulated in float64 (a float32 mean of values near 1e8 loses the
        digits the variance is made of; squares of values near 1e38 overflow float32)."""
        with _quiet(), warnings.catch_warnings():  # fewer elements than the correction: nan or inf
            warnings.simplefilter("ignore", RuntimeWarning)
            return xp.var(x, axis=axes, ddof=correction, dtype=xp.float64)

    def var(x, axes: tuple, correction: int, out) -> None:
        xp.copyto(out, _var64(x, axes, correction), casting="unsafe")

    def std(x, axes: tuple, correction: int, out) -> None:
        """The square root of ``var``, taken in float64 before rounding to out's dtype."""
        xp.copyto(out, xp.sqrt(_var64(x, axes, correction)), casting="unsafe")

    def amax(x, axes: tuple, out) -> None:
        if not axes:
            xp.copyto(out, x)
        else:
            xp.amax(x, axis=axes, out=out)

    def amin(x, axes: tuple, out) -> None:
        if not axes:
            xp.copyto(out, x)
        elif xp is np:
            xp.amin(x, axis=axes, out=out)
        else:  # CuPy 14.2's min with out= raises a TypeError on its CUB path (seen on an H200); max does not
            xp.copyto(out, xp.amin(x, axis=axes))

    def all(x, axes: tuple, out) -> None:
        if not axes:
            xp.copyto(out, x, casting="unsafe")   # to bool: nonzero (and nan) is True
        else:
            xp.all(x, axis=axes, out=out)

    def any(x, axes: tuple, out) -> None:
        if not axes:
            xp.copyto(out, x, casting="unsafe")
        else:
            xp.any(x, axis=axes, out=out)

    def logsumexp(x, axes: tuple, out) -> None:
        """log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum (0 where it is not
        finite, so rows of -inf give -inf and not nan)."""
        if x.ndim == 0:
            x = x.reshape(1)
        if x.size == 0:  # log of an empty sum: -inf (where the output has elements at all)
            out.fill(-xp.inf)
            return
        peak = xp.amax(x, axis=axes, keepdims=True)
        xp.copyto(peak, 0, where=~xp.isfinite(peak))
        with _quiet():
            total = xp.sum(xp.exp(x - peak), axis=axes, keepdims=True)
            xp.log(total, out=total)
        total += peak
        xp.copyto(out, total.reshape(out.shape), casting="unsafe")

    def argmax(x, axis: int, out) -> None:
        xp.argmax(x, axis=axis, out=out)

    def argmin(x, axis: int, out) -> None:
        xp.argmin(x, axis=axis, out=out)

    def _extreme_with_indices(arg_function, x, axis, values, indices) -> None:
        if axis is None:  # a 0-d tensor
            xp.copyto(values, x)
            indices.fill(0)
            return
        arg_function(x, axis=axis, out=indices)
        picked = xp.take_along_axis(x, xp.expand_dims(indices, axis), axis=axis)
        xp.copyto(values, picked.reshape(values.shape))

    def max_with_indices(x, axis: int | None, values, indices) -> None:
        """Largest value along one axis and the index of its first occurrence."""
        _extreme_with_indices(xp.argmax, x, axis, values, indices)

    def min_with_indices(x, axis: int | None, values, indices) -> None:
        _extreme_with_indices(xp.argmin, x, axis, values, indices)

    def sort(x, axis: int, descending: bool, values, indices) -> None:
        """Sorted along ``axis`` and where each value came from; stable (equal values keep
        their order), NaN sorted as the largest value, as PyTorch sorts."""
        key = x
        if descending:  # ascending on a decreasing key keeps ties in order, unlike a flip
            if x.dtype.kind == "f":
                key = xp.where(xp.isnan(x), -xp.inf, -x)
            else:
                key = ~x  # -x - 1 for integers (no overflow), not for bools
        order = xp.argsort(key, axis=axis, kind="stable")
        xp.copyto(indices, order, casting="unsafe")
        xp.copyto(values, xp.take_along_axis(x, order, axis=axis))

    def cumsum(x, axis: int, out) -> None:
        xp.cumsum(x, axis=axis, dtype=out.dtype, out=out)

    def scatter_along(out, axis: int, indices, values) -> None:
        """out[..., indices[...], ...] = values along ``axis`` (indices and values keep that axis)."""
        xp.put_along_axis(out, indices, values, axis=axis)

    # -- indexing -------------------------------------------------------------------------------

    def index_extremes(index) -> tuple[int, int]:
        """(smallest, largest) entry of an integer array with at least one entry, as Python
        ints (the host waits for the device; the CPU has a one-pass loop of its own)."""
        return int(index.min()), int(index.max())

    def _check_bounds(x, key) -> None:
        """IndexError for an integer index array that reaches outside ``x`` (NumPy's rule)."""

        def consumed(item) -> int:  # how many of x's axes an index item stands for
            if item is None or item is Ellipsis:
                return 0
            return item.ndim if isinstance(item, xp.ndarray) and item.dtype == bool else 1

        axis = 0
        for item in key:
            if item is Ellipsis:
                axis += x.ndim - builtins.sum(consumed(k) for k in key)
                continue
            if isinstance(item, xp.ndarray) and item.dtype.kind in "iu" and item.size:
                size = x.shape[axis]
                low, high = index_extremes(item)
                if low < -size or high >= size:
                    raise IndexError(f"index {high if high >= size else low} is out of bounds for axis {axis} "
                                     f"with size {size}")
            axis += consumed(item)

    def index_get(x, key):
        """A new array of x[key]."""
        if wraps_indices:
            _check_bounds(x, key)
        return x[key]

    def index_put(x, key, values) -> None:
        if wraps_indices:
            _check_bounds(x, key)
        x[key] = values

    def index_add(out, key, values) -> None:
        """out[key] += values, accumulating where an index repeats."""
        xp.add.at(out, key, values)

    def gather(x, axis: int, index, out) -> None:
        """out = x picked along ``axis`` by index (index may be smaller than x elsewhere)."""
        window = x[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(index.shape))]
        xp.copyto(out, xp.take_along_axis(window, index, axis=axis))

    def scatter_add(out, axis: int, index, values) -> None:
        """out[.., index[i, j], ..] += values[i, j] along ``axis`` (gather's backward)."""
        rank = len(index.shape)
        position = [xp.arange(n).reshape(tuple(n if i == d else 1 for i in range(rank)))  # open grid
                    for d, n in enumerate(index.shape)]
        position[axis] = index
        xp.add.at(out, tuple(position), values)

    def index_select(x, axis: int, index, out) -> None:
        """out = x taken along ``axis`` at ``index`` (any shape: an embedding lookup for axis 0).
        The CPU has its own (cpu/kernels/indexing.py): NumPy's take buffers ``out``."""
        if out.flags.c_contiguous:
            xp.take(x, index, axis=axis, out=out)
        else:
            xp.copyto(out, xp.take(x, index, axis=axis))

    def triangle(x, diagonal: int, upper: bool, out) -> None:
        """Keep the upper (triu) or lower (tril) triangle of the last two dims, zero the rest."""
        xp.copyto(out, xp.triu(x, diagonal) if upper else xp.tril(x, diagonal))

    # -- NLL on log-probabilities (a gather) -----------------------------------------------------

    def _picked(target, weight, ignore_index: int, dtype):
        """(valid rows, target with ignored rows pointing at class 0, per-row weight)."""
        valid = target != ignore_index
        safe = xp.where(valid, target, 0)
        row_weight = xp.ones(target.shape, dtype) if weight is None else weight[safe]
        return valid, safe, row_weight

    def nll_loss_forward(log_probs, target, weight, ignore_index: int, loss) -> None:
        """loss (N,) = -w[t] * log_probs[t] per row, 0 where ignored."""
        valid, safe, row_weight = _picked(target, weight, ignore_index, log_probs.dtype)
        picked = xp.take_along_axis(log_probs, safe[:, None], axis=1)[:, 0]
        xp.copyto(loss, xp.where(valid, -row_weight * picked, 0), casting="unsafe")

    def nll_loss_backward(grad_loss, target, weight, ignore_index: int, grad_input) -> None:
        """grad_input (N, C): -w[t] * grad_loss at the target, 0 elsewhere."""
        valid, safe, row_weight = _picked(target, weight, ignore_index, grad_input.dtype)
        grad_input.fill(0)
        grad_input[xp.arange(safe.shape[0]), safe] = xp.where(valid, -row_weight * grad_loss, 0)

    # -- more elementwise math (PyTorch's common functions) -------------------------------------
    # Unary ufuncs write in out's dtype (an op passes x already in it); the rounding ones also
    # have integer loops, which leave integers as they are.

    floor = _unary(xp.floor, False)
    ceil = _unary(xp.ceil, False)
    trunc = _unary(xp.trunc, False)
    rint = _unary(xp.rint, False)           # round half to even, PyTorch's round()
    log1p = _unary(xp.log1p, warns)
    expm1 = _unary(xp.expm1, warns)
    log2 = _unary(xp.log2, warns)
    log10 = _unary(xp.log10, warns)
    exp2 = _unary(xp.exp2, warns)
    reciprocal = _unary(xp.reciprocal, warns)
    tan = _unary(xp.tan, warns)
    arcsin = _unary(xp.arcsin, warns)
    arccos = _unary(xp.arccos, warns)
    arctan = _unary(xp.arctan, False)
    sinh = _unary(xp.sinh, warns)
    cosh = _unary(xp.cosh, warns)
    arcsinh = _unary(xp.arcsinh, False)
    arccosh = _unary(xp.arccosh, warns)
    arctanh = _unary(xp.arctanh, warns)
    isnan = _unary(xp.isnan, False)
    isinf = _unary(xp.isinf, False)
    isfinite = _unary(xp.isfinite, False)
    arctan2 = _binary(xp.arctan2, False)
    hypot = _binary(xp.hypot, False)
    logaddexp = _binary(xp.logaddexp, warns)
    floor_divide = _binary(xp.floor_divide, warns)   # Python's rounding: -7 // 2 == -4
    remainder = _binary(xp.remainder, warns)         # the sign of the divisor: -7 % 2 == 1
    fmod = _binary(xp.fmod, warns)                   # the sign of the dividend: fmod(-7, 2) == -1
    fmax = _binary(xp.fmax, False)                   # NaN-ignoring maximum
    fmin = _binary(xp.fmin, False)

    def round_decimals(x, decimals: int, out) -> None:
        """Round half to even at ``decimals`` digits (negative: left of the point), as
        PyTorch does: x * 10^d rounded and divided back, in out's dtype."""
        scale = 10.0 ** builtins.abs(decimals)
        with _quiet():
            if decimals > 0:
                xp.multiply(x, scale, out=out)
                xp.rint(out, out=out)
                xp.divide(out, scale, out=out)
            else:
                xp.divide(x, scale, out=out)
                xp.rint(out, out=out)
                xp.multiply(out, scale, out=out)

    def frac(x, out) -> None:
        """x - trunc(x): the fractional part, with x's sign."""
        xp.trunc(x, out=out)
        with _quiet():
            xp.subtract(x, out, out=out)

    def signbit(x, out) -> None:
        """Whether the sign bit is set (true for -0.0 and for NaNs with it); x < 0 for integers."""
        if x.dtype.kind == "f":
            xp.signbit(x, out=out)
        else:
            xp.less(x, 0, out=out)

    def equals_value(x, value, out) -> None:
        """out = (x == value) for one number (isposinf, isneginf), integers compared exactly."""
        xp.equal(x, value, out=out)

    def nan_to_num(x, nan, posinf, neginf, out) -> None:
        """x with NaN, +inf and -inf replaced by the three numbers."""
        xp.copyto(out, x)
        xp.copyto(out, nan, where=xp.isnan(x), casting="unsafe")
        xp.copyto(out, posinf, where=x == xp.inf, casting="unsafe")
        xp.copyto(out, neginf, where=x == -xp.inf, casting="unsafe")

    def _special(function) -> Kernel:
        """A kernel computing ``function`` of special_functions in float64, cast to out."""
        def kernel(x, out) -> None:
            with _quiet():
                xp.copyto(out, function(xp, xp.asarray(x, dtype=xp.float64)), casting="unsafe")
        kernel.__name__ = kernel.__qualname__ = function.__name__
        return kernel

    erf = _special(special_functions.erf)
    erfc = _special(special_functions.erfc)
    erfinv = _special(special_functions.erfinv)

    def _as_array(value, dtype):
        """A Python number as a 0-d array (CuPy's ufuncs want one array operand at least)."""
        return value if isinstance(value, xp.ndarray) else xp.asarray(value, dtype=dtype)

    def truncate_divide(a, b, out) -> None:
        """a / b rounded toward zero. Floats: the quotient truncated; integers exactly, as
        (a - fmod(a, b)) // b (a multiple of b divided by b)."""
        with _quiet():
            if out.dtype.kind == "f":
                xp.true_divide(a, b, out=out)
                xp.trunc(out, out=out)
            else:
                xp.fmod(_as_array(a, out.dtype), b, out=out)
                xp.subtract(a, out, out=out)
                xp.floor_divide(out, b, out=out)

    def xlogy(x, y, out) -> None:
        """x * log(y), and 0 where x == 0 unless y is NaN (PyTorch's xlogy)."""
        y = _as_array(y, out.dtype)
        with _quiet():
            xp.log(y, out=out)
            xp.multiply(x, out, out=out)
        xp.copyto(out, 0, where=(_as_array(x, out.dtype) == 0) & ~xp.isnan(y))

    def lerp(start, end, weight, out) -> None:
        """start + weight (end - start), written as end - (end - start)(1 - weight) where
        |weight| >= 1/2, so that weight 1 gives end exactly (PyTorch's two-sided formula)."""
        with _quiet():
            difference = xp.subtract(end, start, dtype=out.dtype)
            if not isinstance(weight, xp.ndarray):  # one number: one side of the formula
                if builtins.abs(weight) < 0.5:
                    xp.multiply(difference, weight, out=out)
                    xp.add(out, start, out=out)
                else:
                    xp.multiply(difference, 1 - weight, out=out)
                    xp.subtract(end, out, out=out)
                return
            near_start = xp.abs(weight) < 0.5
            xp.copyto(out, start + weight * difference, where=near_start, casting="unsafe")
            xp.copyto(out, end - difference * (1 - weight), where=~near_start, casting="unsafe")

    def addcmul(x, tensor1, tensor2, value, out) -> None:
        """out = x + value * tensor1 * tensor2 (three passes, no temporary)."""
        xp.multiply(tensor1, tensor2, out=out)
        if value != 1:
            xp.multiply(out, value, out=out)
        xp.add(out, x, out=out)

    def addcdiv(x, tensor1, tensor2, value, out) -> None:
        """out = x + value * tensor1 / tensor2."""
        with _quiet():
            xp.true_divide(tensor1, tensor2, out=out)
        if value != 1:
            xp.multiply(out, value, out=out)
        xp.add(out, x, out=out)

    def any_zero(x) -> bool:
        """Whether an (integer) array holds a 0: integer division checks its divisor."""
        return bool((x == 0).any())

    # -- products (PyTorch's prod and cumprod) ---------------------------------------------------

    def prod(x, axes: tuple, out) -> None:
        """The product over ``axes`` (1 over none), in out's dtype."""
        if not axes:
            xp.copyto(out, x, casting="unsafe")
        else:
            xp.prod(x, axis=axes, dtype=out.dtype, out=out)

    def cumprod(x, axis: int, out) -> None:
        xp.cumprod(x, axis=axis, dtype=out.dtype, out=out)

    # -- scatters, searches and counts (PyTorch's scatter, nonzero, unique, bincount ...) -------
    # The searches and counts return a new array (their size depends on the values).

    def scatter_window(out, axis: int, index, values) -> None:
        """out[.., index[i, j], ..] = values[i, j] along ``axis``, where index (and values, of
        index's shape) may be smaller than out in the other dims: the window out[:i, :j]."""
        window = out[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(index.shape))]
        xp.put_along_axis(window, index, values, axis=axis)

    def argwhere(x):
        """(count, ndim) int64: the indices of the nonzero elements, in row-major order."""
        return xp.argwhere(x)

    def unique(x, axis, return_inverse: bool, return_counts: bool) -> tuple:
        """(sorted unique values, inverse or None, counts or None); NaNs are each their own
        value (PyTorch's rule), ``axis`` None: of the flattened array."""
        found = xp.unique(x, return_inverse=return_inverse, return_counts=return_counts, axis=axis,
                          equal_nan=False)
        found = found if isinstance(found, tuple) else (found,)
        values, rest = found[0], list(found[1:])
        inverse = rest.pop(0) if return_inverse else None
        counts = rest.pop(0) if return_counts else None
        return values, inverse, counts

    def bincount(x, weights, minlength: int):
        return xp.bincount(x, weights=weights, minlength=minlength)

    def searchsorted(sequence, values, right: bool):
        """Where each value would be inserted into the sorted 1-D ``sequence`` (after equal
        elements when ``right``); a 2-D sequence (rows, n) searches row r for values[r]."""
        side = "right" if right else "left"
        if sequence.ndim == 1:
            return xp.searchsorted(sequence, values, side=side)
        if sequence.shape[0] == 0:
            return xp.zeros(values.shape, dtype=xp.int64)
        return xp.stack([xp.searchsorted(row, row_values, side=side) for row, row_values in zip(sequence, values)])

    def histogram(x, bins: int, low: float, high: float):
        """Counts of x in ``bins`` equal bins over [low, high] (the last one closed), others ignored."""
        counts, _ = xp.histogram(x, bins=bins, range=(low, high))
        return counts

    # -- many tensors at once (clip_grad_norm_) ------------------------------------------------
    def squared_norms(arrays, out) -> None:
        """out[i] = sum of the squares of arrays[i] (any shape), for out's dtype: one BLAS
        dot each, no temporary of the array's size; 16-bit floats are summed in float32."""
        with _quiet():
            for i, a in enumerate(arrays):
                flat = a.reshape(-1)
                if flat.dtype.itemsize < 4:
                    flat = flat.astype(xp.float32)
                out[i] = xp.dot(flat, flat)

    def clip_factor(total, max_norm: float, eps: float, factor) -> None:
        """factor = min(max_norm / (total + eps), 1) for a 0-d ``total`` (clip_grad_norm_'s
        scale), in total's dtype and on its device: the ufunc calls of the three ops it
        replaces (add, divide, clamp), so the same bits, without their Python."""
        with _quiet():
            xp.add(total, eps, out=factor, casting="unsafe")
            xp.true_divide(max_norm, factor, out=factor, casting="unsafe")
            xp.minimum(factor, 1.0, out=factor, dtype=factor.dtype, casting="unsafe")

    def scale_in_place(arrays, factor) -> None:
        """arrays[i] *= factor (a 0-d array: the scale stays on the device), each in its dtype."""
        with _quiet():
            for a in arrays:
                xp.multiply(a, factor, out=a, casting="unsafe")

    defined = dict(locals())
    return {name: value for name, value in defined.items() if callable(value) and not name.startswith("_")}
