"""``scatter_reduce``: src's values reduced into a copy of the input at ``index`` along ``dim``
with sum, prod, mean, amax or amin -- with the input's own value taking part
(``include_self=True``) or not (then each place written starts from the reduction's identity).

The forward is one kernel (``scatter_reduce``: ``ufunc.at``); the backward, PyTorch's rules:

    sum     input: grad (0 where written and not include_self); src: grad gathered at index
    mean    both: grad / the number of values averaged at that place
    amax    grad shared evenly among the values equal to the result there (input and src)
    amin    as amax
    prod    each value's gradient: grad times the product of the others there -- exact when
            zeros take part (the product of the non-zero values and the count of zeros)
"""
from __future__ import annotations

import math

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import describe
from ...tensors.creation import zeros
from ...tensors.tensor import Tensor
from ..conversion import Copy
from ..elementwise import where
from ..joining import gather
from .scatter import _check_scatter, _flat, _pad_to, _window

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype: dtypes.DType) -> float | int:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.is_floating_point:
        return -math.inf if reduce == "amax" else math.inf
    if dtype is dtypes.bool_:
        return reduce == "amin"
    limits = dtypes.iinfo(dtype)
    return limits.min if reduce == "amax" else limits.max


def _scattered(x: Tensor, dim: int, index: Tensor, values: Tensor, reduce: str, start: Tensor | None = None) -> Tensor:
    """A copy of ``start`` (x) with ``values`` reduced in at index (kernel reductions only)."""
    out = (x if start is None else start).detach().clone().contiguous()
    out.device.kernels.scatter_reduce(_flat(out)._array, dim, _flat(index)._array,
                                      _flat(values.contiguous())._array, reduce)
    return out


def _touched(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """True where index writes (a bool tensor of x's shape)."""
    marks = _scattered(zeros(x.shape, dtype=dtypes.int64, device=x.device), dim, index,
                       zeros(index.shape, dtype=dtypes.int64, device=x.device) + 1, "sum")
    return marks > 0


class ScatterReduce(Op):
    def forward(self, x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool) -> Tensor:
        reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)   # (PyTorch takes these too)
        if reduce not in REDUCTIONS:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        if not isinstance(src, Tensor):
            raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}")
        dim = _check_scatter("scatter_reduce", x, dim, index, src)
        if src.dtype is not x.dtype:
            raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype "
                               f"({describe(x)}, {describe(src)})")
        values = _window(src.detach(), index.shape).contiguous()
        start = x.detach()
        if not include_self:
            start = where(_touched(x, dim, index), _identity(reduce, x.dtype), start).to(x.dtype)
        out = _scattered(x, dim, index, values, "sum" if reduce == "mean" else reduce, start)
        if reduce == "mean":
            count = _scattered(zeros(x.shape, dtype=x.dtype, device=x.device) + (1 if include_self else 0), dim,
                               index, zeros(index.shape, dtype=x.dtype, device=x.device) + 1, "sum")
            count = count.clamp(min=1)
            out = out / count if x.dtype.is_floating_point else out.div(count, rounding_mode="floor")
            self.count = count
        self.dim, self.reduce, self.include_self, self.src_shape = dim, reduce, include_self, src.shape
        self.save_for_backward(x, index, values, out)
        return Copy.apply(out) if out is x else out

    def backward(self, grad: Tensor) -> Grads:
        x, index, values, out = self.saved_tensors
        dim, reduce, include_self = self.dim, self.reduce, self.include_self
        touched = _touched(x, dim, index)
        kept = where(touched, 0.0, grad)          # (not include_self: untouched places keep x)
        if reduce == "sum":
            grad_x, grad_values = (grad if include_self else kept), gather(grad, dim, index)
        elif reduce == "mean":
            share = grad / self.count
            grad_x = share if include_self else where(touched, 0.0, grad)
            grad_values = gather(share, dim, index)
        elif reduce in ("amax", "amin"):
            result_there = gather(out, dim, index)
            picked_values = (values == result_there).to(grad.dtype)
            picked_x = (x == out).to(grad.dtype) if include_self else zeros(x.shape, dtype=grad.dtype, device=x.device)
            number = _scattered(picked_x, dim, index, picked_values, "sum")
            share = grad / number.clamp(min=1)
            grad_x = share * picked_x if include_self else kept
            grad_values = gather(share, dim, index) * picked_values
        else:   # prod: the product of the others, from the non-zero product and the zero count
            nonzero_x = where(x == 0, 1.0, x).to(x.dtype) if include_self else where(touched, 1.0, x).to(x.dtype)
            zero_x = (x == 0).to(x.dtype) if include_self else zeros(x.shape, dtype=x.dtype, device=x.device)
            product = _scattered(nonzero_x, dim, index, where(values == 0, 1.0, values).to(x.dtype), "prod")
            zero_count = _scattered(zero_x, dim, index, (values == 0).to(x.dtype), "sum")

            def others(v: Tensor, product: Tensor, zero_count: Tensor) -> Tensor:
                return where(v != 0, where(zero_count == 0, product / where(v == 0, 1.0, v), 0.0),
                             where(zero_count == 1, product, 0.0))

            grad_x = grad * others(x, product, zero_count) if include_self else kept
            grad_values = gather(grad, dim, index) * others(values, gather(product, dim, index),
                                                              gather(zero_count, dim, index))
        if grad_values.shape != self.src_shape:
            grad_values = _pad_to(grad_values, self.src_shape)
        return grad_x, None, None, grad_values, None, None


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """input with src's values reduced in at ``index`` along ``dim`` (sum, prod, mean, amax, amin)."""
    return ScatterReduce.apply(input, dim, index, src, reduce, include_self)
