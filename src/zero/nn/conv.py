"""Convolution layers: ``nn.Conv1d`` and ``nn.Conv2d``, PyTorch's modules on ``F.conv1d`` / ``F.conv2d``.

Parameters as PyTorch names and shapes them: ``weight`` (out_channels, in_channels/groups,
*kernel_size) and ``bias`` (out_channels,). Initialised as PyTorch's: the weight
kaiming-uniform with a = √5, which is uniform on ±1/√fan_in, and the bias uniform on
±1/√fan_in, with fan_in = in_channels/groups · prod(kernel_size).

``padding_mode`` other than "zeros" ("reflect", "replicate", "circular") pads the input
with ``F.pad`` first and convolves without padding, as PyTorch does.
"""
from __future__ import annotations

import math

from ..errors import ShapeValueError
from ..ops.extra.convolution import conv_padding, int_tuple
from ..tensors.creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    dims = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        name, dims = type(self).__name__, self.dims
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ShapeValueError(f"{name}: groups={groups} must divide in_channels={in_channels} and "
                                  f"out_channels={out_channels}")
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {PADDING_MODES}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = int_tuple(name, "kernel_size", kernel_size, dims, 1)
        self.stride = int_tuple(name, "stride", stride, dims, 1)
        self.dilation = int_tuple(name, "dilation", dilation, dims, 1)
        pads = conv_padding(name, padding, self.kernel_size, self.stride, self.dilation)   # checks it
        self.padding = padding if isinstance(padding, str) else tuple(before for before, _ in pads)
        self.padding_mode = padding_mode
        # F.pad's amounts for the other modes: (before, after) pairs from the last dimension backwards
        self._reversed_padding_repeated_twice = tuple(p for pair in reversed(pads) for p in pair)
        self.weight = Parameter(empty(out_channels, in_channels // groups, *self.kernel_size, device=device,
                                      dtype=dtype))
        self.bias = Parameter(empty(out_channels, device=device, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # PyTorch's default nonlinearity for kaiming_uniform_ is leaky_relu; named here, as
        # zero.nn.init defaults to relu (the book's He initialisation)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), nonlinearity="leaky_relu")
        if self.bias is not None:
            fan_in, _ = init.fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def _conv(self, x, weight, bias, padding):
        raise NotImplementedError

    def forward(self, x):
        if self.padding_mode != "zeros":
            x = F.pad(x, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._conv(x, self.weight, self.bias, 0)
        return self._conv(x, self.weight, self.bias, self.padding)

    def extra_repr(self) -> str:
        dims = self.dims
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * dims:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """(N, C_in, L) -> (N, C_out, L_out), or unbatched (C_in, L)."""

    dims = 1

    def _conv(self, x, weight, bias, padding):
        return F.conv1d(x, weight, bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """(N, C_in, H, W) -> (N, C_out, H_out, W_out), or unbatched (C_in, H, W)."""

    dims = 2

    def _conv(self, x, weight, bias, padding):
        return F.conv2d(x, weight, bias, self.stride, padding, self.dilation, self.groups)


class Conv3d(_ConvNd):
    """(N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out), or unbatched (C_in, D, H, W)."""

    dims = 3

    def _conv(self, x, weight, bias, padding):
        return F.conv3d(x, weight, bias, self.stride, padding, self.dilation, self.groups)
