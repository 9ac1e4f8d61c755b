"""PyTorch's other normalisations, built on the layer-norm op and basic ops.

    group_norm(x, G)        x (N, C, *) as (N, G, C/G · *): each row normalised (the layer-norm
                            op over its last dimension), then per channel  · weight[c] + bias[c]
    instance_norm(x)        x (N, C, *) as (N·C, *): each (sample, channel) plane normalised the
                            same way; running statistics (C,) updated in place when given
    rms_norm(x, shape)      x / sqrt(mean(x², over the trailing ``shape``) + eps) · weight
    normalize(x, p, dim)    x / max(||x||_p over dim, eps)
    local_response_norm     x / (k + alpha/size · sum of x² over ``size`` neighbouring channels)^beta

Group and instance norm compute what the layer-norm op computes (biased variance, eps inside
the square root) over a reshaped view, so they share its one-pass forward and backward; the
per-channel affine is a broadcast multiply-add.
"""
from __future__ import annotations

from collections.abc import Iterable

from ...dtypes import finfo
from ...errors import DTypeError, ShapeError, describe
from ...grad_mode import no_grad
from ...tensors.tensor import Tensor
from ..normalization import layer_norm, normalized_shape_of
from .norms import vector_norm
from .rearrange import pad
from ...autograd import autocast_hook


def _channel_affine(out: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """out (N, C, *) scaled and shifted per channel by weight, bias (C,)."""
    broadcast = (1, out.shape[1]) + (1,) * (out.ndim - 2)                 # (1, C, 1, ...)
    if weight is not None:
        out = out * weight.reshape(broadcast)
    if bias is not None:
        out = out + bias.reshape(broadcast)
    return out


def _check_floating(op: str, x: Tensor, least_ndim: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {describe(x)}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point input, got {describe(x)}")
    if x.ndim < least_ndim:
        raise ShapeError(f"{op}: expected an input with at least {least_ndim} dimensions (N, C, ...), "
                         f"got {describe(x)}")


def _check_channel_parameter(op: str, name: str, t: Tensor | None, channels: int) -> None:
    if t is not None and (not isinstance(t, Tensor) or t.shape != (channels,)):
        raise ShapeError(f"{op}: {name} must be a tensor [{channels}] (one per channel), got {describe(t)}")


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    if autocast_hook.state.active:
        input, weight, bias = autocast_hook.cast("group_norm", input, weight, bias)
    _check_floating("group_norm", input, 2)
    if weight is not None and weight._meta.dtype is not input._meta.dtype and input._meta.dtype.itemsize == 2:
        # a 16-bit input with float32 parameters: in float32, the result in the input's dtype, as PyTorch's
        return group_norm(input.float(), num_groups, weight, bias, eps).to(input._meta.dtype)
    batch, channels = input.shape[0], input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise ShapeError(f"group_norm: the number of channels must be divisible by num_groups, got input "
                         f"{describe(input)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        _check_channel_parameter("group_norm", name, t, channels)
    width = input.numel() // (batch * num_groups) if batch else 0
    grouped = input.reshape(batch, num_groups, width)                     # (N, G, C/G · *)
    out = layer_norm(grouped, (width,), None, None, eps).reshape(input.shape)
    return _channel_affine(out, weight, bias)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None, bias: Tensor | None = None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    _check_floating("instance_norm", input, 2)
    batch, channels = input.shape[0], input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        _check_channel_parameter("instance_norm", name, t, channels)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
        broadcast = (1, channels) + (1,) * (input.ndim - 2)
        out = (input - running_mean.reshape(broadcast)) / (running_var.reshape(broadcast) + eps).sqrt()
        return _channel_affine(out, weight, bias)
    width = input.numel() // (batch * channels) if batch * channels else 0
    if width <= 1 and input.numel():
        raise ShapeError(f"instance_norm: expected more than 1 spatial element when training, got input "
                         f"{describe(input)}")
    planes = input.reshape(batch * channels, width)                       # (N·C, *)
    if running_mean is not None or running_var is not None:
        with no_grad():                 # each plane's statistics, averaged over the batch
            plane_mean = planes.detach().mean(1)                          # (N·C,)
            plane_var = planes.detach().var(1, correction=1)              # unbiased, as PyTorch keeps it
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(plane_mean.reshape(batch, channels).mean(0) * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(plane_var.reshape(batch, channels).mean(0) * momentum)
    out = layer_norm(planes, (width,), None, None, eps).reshape(input.shape)
    return _channel_affine(out, weight, bias)


def rms_norm(input: Tensor, normalized_shape: int | Iterable[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        raise DTypeError(f"rms_norm: needs a floating-point tensor, got {describe(input)}")
    shape = normalized_shape_of(normalized_shape)
    if not shape or len(shape) > input.ndim or input.shape[input.ndim - len(shape):] != shape:
        raise ShapeError(f"rms_norm: normalized_shape {list(shape)} must be the last dimension(s) of the "
                         f"input, got {describe(input)}")
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != shape):
        raise ShapeError(f"rms_norm: weight must have shape {list(shape)} (normalized_shape), got "
                         f"{describe(weight)}")
    if eps is None:
        eps = finfo(input.dtype).eps
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("normalize", input)
    if not isinstance(input, Tensor):
        raise TypeError(f"normalize: expected a tensor, got {describe(input)}")
    denominator = vector_norm(input, p, dim, keepdim=True).clamp_min(eps)
    result = input / denominator
    if out is not None:
        out.copy_(result)
        return out
    return result


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    if not isinstance(input, Tensor) or input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected a 3-D or higher input (N, C, ...), got "
                         f"{describe(input)}")
    if input.numel() == 0:
        return input.clone()
    channels = input.shape[1]
    trailing = input.ndim - 2
    squares = pad(input * input, [0, 0] * trailing + [size // 2, (size - 1) // 2])   # (N, C + size - 1, *)
    window = squares.narrow(1, 0, channels)
    for shift in range(1, size):
        window = window + squares.narrow(1, shift, channels)              # sum of size neighbours
    return input / (window * (alpha / size) + k) ** beta
