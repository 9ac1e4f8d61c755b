"""3-D convolution and transposed convolution, as the 2-D ops plus an unfold / fold along depth.

conv3d: the depth windows are unfolded first (each depth window's kD slices become kD times
the channels), then one 2-D convolution over all (image, output depth) pairs does the rest:

    x (N, C, D, H, W) -> unfold along D: (N, C kD, Do, H, W) -> (N Do, C kD, H, W)
    weight (O, C/g, kD, kH, kW) as (O, C/g kD, kH, kW)   (a view; groups stay contiguous)
    conv2d -> (N Do, O, Ho, Wo) -> (N, O, Do, Ho, Wo)

conv_transpose3d: the 2-D transposed convolution of each input depth slice with the weight
seen as (C, O/g kD, kH, kW) gives every slice's contribution to each of its kD output
depths; fold along depth adds them where they land:

    x (N, C, D, H, W) -> (N D, C, H, W) -> conv_transpose2d: (N D, O kD, Ho, Wo)
    -> (N, O Ho Wo kD, D) -> fold along depth: (N, O Ho Wo, Do) -> (N, O, Do, Ho, Wo)

Every step is an op with its backward (unfold/fold, the 2-D convolutions, views, permutes),
so the gradients follow. The depth unfold costs kD copies of the input.
"""
from __future__ import annotations

from ...errors import ShapeError, describe
from ...tensors.tensor import Tensor
from ..arguments import Sizes, check_floats
from .convolution import Convolution, conv_padding, int_tuple
from .fold import Unfold, fold_blocks
from .rearrange import pad
from .transposed_convolution import (TransposedConvolution, check_transposed_input, transposed_arguments,
                                     with_bias)
from ...autograd import autocast_hook


def conv3d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
           padding: str | int | Sizes = 0, dilation: int | Sizes = 1, groups: int = 1) -> Tensor:
    """PyTorch's F.conv3d: (N, C, D, H, W) x (O, C/groups, kD, kH, kW) -> (N, O, Do, Ho, Wo),
    or unbatched (C, D, H, W)."""
    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast("conv3d", x, weight, bias)
    op = "conv3d"
    check_floats(op, input=x, weight=weight, bias=bias)
    if x.ndim not in (4, 5):
        raise ShapeError(f"{op}: expected a 4-D (unbatched) or 5-D (batched) input, got {describe(x)}")
    if weight.ndim != 5:
        raise ShapeError(f"{op}: weight must be 5-D (out_channels, in_channels/groups, kD, kH, kW), got "
                         f"{describe(weight)}")
    if x.ndim == 4:
        return conv3d(x.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ShapeError(f"{op}: groups must be a positive int, got {groups!r}")
    out_channels, in_per_group = weight.shape[:2]
    if out_channels % groups:
        raise ShapeError(f"{op}: groups={groups} must divide the {out_channels} output channels of weight "
                         f"{describe(weight)}")
    if x.shape[1] != in_per_group * groups:
        raise ShapeError(f"{op}: input {describe(x)} has {x.shape[1]} channels, but weight {describe(weight)} with "
                         f"groups={groups} expects {in_per_group * groups} (weight.shape[1] * groups)")
    if bias is not None and bias.shape != (out_channels,):
        raise ShapeError(f"{op}: bias must have shape [{out_channels}], got {describe(bias)}")
    stride_ = int_tuple(op, "stride", stride, 3, 1)
    dilation_ = int_tuple(op, "dilation", dilation, 3, 1)
    kernel = weight.shape[2:]
    pads = conv_padding(op, padding, kernel, stride_, dilation_)
    for n, k, d, (before, after) in zip(x.shape[2:], kernel, dilation_, pads):
        if n + before + after < d * (k - 1) + 1:
            raise ShapeError(f"{op}: the kernel {list(kernel)} (dilation {list(dilation_)}) is larger than the "
                             f"padded input: {describe(x)} with padding {padding!r}")
    (depth_before, depth_after), (kernel_d, kernel_h, kernel_w) = pads[0], kernel
    if depth_before != depth_after:   # "same" with an odd total: pad depth explicitly
        x, depth_before = pad(x, (0, 0, 0, 0, depth_before, depth_after)), 0
    batch, channels, depth, height, width = x.shape
    cols = Unfold.apply(x.reshape(batch, channels, depth, height * width), (kernel_d, 1), (stride_[0], 1),
                        (depth_before, 0), (dilation_[0], 1))                   # (N, C kD, Do H W)
    out_depth = cols.shape[2] // (height * width)
    slices = (cols.reshape(batch, channels * kernel_d, out_depth, height, width).permute(0, 2, 1, 3, 4)
              .reshape(batch * out_depth, channels * kernel_d, height, width))  # (N Do, C kD, H, W)
    planar = weight.reshape(out_channels, in_per_group * kernel_d, kernel_h, kernel_w)
    out = Convolution.apply(slices, planar, bias, stride_[1:], pads[1:], dilation_[1:], groups)   # (N Do, O, Ho, Wo)
    return out.reshape((batch, out_depth) + out.shape[1:]).permute(0, 2, 1, 3, 4).contiguous()


def conv_transpose3d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
                     padding: int | Sizes = 0, output_padding: int | Sizes = 0, groups: int = 1,
                     dilation: int | Sizes = 1) -> Tensor:
    """PyTorch's F.conv_transpose3d: (N, C, D, H, W) x (C, O/groups, kD, kH, kW) -> (N, O, Do, Ho, Wo),
    or unbatched (C, D, H, W)."""
    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast("conv_transpose3d", x, weight, bias)
    op = "conv_transpose3d"
    check_transposed_input(op, 3, x, weight, bias)
    if x.ndim == 4:
        return conv_transpose3d(x.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    stride_, padding_, dilation_, _, out_size = transposed_arguments(op, 3, x, weight, bias, stride, padding,
                                                                     output_padding, groups, dilation)
    batch, channels, depth, height, width = x.shape
    per_group, kernel_d, kernel_h, kernel_w = weight.shape[1:]
    out_channels = per_group * groups
    slices = x.permute(0, 2, 1, 3, 4).reshape(batch * depth, channels, height, width)     # (N D, C, H, W)
    planar = weight.reshape(channels, per_group * kernel_d, kernel_h, kernel_w)
    spread = TransposedConvolution.apply(slices, planar, stride_[1:], padding_[1:], out_size[1:], dilation_[1:],
                                         groups)                                        # (N D, O kD, Ho, Wo)
    out_h, out_w = out_size[1:]
    spread = (spread.reshape(batch, depth, out_channels, kernel_d, out_h, out_w).permute(0, 2, 4, 5, 3, 1)
              .reshape(batch, out_channels * out_h * out_w * kernel_d, depth))           # (N, O Ho Wo kD, D)
    out = fold_blocks(spread, (out_size[0], 1), (kernel_d, 1), (stride_[0], 1), (padding_[0], 0),
                      (dilation_[0], 1), (depth, 1))                                     # (N, O Ho Wo, Do, 1)
    out = out.reshape(batch, out_channels, out_h, out_w, out_size[0]).permute(0, 1, 4, 2, 3).contiguous()
    return with_bias(out, bias)
