"""Products: ``prod`` over dimensions and the running product ``cumprod``, with gradients
that stay exact where the input holds zeros.

    prod(x, dim)     y = x_0 x_1 ... x_(n-1)           dy/dx_k = the product of the others
    cumprod(x, dim)  y_i = x_0 ... x_i                   dx_k = sum_(i >= k) g_i dy_i/dx_k

The product of the others is never y / x_k (0 / 0 at a zero): it is the product of the
elements before k times the product of those after, two running products (one from each
end), so one zero, several zeros and no zero are the same computation.

cumprod's gradient: with z the first zero of a row (n when there is none),

    k < z    dx_k = (sum_(i >= k) g_i y_i) / x_k         (x_k is not 0 there)
    k = z    dx_z = (x_0 ... x_(z-1)) * sum_(i >= z) g_i (x_(z+1) ... x_i)
    k > z    dx_k = 0                                     (every y_i it enters has the 0 too)

Integer and bool inputs multiply in int64, as PyTorch's do; ``dtype=`` converts the input
first.
"""
from __future__ import annotations

import math
from collections.abc import Callable

from ... import dtypes
from ...autograd.op import Grads, Op
from ...dtypes import DType, DTypeLike
from ...errors import describe
from ...tensors.creation import arange, ones
from ...tensors.meta import normalize_dim, normalize_dims
from ...tensors.tensor import Tensor
from ..elementwise import Where
from ..joining import cat
from ..reduction import Dims, _expand_back, _reduced_output
from ...autograd import autocast_hook


def _product_dtype(x: Tensor) -> DType:
    return x.dtype if x.dtype.is_floating_point else dtypes.int64


def _as_rows(x: Tensor, dims: tuple[int, ...]) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
    """x with ``dims`` moved last and flattened: a (rows, n) tensor, and the function that
    undoes it for a tensor of that shape."""
    others = [d for d in range(x.ndim) if d not in dims]
    order = others + list(dims)
    moved = x.permute(order) if order != list(range(x.ndim)) else x
    n = math.prod(x.shape[d] for d in dims)
    rows = math.prod(x.shape[d] for d in others)
    inverse = sorted(range(x.ndim), key=order.__getitem__)

    def back(rows: Tensor) -> Tensor:
        restored = rows.reshape(moved.shape)
        return restored.permute(inverse) if order != list(range(x.ndim)) else restored

    return moved.reshape(rows, n), back


def _exclusive_cumprod(rows: Tensor) -> Tensor:
    """(rows, n) -> (rows, n): the product of the elements before each one (1 for the first)."""
    start = ones(rows.shape[0], 1, dtype=rows.dtype, device=rows.device)
    return cat([start, rows[:, :-1].cumprod(1)], dim=1)


def product_of_others(x: Tensor, dims: tuple[int, ...]) -> Tensor:
    """For each element, the product of the others in its group over ``dims`` (x's shape)."""
    rows, back = _as_rows(x, dims)
    if rows.shape[1] == 0:
        return x.new_zeros(x.shape)
    before = _exclusive_cumprod(rows)
    after = _exclusive_cumprod(rows.flip(1)).flip(1)
    return back(before * after)


class Prod(Op):
    """The product over ``dims`` (every dimension for None)."""

    def forward(self, x: Tensor, dims: Dims, keepdim: bool = False) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"prod: expected a tensor, got {describe(x)}")
        dims = normalize_dims(dims, x.ndim, "prod")
        out, target, self.kept_shape = _reduced_output(x, dims, keepdim, _product_dtype(x))
        x.device.kernels.prod(x._array, dims, target)
        self.save_for_backward(x)
        self.dims = dims
        return out

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        return (_expand_back(grad, self.kept_shape, x.shape) * product_of_others(x, self.dims), None, None)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, dtype: DTypeLike | None = None) -> Tensor:
    """PyTorch's prod: of every element (dim None), or along one dimension ``dim``."""
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("prod", input)
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod: dim must be one int (PyTorch's prod reduces one dimension or all), got {dim!r}")
    if dtype is not None:
        input = input.to(dtype)
    return Prod.apply(input, dim, keepdim)


class Cumprod(Op):
    def forward(self, x: Tensor, dim: int) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"cumprod: expected a tensor, got {describe(x)}")
        dim = normalize_dim(dim, x.ndim, "cumprod")
        out = Tensor._empty(x.shape, _product_dtype(x), x.device)
        source = x.reshape(1) if x.ndim == 0 else x
        x.device.kernels.cumprod(source._array, dim, out._array.reshape(source.shape))
        self.save_for_backward(x, out)
        self.dim = dim
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, out = self.saved_tensors
        if x.ndim == 0 or x.numel() == 0:
            return (grad, None)
        rows, back = _as_rows(x, (self.dim,))
        y, _ = _as_rows(out, (self.dim,))
        g, _ = _as_rows(grad, (self.dim,))
        return (back(_cumprod_gradient(rows, y, g)), None)


def _cumprod_gradient(x: Tensor, y: Tensor, g: Tensor) -> Tensor:
    """(rows, n) each: the gradient of y = cumprod(x, 1) (the module docstring's three cases)."""
    n = x.shape[1]
    position = arange(n, device=x.device)                              # (n,)
    first_zero = Where.apply(x == 0, position, n).amin(1, keepdim=True)  # (rows, 1)
    before = position < first_zero                                     # (rows, n)
    nonzero_x = Where.apply(before, x, 1.0)
    tail_sums = (g * y).flip(1).cumsum(1).flip(1)                      # sum_(i >= k) g_i y_i
    before_first_zero = Where.apply(before, tail_sums / nonzero_x, 0.0)
    # at z: the prefix product times the sum of g_i times the products after z
    after_zero = Where.apply(position <= first_zero, 1.0, x).cumprod(1)
    weighted = Where.apply(position >= first_zero, g * after_zero, 0.0).sum(1, keepdim=True)
    prefix = nonzero_x.prod(1, keepdim=True)
    return Where.apply(position == first_zero, prefix * weighted, before_first_zero)


def cumprod(input: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("cumprod", input)
    if dtype is not None:
        input = input.to(dtype)
    return Cumprod.apply(input, dim)

