"""The gamma family (lgamma, digamma, trigamma: ``gamma_functions``, in float64, cast to out)
and the bit shifts, over ``xp`` (``numpy`` or ``cupy``)."""
from __future__ import annotations

from types import ModuleType

from .. import gamma_functions
from ..kernel_contract import Array, Operand
from ._quiet import quiet


def _in_float64(xp: ModuleType, function, x: Array, out: Array) -> None:
    with quiet(xp):
        xp.copyto(out, function(xp, xp.asarray(x, dtype=xp.float64)), casting="unsafe")


def lgamma(xp: ModuleType, x: Array, out: Array) -> None:
    _in_float64(xp, gamma_functions.lgamma, x, out)


def digamma(xp: ModuleType, x: Array, out: Array) -> None:
    _in_float64(xp, gamma_functions.digamma, x, out)


def trigamma(xp: ModuleType, x: Array, out: Array) -> None:
    _in_float64(xp, gamma_functions.trigamma, x, out)


def _shift_amount(xp: ModuleType, b: Operand, out: Array):
    """b as out's type; amounts outside [0, bits) marked (PyTorch: shifted out entirely)."""
    amount = xp.asarray(b).astype(out.dtype, copy=False)
    bits = out.dtype.itemsize * 8
    outside = (amount < 0) | (amount >= bits)
    return xp.where(outside, 0, amount).astype(out.dtype, copy=False), outside


def left_shift(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    """out = a << b (bits shifted past the width give 0, as in PyTorch)."""
    amount, outside = _shift_amount(xp, b, out)
    xp.left_shift(xp.asarray(a).astype(out.dtype, copy=False), amount, out=out)
    out[...] = xp.where(outside, 0, out)


def right_shift(xp: ModuleType, a: Operand, b: Operand, out: Array) -> None:
    """out = a >> b, arithmetic for signed types (past the width: 0, or -1 for negatives)."""
    amount, outside = _shift_amount(xp, b, out)
    value = xp.asarray(a).astype(out.dtype, copy=False)
    xp.right_shift(value, amount, out=out)
    out[...] = xp.where(outside, xp.where(value < 0, -1, 0), out) if out.dtype.kind == "i" else \
        xp.where(outside, 0, out)


_SCATTER_UFUNCS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def scatter_reduce(xp: ModuleType, out: Array, axis: int, index: Array, values: Array, reduce: str) -> None:
    """out[.., index[i, j], ..] = reduce(out[..], values[i, j]) along ``axis``; reduce is
    sum, prod, amax or amin (``ufunc.at``; where the array library lacks that ufunc's ``at``
    -- CuPy's multiply -- the reduction runs on the host and the result is copied back)."""
    rank = len(index.shape)
    position = [xp.arange(n).reshape(tuple(n if i == d else 1 for i in range(rank)))  # open grid
                for d, n in enumerate(index.shape)]
    position[axis] = index
    ufunc = getattr(xp, _SCATTER_UFUNCS[reduce])
    try:
        ufunc.at(out, tuple(position), values)
    except (AttributeError, NotImplementedError, TypeError):
        import numpy as np

        host = xp.asnumpy(out)
        getattr(np, _SCATTER_UFUNCS[reduce]).at(host, tuple(xp.asnumpy(p) for p in position), xp.asnumpy(values))
        out[...] = xp.asarray(host)
