"""Norms, PyTorch's: ``linalg.vector_norm``, ``linalg.matrix_norm``, ``linalg.norm``, the
older ``norm`` and ``dist``.

    vector_norm(x, ord, dim)   (sum |x|^ord)^(1/ord) over dim (all elements for None);
                               ord inf: max |x|, -inf: min |x|, 0: how many are not 0
    matrix_norm(A, ord, dim)   over the two dims (the last two by default):
                               "fro" sqrt(sum a^2), 1 / -1 the largest / smallest column sum
                               of |a|, inf / -inf the largest / smallest row sum
    norm(x, p, dim)            "fro" or a number; vector norms, as torch.norm computes them
    dist(a, b, p)              vector_norm(a - b, p)

The vector norm is one op; its gradient, PyTorch's subgradients:

    ord 2        x / ||x||, and 0 where ||x|| = 0 (not 0 / 0)
    ord 1        sign(x)
    ord +-inf    sign(x) where |x| is the extreme, shared between equal extremes
    ord 0        0
    other p      sign(x) |x|^(p-1) / ||x||^(p-1), and 0 where x = 0

The matrix norms are compositions (abs, sum, amax/amin) that have their backward; the
nuclear and spectral norms ("nuc", 2, -2) are those of the singular values (linalg.svdvals).
Norms are defined for floating point only (PyTorch's rule); ``dtype=`` converts the input first.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from ...autograd.op import Grads, Op
from ...dtypes import DTypeLike
from ...errors import ShapeError, describe
from ...errors import ValueArgumentError
from ...tensors.meta import normalize_dim, normalize_dims
from ...tensors.tensor import Tensor
from ..arguments import check_floats
from ..elementwise import Where
from ..reduction import Amax, Amin, Sum, _expand_back
from .spectral import svdvals
from ...autograd import autocast_hook

SPECTRAL = ("nuc", 2, -2)


def _absolute_power_sum(magnitude: Tensor, order: float, dims: tuple[int, ...], keepdim: bool) -> Tensor:
    return Sum.apply(magnitude if order == 1 else magnitude ** order, dims, keepdim)


class VectorNorm(Op):
    def forward(self, x: Tensor, order: float, dims: tuple[int, ...] | None, keepdim: bool = False) -> Tensor:
        dims = normalize_dims(dims, x.ndim, "vector_norm")
        magnitude = x.detach().abs()
        if order == math.inf:
            out = Amax.apply(magnitude, dims, keepdim)
        elif order == -math.inf:
            out = Amin.apply(magnitude, dims, keepdim)
        elif order == 0:
            out = Sum.apply(magnitude != 0, dims, keepdim).to(x.dtype)
        elif order == 2:
            out = _absolute_power_sum(magnitude, 2, dims, keepdim).sqrt()
        elif order == 1:
            out = _absolute_power_sum(magnitude, 1, dims, keepdim)
        else:
            out = _absolute_power_sum(magnitude, order, dims, keepdim) ** (1.0 / order)
        self.save_for_backward(x, out)
        self.order, self.dims = order, dims
        self.kept_shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, out = self.saved_tensors
        order = self.order
        grad = _expand_back(grad, self.kept_shape, x.shape)
        norm = out.reshape(self.kept_shape)
        if order == 0:
            return (x.new_zeros(x.shape), None, None, None)
        if order == 1:
            return (grad * x.sign(), None, None, None)
        if order in (math.inf, -math.inf):
            hits = (x.abs() == norm).to(x.dtype)
            count = Sum.apply(hits, self.dims, True)
            return (grad * x.sign() * hits / count, None, None, None)
        if order == 2:
            slope = Where.apply(norm == 0, 0.0, x / norm)
        else:
            slope = x.sign() * x.abs() ** (order - 1) / norm ** (order - 1)
            slope = Where.apply((x == 0).logical_or(norm == 0), 0.0, slope)
        return (grad * slope, None, None, None)


def _dims_of(dim: int | Iterable[int] | None) -> tuple[int, ...] | None:
    if dim is None:
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


def _prepared(op: str, x: Tensor, dtype: DTypeLike | None) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {describe(x)}")
    check_floats(op, input=x if dtype is None else x.to(dtype))
    return x if dtype is None else x.to(dtype)


def vector_norm(x: Tensor, ord: float = 2, dim: int | Iterable[int] | None = None, keepdim: bool = False, *,
                dtype: DTypeLike | None = None) -> Tensor:
    """The ``ord``-norm of ``x`` as a vector over ``dim`` (all elements for None)."""
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"vector_norm: ord must be a number, got {ord!r}")
    x = _prepared("vector_norm", x, dtype)
    if ord in (math.inf, -math.inf) and x.numel() == 0:
        raise ShapeError(f"vector_norm: the {ord}-norm of an empty tensor ({describe(x)}) is undefined")
    return VectorNorm.apply(x, ord, _dims_of(dim), keepdim)


def matrix_norm(a: Tensor, ord: str | float = "fro", dim: Iterable[int] = (-2, -1), keepdim: bool = False, *,
                dtype: DTypeLike | None = None) -> Tensor:
    """The ``ord``-norm of the matrices of ``a`` over the two dims ``dim``."""
    a = _prepared("matrix_norm", a, dtype)
    if a.ndim < 2:
        raise ShapeError(f"matrix_norm: needs at least 2 dimensions, got {describe(a)}")
    dims = _dims_of(dim)
    if dims is None or len(dims) != 2:
        raise ShapeError(f"matrix_norm: dim must name two dimensions, got {dim!r}")
    rows, columns = (normalize_dim(d, a.ndim, "matrix_norm") for d in dims)
    if rows == columns:
        raise ShapeError(f"matrix_norm: dim must name two different dimensions, got {dim!r}")
    if ord in SPECTRAL:
        return _spectral_norm(a, ord, rows, columns, keepdim)
    if ord == "fro":
        return VectorNorm.apply(a, 2, (rows, columns), keepdim)
    if ord not in (1, -1, math.inf, -math.inf):
        raise ValueError(f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    # ord +-1: sum over the rows (a column's sum), then the extreme over the columns; +-inf: the other way
    summed, extreme = (rows, columns) if ord in (1, -1) else (columns, rows)
    sums = Sum.apply(a.abs(), summed, True)
    picked = (Amax if ord in (1, math.inf) else Amin).apply(sums, extreme, True)
    return picked if keepdim else picked.squeeze((rows, columns))


def _spectral_norm(a: Tensor, ord: str | float, rows: int, columns: int, keepdim: bool) -> Tensor:
    """"nuc": the sum of the singular values; 2 / -2: the largest / smallest one."""
    values = svdvals(a.movedim((rows, columns), (-2, -1)))            # (..., k)
    out = values.sum(-1) if ord == "nuc" else (Amax if ord == 2 else Amin).apply(values, -1, False)
    if keepdim:
        for d in sorted((rows, columns)):
            out = out.unsqueeze(d)
    return out


def linalg_norm(a: Tensor, ord: str | float | None = None, dim: int | Iterable[int] | None = None,
                keepdim: bool = False, *, dtype: DTypeLike | None = None) -> Tensor:
    """PyTorch's linalg.norm: a vector norm over one dim, a matrix norm over two; without dim,
    the 2-norm of all elements (ord None) or the ord-norm of a 1-D or 2-D ``a``."""
    dims = _dims_of(dim)
    if dims is None:
        if ord is None:
            return vector_norm(a, 2, None, keepdim, dtype=dtype)
        if not isinstance(a, Tensor) or a.ndim not in (1, 2):
            raise ShapeError(f"linalg.norm: without dim, ord={ord!r} needs a 1-D or 2-D input, got {describe(a)}")
        dims = tuple(range(a.ndim))
    if len(dims) == 1:
        if isinstance(ord, str):
            raise TypeError(f"linalg.norm: ord={ord!r} is a matrix norm; over one dim, ord must be a number")
        return vector_norm(a, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if len(dims) == 2:
        return matrix_norm(a, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    raise ShapeError(f"linalg.norm: dim must name one or two dimensions, got {dim!r}")


def norm(input: Tensor, p: str | float = "fro", dim: int | Iterable[int] | None = None, keepdim: bool = False,
         dtype: DTypeLike | None = None) -> Tensor:
    """The older torch.norm: "fro" (over all elements, or one or two dims), "nuc" (a matrix
    norm over two dims) or a number p (a vector norm over dim)."""
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("norm", input)
    dims = _dims_of(dim)
    if p == "nuc":
        if dims is None and isinstance(input, Tensor) and input.ndim != 2:
            raise ShapeError(f"norm: p='nuc' without dim needs a 2-D input, got {describe(input)}")
        return matrix_norm(input, "nuc", (0, 1) if dims is None else dims, keepdim, dtype=dtype)
    if p == "fro":
        if dims is not None and len(dims) > 2:
            raise ShapeError(f"norm: p='fro' takes one or two dims, got {dim!r}")
        p = 2
    if isinstance(p, str):
        raise ValueArgumentError(f"norm: p must be 'fro', 'nuc' or a number, got {p!r}")
    return vector_norm(input, p, dims, keepdim, dtype=dtype)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of a - b (broadcast) over all elements."""
    if autocast_hook.state.active:
        input, other = autocast_hook.cast("dist", input, other)
    return vector_norm(input - other, p)
