"""3-D pooling and adaptive max pooling, as compositions of the 2-D pooling ops.

A window of a 3-D pool is a box, and the largest element (the average) of a box is the
largest (the average) over its depth of each depth slice's largest (average) over its
rectangle. So a 3-D pool is two 2-D pools: one over (H, W) of every depth slice, one with
a (kD, 1) window over (D, Ho Wo). Average pooling's divisors are products of one factor per
dimension (the window's length clipped to the padded input, or the count inside it), so
they split the same way; a ``divisor_override`` goes to the second pool, the first summing.
The first of equal maxima in (d, h, w) order is the first depth slice's first in (h, w):
the chosen element, and its index d H W + h W + w, are PyTorch's.

Adaptive max pooling (PyTorch's windows: output i of n covers inputs floor(i in / n) up to
ceil((i + 1) in / n)) works one dimension at a time: the windows' elements are picked with
one index_select (short windows repeat their last element, which changes no maximum) and
the largest taken with ``max(dim)``; the indices combine as for the 3-D pool.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...grad_mode import no_grad
from ...tensors.creation import tensor
from ...tensors.tensor import Tensor
from ..arguments import Sizes
from .pooling import AvgPool, MaxPool, adaptive_sizes, batched, pool_arguments
from ...autograd import autocast_hook


def max_pool3d(x: Tensor, kernel_size: int | Sizes, stride: int | Sizes | None = None, padding: int | Sizes = 0,
               dilation: int | Sizes = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """PyTorch's F.max_pool3d: (N, C, D, H, W) or (C, D, H, W); indices d H W + h W + w."""
    if autocast_hook.state.active:
        x, = autocast_hook.cast("max_pool3d", x)
    kernel, stride_, padding_, dilation_, out = pool_arguments("max_pool3d", x, 3, kernel_size, stride, padding,
                                                               dilation, ceil_mode)
    y = batched(x, 3)
    batch, channels, depth, height, width = y.shape
    planes, plane_indices = MaxPool.apply(y.reshape(batch, channels * depth, height, width), kernel[1:], stride_[1:],
                                          padding_[1:], dilation_[1:], out[1:])       # (N, C D, Ho, Wo)
    area = out[1] * out[2]
    values, depth_indices = MaxPool.apply(planes.reshape(batch, channels, depth, area), (kernel[0], 1),
                                          (stride_[0], 1), (padding_[0], 0), (dilation_[0], 1),
                                          (out[0], area))                             # (N, C, Do, Ho Wo)
    values = values.reshape((batch, channels) + out)
    if not return_indices:
        return values.squeeze(0) if x.ndim == 4 else values
    with no_grad():   # depth_indices = d (Ho Wo) + place in (Ho, Wo); the (H, W) index of that slice's choice
        chosen = plane_indices.reshape(batch, channels, depth * area).gather(
            2, depth_indices.reshape(batch, channels, out[0] * area))
        indices = ((depth_indices.reshape(batch, channels, -1) // area) * (height * width) + chosen)
        indices = indices.reshape((batch, channels) + out)
    if x.ndim == 4:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def avg_pool3d(x: Tensor, kernel_size: int | Sizes, stride: int | Sizes | None = None, padding: int | Sizes = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """PyTorch's F.avg_pool3d: (N, C, D, H, W) or (C, D, H, W)."""
    if autocast_hook.state.active:
        x, = autocast_hook.cast("avg_pool3d", x)
    kernel, stride_, padding_, _, out = pool_arguments("avg_pool3d", x, 3, kernel_size, stride, padding, 1,
                                                       ceil_mode)
    if divisor_override is not None and (not isinstance(divisor_override, int) or divisor_override == 0):
        raise ValueError(f"avg_pool3d: divisor_override must be a non-zero int or None, got {divisor_override!r}")
    y = batched(x, 3)
    batch, channels, depth, height, width = y.shape
    planes = AvgPool.apply(y.reshape(batch, channels * depth, height, width), kernel[1:], stride_[1:], padding_[1:],
                           out[1:], count_include_pad, None if divisor_override is None else 1)
    area = out[1] * out[2]
    values = AvgPool.apply(planes.reshape(batch, channels, depth, area), (kernel[0], 1), (stride_[0], 1),
                           (padding_[0], 0), (out[0], area), count_include_pad, divisor_override)
    values = values.reshape((batch, channels) + out)
    return values.squeeze(0) if x.ndim == 4 else values


def window_places(size: int, out: int) -> np.ndarray:
    """(out, K) int64: the input places of each adaptive window, the short ones repeating their last."""
    starts = np.array([(i * size) // out for i in range(out)])
    ends = np.array([-(-(i + 1) * size // out) for i in range(out)])
    longest = int((ends - starts).max())
    return np.minimum(starts[:, None] + np.arange(longest)[None, :], ends[:, None] - 1)


def _adaptive_max_along(x: Tensor, dim: int, out: int) -> tuple[Tensor, Tensor]:
    """(values, places) of the adaptive max along ``dim``: both x's shape with ``out`` at dim."""
    places = window_places(x.shape[dim], out)                                     # (out, K)
    picked = x.index_select(dim, tensor(places.reshape(-1), device=x.device))     # (.., out K, ..)
    picked = picked.reshape(x.shape[:dim] + places.shape + x.shape[dim + 1:])     # (.., out, K, ..)
    values, which = picked.max(dim=dim + 1)                                       # (.., out, ..)
    with no_grad():
        shape = [1] * x.ndim
        shape[dim] = out
        table = tensor(places, device=x.device)                                   # (out, K)
        starts = table[:, 0].reshape(shape)
        places_chosen = which + starts                                            # windows are contiguous runs
        places_chosen = places_chosen.minimum(table[:, -1].reshape(shape))
    return values, places_chosen


def adaptive_max_pool(op: str, dims: int, x: Tensor, output_size: int | Sequence[int | None] | None,
                      return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """PyTorch's F.adaptive_max_pool1d (dims 1) / 2d (dims 2); indices as max_pool's (h W + w)."""
    sizes = adaptive_sizes(op, dims, x, output_size)
    y = batched(x, dims)
    values, places = _adaptive_max_along(y, y.ndim - 1, sizes[-1])                # (N, C, H, Wo) for 2-D
    indices = places
    if dims == 2:
        values, rows = _adaptive_max_along(values, 2, sizes[0])                  # (N, C, Ho, Wo)
        with no_grad():
            indices = rows * y.shape[3] + places.gather(2, rows)
    if x.ndim == dims + 1:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values
