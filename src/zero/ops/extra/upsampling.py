"""Resampling (F.interpolate), pixel shuffle and max unpooling, as compositions of ops.

Every interpolation mode but "area" is separable: output place i of a dimension reads a few
input places of that dimension (taps) with weights that depend on i alone, so the result is
one pass per spatial dimension,

    y = sum over taps t of index_select(x, dim, index_t) * weight_t      (weights broadcast along dim)

and the gradient is index_select's (added back where each element came from). The taps are
PyTorch's, worked out on the host in the input's precision (float32 arithmetic for float32,
as PyTorch's CPU kernels compute their source places):

    scale   align_corners: (in - 1) / (out - 1) (0 when out is 1);  otherwise 1 / scale_factor
            when one is given (and not recomputed), else in / out
    nearest         floor(i scale), at most in - 1 (one tap)
    nearest-exact   floor((i + 0.5) scale), at most in - 1
    linear          s = i scale (align_corners) or max(0, (i + 0.5) scale - 0.5); taps floor(s)
                    and the next (the last place repeats), weights 1 - t and t, t = s - floor(s)
    cubic           s as linear but not clamped at 0; taps floor(s) - 1 .. floor(s) + 2 clamped to
                    the input, Keys' cubic convolution weights with A = -0.75
    area            adaptive average pooling to the output size

A dimension whose size is kept is left as it is where PyTorch's CPU kernels skip it whatever the
scale factor: in the linear modes and 2-D nearest; 1-D and 3-D nearest, nearest-exact and bicubic
resample it at the scale given (PyTorch's backward of 1-D / 3-D nearest then skips it, not
matching its forward; Zero's gradient is its forward's).

antialias=True (bilinear, bicubic and lanczos, 4-D input; lanczos needs it) is PyTorch's
separable filter resampling, Pillow's. With s the scale above (align_corners changes only s) and
k = max(s, 1), output place i is centred at m = s (i + 0.5) (in units where input place j spans
[j, j + 1)); it reads the places j with int(m - r k + 0.5) <= j < int(m + r k + 0.5) inside the
input, with weights filter((j + 0.5 - m) / k) divided by their sum. The filter is the triangle
1 - |x| (radius r = 1) for bilinear, Keys' cubic with A = -0.5 (r = 2) for bicubic and
sinc(x) sinc(x / 3) (r = 3) for lanczos: downsampling stretches it by s, so each output place
averages the input places it covers; upsampling keeps it (bilinear with align_corners=False is
then plain bilinear). Per dimension (the last first, as PyTorch; one whose size is kept is left
alone) that is an (out, in) weight matrix worked out on the host in the input's precision and
applied as one matrix product, whose gradient is the product with its transpose.

pixel_shuffle / pixel_unshuffle are a reshape, a permute and a reshape. max_unpool scatters
each value to its index in a zero plane (scatter's gradient gathers it back).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...errors import ShapeError, describe
from ...tensors.creation import tensor
from ...tensors.tensor import Tensor
from ..arguments import Sizes
from ..new_memory import new_memory
from .convolution import int_tuple
from .pooling import adaptive_avg_pool

LINEAR_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}   # spatial dims each needs
MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area", "lanczos")
CUBIC_A = -0.75
ANTIALIAS_CUBIC_A = -0.5                                    # PyTorch's (Pillow's) for antialias=True
ANTIALIAS_MODES = ("bilinear", "bicubic", "lanczos")

Taps = list[tuple[np.ndarray, np.ndarray | None]]   # (index (out,), weight (out,) or None) per tap


def _cubic_near(x: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution weight for |x| <= 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution weight for 1 < |x| < 2."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _scale(size: int, out: int, align_corners: bool, scale: float | None, real: type) -> float:
    """PyTorch's area_pixel_compute_scale, in the precision ``real``."""
    if align_corners:
        return real(size - 1) / real(out - 1) if out > 1 else real(0)
    if scale is not None and scale > 0:
        return real(1.0 / scale)
    return real(size) / real(out)


def _taps(mode: str, size: int, out: int, align_corners: bool, scale: float | None, real: type) -> Taps:
    """The taps of one dimension (see the module docstring)."""
    places = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        s = _scale(size, out, False, scale, np.float32)
        if mode == "nearest":
            index = np.floor(places.astype(np.float32) * s)
        else:
            index = np.floor(((places + 0.5) * np.float64(s)).astype(np.float32))
        return [(np.minimum(index.astype(np.int64), size - 1), None)]
    s = _scale(size, out, align_corners, scale, real)
    positions: np.ndarray = places.astype(real)
    if align_corners:
        source = positions * s
    else:
        source = s * (positions + real(0.5)) - real(0.5)
    if mode != "bicubic":
        source = np.maximum(source, real(0))
        first = source.astype(np.int64)
        second = np.where(first < size - 1, first + 1, first)
        t = np.clip(source - first.astype(real), 0, 1).astype(real)
        return [(first, (real(1) - t).astype(real)), (second, t)]
    floor = np.floor(source)
    t = (source - floor).astype(real)
    a = real(CUBIC_A)
    weights = (_cubic_far(t + 1, a), _cubic_near(t, a), _cubic_near(1 - t, a), _cubic_far(2 - t, a))
    start = floor.astype(np.int64) - 1
    return [(np.clip(start + k, 0, size - 1), w.astype(real)) for k, w in enumerate(weights)]


def _keeps(mode: str, dims: int, size: int, out: int, align_corners: bool, scale: float | None) -> bool:
    """Whether a dimension is left as it is (see the module docstring): a kept size resampled at
    scale 1, or one PyTorch's kernel skips whatever the scale -- linear modes, 2-D nearest."""
    if out != size:
        return False
    return scale is None or align_corners or mode in ("linear", "bilinear", "trilinear") or (
        mode == "nearest" and dims == 2)


def _resample(x: Tensor, dim: int, taps: Taps) -> Tensor:
    out = None
    for index, weight in taps:
        part = x.index_select(dim, tensor(index, device=x.device))
        if weight is not None:
            shape = [1] * x.ndim
            shape[dim] = weight.shape[0]
            part = part * tensor(weight.reshape(shape), dtype=x.dtype, device=x.device)
        out = part if out is None else out + part
    assert out is not None
    return out


def _antialias_filter(mode: str, x: np.ndarray, real: type) -> np.ndarray:
    """The filter of antialias=True at distances x (input places), in the precision ``real``."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, real(1) - x, real(0)).astype(real)
    if mode == "bicubic":
        a = real(ANTIALIAS_CUBIC_A)
        return np.where(x < 1, _cubic_near(x, a), np.where(x < 2, _cubic_far(x, a), real(0))).astype(real)
    return np.where(x < 3, np.sinc(x) * np.sinc(x / real(3)), real(0)).astype(real)      # lanczos


def _antialias_matrix(mode: str, size: int, out: int, align_corners: bool, scale: float | None,
                      real: type) -> np.ndarray:
    """The (out, size) weights of antialias=True along one dimension (see the module docstring)."""
    s = _scale(size, out, align_corners, scale, real)
    stretch = s if s >= 1 else real(1)
    support = real({"bilinear": 1, "bicubic": 2, "lanczos": 3}[mode]) * stretch
    centre = s * (np.arange(out).astype(real) + real(0.5))                      # m, (out,)
    first = np.maximum(np.trunc(centre - support + real(0.5)).astype(np.int64), 0)
    stop = np.minimum(np.trunc(centre + support + real(0.5)).astype(np.int64), size)
    places = np.arange(size)
    distance = (places.astype(real)[None, :] - centre[:, None] + real(0.5)) * (real(1) / stretch)
    inside = (places[None, :] >= first[:, None]) & (places[None, :] < stop[:, None])
    weights: np.ndarray = np.where(inside, _antialias_filter(mode, distance, real), real(0)).astype(real)
    total = weights.sum(axis=1, keepdims=True, dtype=real)
    return np.where(total != 0, weights / np.where(total != 0, total, real(1)), weights).astype(real)


def _antialias(x: Tensor, mode: str, out_sizes: tuple[int, ...], align_corners: bool,
               scales: tuple[float | None, ...]) -> Tensor:
    """antialias=True on (N, C, H, W): the width's matrix, then the height's, as products."""
    real = np.float64 if x.dtype.itemsize == 8 else np.float32
    y = x
    for dim in (3, 2):
        size, out = x.shape[dim], out_sizes[dim - 2]
        if out == size:
            continue
        matrix = tensor(_antialias_matrix(mode, size, out, align_corners, scales[dim - 2], real),
                        dtype=x.dtype, device=x.device)                        # (out, in)
        y = y @ matrix.mT if dim == 3 else matrix @ y        # (N, C, H, in) @ (in, out); (out, in) @ (N, C, in, W)
    return x.clone() if y is x else y


def interpolate(x: Tensor, size: int | Sizes | None = None, scale_factor: float | Sequence[float] | None = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """PyTorch's F.interpolate over the spatial dims of x (N, C, *spatial), 1 to 3 of them."""
    if not isinstance(x, Tensor):
        raise TypeError(f"interpolate: expected a tensor, got {type(x).__name__}")
    if antialias and not (mode in ANTIALIAS_MODES and x.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         f"4-D tensor as input, got mode {mode!r} and {describe(x)}")
    if mode not in MODES:
        raise NotImplementedError(f"interpolate: mode must be one of {MODES}, got {mode!r}")
    dims = x.ndim - 2
    if dims not in (1, 2, 3):
        raise ShapeError(f"interpolate: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got {describe(x)}")
    if mode in LINEAR_MODES and LINEAR_MODES[mode] != dims:
        raise NotImplementedError(f"interpolate: got {x.ndim}D input, but {mode} mode needs "
                                  f"{LINEAR_MODES[mode] + 2}D input")
    if mode not in LINEAR_MODES and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    if not x.dtype.is_floating_point and mode not in ("nearest", "nearest-exact"):
        raise ShapeError(f"interpolate: mode {mode!r} needs a floating-point input, got {describe(x)}")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    in_sizes = x.shape[2:]
    scales: tuple[float | None, ...] = (None,) * dims
    if size is not None:
        if isinstance(size, (list, tuple)) and len(size) != dims:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and output size of {list(size)}. "
                             f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             f"(o1, o2, ...,oK) format.")
        out_sizes = int_tuple("interpolate", "size", size, dims, 1)
    else:
        factors: tuple[float, ...] = (tuple(scale_factor) if isinstance(scale_factor, (list, tuple))
                                      else (float(scale_factor),) * dims)   # type: ignore[arg-type]
        if len(factors) != dims:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {list(in_sizes)} and scale_factor of "
                             f"{list(factors)}.")
        out_sizes = tuple(math.floor(float(n) * float(f)) for n, f in zip(in_sizes, factors))
        if min(out_sizes) < 1:
            raise ShapeError(f"interpolate: scale_factor {scale_factor!r} gives an empty output {list(out_sizes)} "
                             f"for input {describe(x)}")
        if not recompute_scale_factor:
            scales = tuple(float(f) for f in factors)
    if mode == "area":
        return adaptive_avg_pool(f"adaptive_avg_pool{dims}d", dims, x, out_sizes)
    if antialias:
        return _antialias(x, mode, out_sizes, bool(align_corners), scales)
    real = np.float64 if x.dtype.itemsize == 8 else np.float32
    corners = bool(align_corners)
    y = x
    for axis in range(dims):
        if not _keeps(mode, dims, in_sizes[axis], out_sizes[axis], corners, scales[axis]):
            y = _resample(y, 2 + axis, _taps(mode, in_sizes[axis], out_sizes[axis], corners, scales[axis], real))
    return x.clone() if y is x else y


def pixel_shuffle(x: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r², H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    if not isinstance(x, Tensor) or x.ndim < 3:
        raise ShapeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got {describe(x)}")
    if not isinstance(r, int) or r < 1:
        raise ShapeError(f"pixel_shuffle expects a positive upscale_factor, but got {r!r}")
    *lead, channels, height, width = x.shape
    if channels % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                         f"upscale_factor, but input {describe(x)} has {channels} channels and upscale_factor={r}")
    n = len(lead)
    y = x.reshape(*lead, channels // (r * r), r, r, height, width)
    y = y.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)                    # (*, C, H, r, W, r)
    return new_memory(y.reshape(*lead, channels // (r * r), height * r, width * r), x)  # as PyTorch's


def pixel_unshuffle(x: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r², H, W)."""
    r = downscale_factor
    if not isinstance(x, Tensor) or x.ndim < 3:
        raise ShapeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got {describe(x)}")
    if not isinstance(r, int) or r < 1:
        raise ShapeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r!r}")
    *lead, channels, height, width = x.shape
    if height % r or width % r:
        raise ShapeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor={r}, but "
                         f"input {describe(x)} has height {height} and width {width}")
    n = len(lead)
    y = x.reshape(*lead, channels, height // r, r, width // r, r)
    y = y.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)                    # (*, C, r, r, H, W)
    return new_memory(y.reshape(*lead, channels * r * r, height // r, width // r), x)  # as PyTorch's


def unpool_size(op: str, x: Tensor, dims: int, kernel: tuple[int, ...], stride: tuple[int, ...],
                padding: tuple[int, ...], output_size: Sizes | None) -> tuple[int, ...]:
    """The unpooled spatial size: (in - 1) stride - 2 padding + kernel, or output_size checked
    to lie strictly within a stride of it (PyTorch's rule)."""
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(x.shape[-dims:], stride, padding, kernel))
    if output_size is None:
        return default
    sizes = tuple(output_size)
    if len(sizes) == dims + 2 or (len(sizes) == dims + 1 and x.ndim == dims + 1):
        sizes = sizes[-dims:]
    if len(sizes) != dims:
        raise ValueError(f"{op}: output_size should be a sequence containing {dims} or {dims + 2} elements, but "
                         f"it has a length of '{len(sizes)}'")
    for d in range(dims):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < sizes[d] < high:
            raise ValueError(f"{op}: invalid output_size {list(sizes)} (dim {d} must be between {low} and {high})")
    return tuple(int(s) for s in sizes)


def max_unpool(op: str, dims: int, x: Tensor, indices: Tensor, kernel_size: int | Sizes,
               stride: int | Sizes | None = None, padding: int | Sizes = 0,
               output_size: Sizes | None = None) -> Tensor:
    """PyTorch's F.max_unpool1d (dims 1) / 2d (dims 2): each value of x (N, C, *in) put at its
    index (in its plane of the output, as max_pool returns them), zeros elsewhere."""
    if not isinstance(x, Tensor) or x.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got {describe(x)}")
    if not isinstance(indices, Tensor) or indices.shape != x.shape or indices.dtype.is_floating_point:
        raise ShapeError(f"{op}: expected indices as integers of the input's shape {list(x.shape)}, got "
                         f"{describe(indices)}")
    kernel = int_tuple(op, "kernel_size", kernel_size, dims, 1)
    stride_ = kernel if stride is None else int_tuple(op, "stride", stride, dims, 1)
    padding_ = int_tuple(op, "padding", padding, dims, 0)
    out_sizes = unpool_size(op, x, dims, kernel, stride_, padding_, output_size)
    plane = math.prod(out_sizes)
    lead = x.shape[:-dims]
    if indices.numel() and (int(indices.min().item()) < 0 or int(indices.max().item()) >= plane):
        raise ShapeError(f"{op}: found an invalid max index {int(indices.max().item())} (output volumes are of "
                         f"size {'x'.join(str(s) for s in out_sizes)})")
    flat_x, flat_indices = x.reshape(*lead, -1), indices.reshape(*lead, -1).long()
    out = x.new_zeros(lead + (plane,)).scatter(-1, flat_indices, flat_x)
    return out.reshape(lead + out_sizes)
