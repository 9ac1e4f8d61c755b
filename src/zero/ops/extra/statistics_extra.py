"""PyTorch's products, statistics and tensor utilities that Zero lacked, as compositions of
existing differentiable ops:

    addbmm(input, b1, b2)      beta input + alpha sum_i b1[i] @ b2[i]: one addmm of b1's batch laid
                               along its columns and b2's along its rows
    addr(input, v1, v2)        beta input + alpha outer(v1, v2)
    inner(a, b)                sum over the last dims (a * b where one is 0-d)
    chain_matmul(*matrices)    linalg.multi_dot of 2-d matrices
    adjoint(x), x.mH, x.H      the transposed matrices (a view; Zero's tensors are real)
    cov, corrcoef              numpy.cov's formula with correction, fweights, aweights
    trapezoid, trapz,          the trapezoidal rule (and its running sums) along dim, with
    cumulative_trapezoid       sample points x or a spacing dx
    gradient                   numpy.gradient's differences: second-order central inside (for
                               uneven coordinates too), first- or second-order one-sided at the edges
    diagflat, msort, vander, renorm, unravel_index, unique_consecutive, histogram,
    histogramdd, frobenius_norm, nuclear_norm, norm_except_dim
"""
from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

from ... import dtypes
from ...autograd import autocast_hook
from ...errors import describe
from ...tensors.creation import arange, linspace, ones, zeros
from ...tensors.creation import tensor as make_tensor
from ...tensors.tensor import Tensor
from ..joining import cat
from ..views import transpose
from .linalg import addmm, diag
from .linalg_compositions import multi_dot
from .linalg_compositions import vander as linalg_vander
from .norms import matrix_norm, vector_norm
from .searching import searchsorted
from .sorting import cumsum, sort


def _check(op: str, name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def _floating(x: Tensor) -> Tensor:
    return x if x.dtype.is_floating_point else x.to(dtypes.get_default_dtype())


# -- products -------------------------------------------------------------------------------------


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if _check("addbmm", name, t).ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor, got {describe(t)}")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"addbmm: batch1 and batch2 cannot be multiplied ({describe(batch1)} and "
                           f"{describe(batch2)})")
    b, n, m = batch1.shape
    p = batch2.shape[2]
    if autocast_hook.state.active:  # its own rule, not its addmm's
        input, batch1, batch2 = autocast_hook.cast("addbmm", input, batch1, batch2)
        with autocast_hook.suspended():
            return addmm(input, batch1.permute(1, 0, 2).reshape(n, b * m), batch2.reshape(b * m, p), beta=beta,
                         alpha=alpha)
    return addmm(input, batch1.permute(1, 0, 2).reshape(n, b * m), batch2.reshape(b * m, p), beta=beta, alpha=alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if _check("addr", name, t).ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    if autocast_hook.state.active:  # its own rule (CUDA's list; not the CPU's), not its addmm's
        input, vec1, vec2 = autocast_hook.cast("addr", input, vec1, vec2)
        with autocast_hook.suspended():
            return addmm(input, vec1.reshape(-1, 1), vec2.reshape(1, -1), beta=beta, alpha=alpha)
    return addmm(input, vec1.reshape(-1, 1), vec2.reshape(1, -1), beta=beta, alpha=alpha)


def inner(input: Tensor, other: Tensor) -> Tensor:
    _check("inner", "input", input)
    _check("inner", "other", other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    k = input.shape[-1]
    flat = input.reshape(-1, k) @ other.reshape(-1, k).t()
    return flat.reshape(*input.shape[:-1], *other.shape[:-1])


def chain_matmul(*matrices: Tensor) -> Tensor:
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
                  "Use torch.linalg.multi_dot instead", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if _check("chain_matmul", "matrices", m).ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead (matrix {i})")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))


def adjoint(input: Tensor) -> Tensor:
    if _check("adjoint", "input", input).ndim == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                      stacklevel=2)
        return input.view(())
    if input.ndim == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(input, -2, -1)


def matrix_adjoint(input: Tensor) -> Tensor:
    """``x.mH``."""
    if input.ndim == 0:
        warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                      stacklevel=3)
        return input.view(())
    if input.ndim == 1:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(input, -2, -1)


def conjugate_transpose(input: Tensor) -> Tensor:
    """``x.H``: 2-d tensors only."""
    if input.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                      stacklevel=3)
        return input.view(())
    if input.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if input.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor.{hint}")
    return transpose(input, 0, 1)


# -- statistics -----------------------------------------------------------------------------------


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    _check("cov", "input", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = _floating(input)
    x = x.reshape(1, -1) if x.ndim < 2 else x
    observations = x.shape[1]
    weights: Tensor | None = None
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        _check("cov", name, w)
        if w.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{w.ndim} dimensions")
        if w.numel() != observations:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {w.numel()} != {observations}")
        if name == "fweights":
            if w.dtype.is_floating_point:
                raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                                   f"{w.dtype.name} dtype")
            if w.numel() and bool((w < 0).any()):
                raise RuntimeError("cov(): fweights cannot be negative")
        else:
            if not w.dtype.is_floating_point:
                raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights "
                                   f"with {w.dtype.name} dtype")
            if w.numel() and bool((w < 0).any()):
                raise RuntimeError("cov(): aweights cannot be negative")
        weights = w if weights is None else weights * w
    if weights is None:
        w_sum = make_tensor(float(observations), dtype=x.dtype, device=x.device)
        mean = x.mean(1, keepdim=True)
        norm = w_sum - correction
    else:
        weights = weights.to(x.dtype)
        w_sum = weights.sum()
        mean = (x * weights).sum(1, keepdim=True) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (weights * aweights.to(x.dtype)).sum() / w_sum
    if bool((norm <= 0).all()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
                      "of observations.", UserWarning, stacklevel=2)
    norm = norm.clamp_min(0)
    centered = x - mean
    scaled = centered if weights is None else centered * weights
    c = (scaled @ centered.t()) / norm
    return c.reshape(()) if c.shape == (1, 1) else c   # one variable: a 0-d tensor, as PyTorch's


def corrcoef(input: Tensor) -> Tensor:
    _check("corrcoef", "input", input)
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = diag(c)
    stddev = d.sqrt()
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    return c.clamp(-1, 1)


def _diff_along(t: Tensor, dim: int) -> Tensor:
    n = t.shape[dim]
    return t.narrow(dim, 1, n - 1) - t.narrow(dim, 0, n - 1)


def _pair_sums(y: Tensor, dim: int) -> Tensor:
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)


def _spacing(op: str, y: Tensor, x: Tensor | float | None, dx: float | None, dim: int) -> Tensor | float:
    if x is not None and dx is not None:
        raise TypeError(f"{op}(): received both x and dx; pass one of them")
    if not isinstance(x, Tensor):
        return float(dx if dx is not None else (1.0 if x is None else x))
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0] - 1
        return _diff_along(x, 0).reshape(shape)
    return _diff_along(x, dim if x.ndim == y.ndim else dim - y.ndim + x.ndim)


def _trapezoid_terms(op: str, y: Tensor, x: Tensor | float | None, dx: float | None, dim: int) -> Tensor:
    _check(op, "y", y)
    if y.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    if not -y.ndim <= dim < y.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-y.ndim}, {y.ndim - 1}], "
                         f"but got {dim})")
    dim %= y.ndim
    yf = _floating(y)
    spacing = _spacing(op, yf, x, dx, dim)
    if y.shape[dim] == 0:
        return yf.narrow(dim, 0, 0)
    return _pair_sums(yf, dim) * spacing / 2


def _total(op: str, y: Tensor, x: Tensor | None, dx: float | None, dim: int) -> Tensor:
    terms = _trapezoid_terms(op, y, x, dx, dim)
    if y.shape[dim] == 0:   # no samples: zeros, new and constant (as PyTorch's)
        return zeros(terms.shape[:dim % y.ndim] + terms.shape[dim % y.ndim + 1:], dtype=terms.dtype,
                     device=terms.device)
    return terms.sum(dim)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    return _total("trapezoid", y, x, dx, dim)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    return _total("trapz", y, x, dx, dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    return cumsum(_trapezoid_terms("cumulative_trapezoid", y, x, dx, dim), dim)


def _differences(op: str, f: Tensor, dim: int, step: float | Tensor, edge_order: int) -> Tensor:
    """df/dx along dim; ``step`` a number (even spacing) or the coordinates' differences (n - 1)."""
    n = f.shape[dim]
    shape = [1] * f.ndim
    shape[dim] = -1

    def along(t: Tensor | float) -> Tensor | float:
        return t.reshape(shape) if isinstance(t, Tensor) else t

    def part(start: int, length: int) -> Tensor:
        return f.narrow(dim, start, length)

    h0: Tensor | float
    h1: Tensor | float
    if isinstance(step, Tensor):
        h0, h1 = step[:-1], step[1:]            # the spacing before and after each inner point
    else:
        h0 = h1 = step
    a = along(-h1 / (h0 * (h0 + h1)))
    b = along((h1 - h0) / (h0 * h1))
    c = along(h0 / (h1 * (h0 + h1)))
    inner = part(0, n - 2) * a + part(1, n - 2) * b + part(2, n - 2) * c
    first = step[0] if isinstance(step, Tensor) else step
    last = step[-1] if isinstance(step, Tensor) else step
    if edge_order == 1:
        start = (part(1, 1) - part(0, 1)) / first
        end = (part(n - 1, 1) - part(n - 2, 1)) / last
    else:
        d1 = first
        d2 = step[1] if isinstance(step, Tensor) else step
        start = (part(0, 1) * (-(2 * d1 + d2) / (d1 * (d1 + d2))) + part(1, 1) * ((d1 + d2) / (d1 * d2))
                 + part(2, 1) * (-d1 / (d2 * (d1 + d2))))
        d1 = step[-2] if isinstance(step, Tensor) else step
        d2 = last
        end = (part(n - 3, 1) * (d2 / (d1 * (d1 + d2))) + part(n - 2, 1) * (-(d2 + d1) / (d1 * d2))
               + part(n - 1, 1) * ((2 * d2 + d1) / (d2 * (d1 + d2))))
    return cat([start, inner, end], dim)


def gradient(input: Tensor, *, spacing: float | Sequence[float] | Sequence[Tensor] = 1,
             dim: int | Sequence[int] | None = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    _check("gradient", "input", input)
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    dims = list(builtins.range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [d % input.ndim if -input.ndim <= d < input.ndim else d for d in dims]
    for d in dims:
        if not 0 <= d < input.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                             f"{input.ndim - 1}], but got {d})")
    steps: list[Any] = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(steps) == 1 and len(dims) > 1:
        steps = steps * len(dims)
    if len(steps) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                           f"{len(dims)}, but got a list of length {len(steps)}")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = _floating(input)
    results = []
    for d, step in zip(dims, steps):
        if isinstance(step, Tensor):
            if step.ndim != 1 or step.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and of size "
                                   f"{input.shape[d]} along the dimension, got {describe(step)}")
            coordinates = step.to(f.dtype)
            results.append(_differences("gradient", f, d, coordinates[1:] - coordinates[:-1], edge_order))
        else:
            results.append(_differences("gradient", f, d, float(step), edge_order))
    return tuple(results)


# -- utilities ------------------------------------------------------------------------------------


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    return diag(_check("diagflat", "input", input).reshape(-1), offset)


def msort(input: Tensor) -> Tensor:
    if _check("msort", "input", input).ndim == 0:
        return input.clone()
    return sort(input, 0).values


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    if _check("vander", "x", x).ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    xs = x if x.dtype.is_floating_point or x.dtype == dtypes.int64 else x.to(dtypes.int64)
    if n <= 1:
        result = ones((x.shape[0], n), dtype=xs.dtype, device=x.device)
    else:
        result = linalg_vander(xs, N=n)
    return result if increasing else result.flip(-1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    _check("renorm", "input", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("renorm: input must be a floating point tensor")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    dim %= input.ndim
    others = tuple(d for d in range(input.ndim) if d != dim)
    norms = vector_norm(input, p, others, keepdim=True)
    factor = (maxnorm / (norms + 1e-7)).where(norms > maxnorm, 1.0)
    return input * factor


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype == dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype.name}")
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    if builtins.any(s < 0 for s in sizes):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(sizes)))
    total = 1
    for s in sizes:
        total *= s
    if indices.numel() and (bool((indices < -total).any()) or bool((indices >= total).any())):
        raise ValueError(f"'indices' must be in range [-{total}, {total}), but got values outside")
    flat = indices.to(dtypes.int64) % total if total else indices.to(dtypes.int64)
    coords = []
    for s in reversed(sizes):
        coords.append(flat % s if s else flat)
        flat = flat // s if s else flat
    return tuple(reversed(coords))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
    _check("unique_consecutive", "input", input)
    x = input.reshape(-1) if dim is None else input.movedim(dim, 0)
    n = x.shape[0]
    if n == 0:
        values = x.clone()
        starts = zeros((0,), dtype=dtypes.bool_, device=x.device)
    else:
        changed = x[1:] != x[:-1]
        if changed.ndim > 1:
            changed = changed.reshape(n - 1, -1).any(1)
        first = ones((1,), dtype=dtypes.bool_, device=x.device)
        starts = cat([first, changed])
        values = x[starts]
    if dim is not None:
        values = values.movedim(0, dim)
    results: list[Tensor] = [values]
    if return_inverse:
        inverse = cumsum(starts.to(dtypes.int64), 0) - 1
        results.append(inverse.reshape(input.shape) if dim is None else inverse)
    if return_counts:
        positions = arange(n, device=x.device)[starts]
        ends = cat([positions[1:], make_tensor([n], dtype=dtypes.int64, device=x.device)])
        results.append(ends - positions)
    return results[0] if len(results) == 1 else tuple(results)


class HistogramResult(NamedTuple):
    hist: Tensor
    bin_edges: Tensor


def _bin_edges(op: str, x: Tensor, bins: int | Tensor, range: Sequence[float] | None) -> Tensor:
    """The edges of one dimension's bins: the tensor given, or bins + 1 evenly spaced over range
    (the data's min and max when None; a point widened by 0.5 either side)."""
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1:
            raise RuntimeError(f"torch.{op}(): bins tensor should have one dimension and at least 1 element")
        return bins.detach().to(x.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.{op}(): bins must be > 0, but got {bins}")
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    elif x.numel():
        lo, hi = float(x.min().item()), float(x.max().item())
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(f"torch.{op}(): min should not exceed max, but got min {lo} max {hi}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)


def _bin_of(x: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """(the bin of each value, whether it is inside the edges): bins are closed on the left,
    the last one on the right too."""
    n_bins = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    position = (searchsorted(edges, x, right=True) - 1).clamp(0, builtins.max(n_bins - 1, 0))
    return position, inside


def _weights(op: str, input: Tensor, weight: Tensor | None, shape: tuple[int, ...], x: Tensor) -> Tensor | None:
    if weight is None:
        return None
    if _check(op, "weight", weight).shape != shape:
        raise RuntimeError(f"torch.{op}(): if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got {describe(weight)}")
    return weight.detach().reshape(-1).to(x.dtype)


def histogram(input: Tensor, bins: int | Tensor, *, range: Sequence[float] | None = None,
              weight: Tensor | None = None, density: bool = False) -> HistogramResult:
    _check("histogram", "input", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, "
                           f"but got input {input.dtype.name}")
    x = input.detach().reshape(-1)
    edges = _bin_edges("histogram", x, bins, range)
    n_bins = edges.shape[0] - 1
    w = _weights("histogram", input, weight, input.shape, x)
    position, inside = _bin_of(x, edges)
    counted = inside.to(x.dtype) if w is None else inside.to(x.dtype) * w
    hist = zeros((builtins.max(n_bins, 0),), dtype=x.dtype, device=x.device)
    if n_bins > 0 and x.numel():
        hist = hist.scatter_add(0, position, counted)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    return HistogramResult(hist, edges)


class HistogramddResult(NamedTuple):
    hist: Tensor
    bin_edges: tuple[Tensor, ...]


def histogramdd(input: Tensor, bins: int | Sequence[int] | Sequence[Tensor], *,
                range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False) -> HistogramddResult:
    """The histogram of the points input[..., :] (the last dim holds a point's D coordinates)."""
    _check("histogramdd", "input", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                           f"but got input {input.dtype.name}")
    if input.ndim < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got "
                           f"{input.ndim}")
    d = input.shape[-1]
    points = input.detach().reshape(-1, d)
    per_dim: list[int | Tensor] = [bins] * d if isinstance(bins, int) else list(bins)
    if len(per_dim) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each of the {d} "
                           f"dimensions of the input, but got {len(per_dim)}")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} "
                           f"elements, but got {len(range)}")
    edges = [_bin_edges("histogramdd", points[:, k], per_dim[k],
                        None if range is None else range[2 * k:2 * k + 2]) for k in builtins.range(d)]
    sizes = tuple(e.shape[0] - 1 for e in edges)
    w = _weights("histogramdd", input, weight, input.shape[:-1], points)
    flat = zeros((points.shape[0],), dtype=dtypes.int64, device=points.device)
    everywhere = ones((points.shape[0],), dtype=dtypes.bool_, device=points.device)
    for k in builtins.range(d):
        position, inside = _bin_of(points[:, k].contiguous(), edges[k])
        flat = flat * sizes[k] + position
        everywhere = everywhere & inside
    counted = everywhere.to(points.dtype) if w is None else everywhere.to(points.dtype) * w
    total = 1
    for n in sizes:
        total *= n
    hist = zeros((total,), dtype=points.dtype, device=points.device)
    if total and points.shape[0]:
        hist = hist.scatter_add(0, flat, counted)
    hist = hist.reshape(sizes)
    if density:
        volume = ones(sizes, dtype=points.dtype, device=points.device)
        for k in builtins.range(d):
            shape = [1] * d
            shape[k] = sizes[k]
            volume = volume * (edges[k][1:] - edges[k][:-1]).reshape(shape)
        hist = hist / (hist.sum() * volume)
    return HistogramddResult(hist, tuple(edges))


# -- the deprecated norms -------------------------------------------------------------------------


def frobenius_norm(input: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    _check("frobenius_norm", "input", input)
    dims = tuple(dim) if dim else None
    return vector_norm(input, 2, dims, keepdim=keepdim)


def nuclear_norm(input: Tensor, dim: Sequence[int] | bool | None = None, keepdim: bool = False) -> Tensor:
    _check("nuclear_norm", "input", input)
    if isinstance(dim, bool):   # nuclear_norm(input, keepdim)
        dim, keepdim = None, bool(dim)
    if dim is None:
        if input.ndim != 2:
            raise RuntimeError(f"nuclear_norm: Expected a 2D tensor, but got {input.ndim}D")
        dim = (0, 1)
    if len(dim) != 2:
        raise RuntimeError(f"nuclear_norm: dim must be a 2-tuple, got {tuple(dim)}")
    return matrix_norm(input, "nuc", tuple(dim), keepdim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    _check("norm_except_dim", "v", v)
    if dim == -1:
        return vector_norm(v, pow)
    dim %= builtins.max(v.ndim, 1)
    others = tuple(d for d in builtins.range(v.ndim) if d != dim)
    return vector_norm(v, pow, others, keepdim=True)
