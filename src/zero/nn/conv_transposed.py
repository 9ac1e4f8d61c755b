"""Transposed convolution layers: ``nn.ConvTranspose1d/2d/3d`` on ``F.conv_transpose1d/2d/3d``.

Parameters as PyTorch names and shapes them: ``weight`` (in_channels, out_channels/groups,
*kernel_size) and ``bias`` (out_channels,), initialised as the convolutions' are (their
``reset_parameters``): kaiming-uniform with a = √5 and a bias uniform on ±1/√fan_in, where
fan_in is computed from the weight's dimension 1, out_channels/groups · prod(kernel_size),
as PyTorch computes it for these layers too.

``forward(x, output_size=None)``: an ``output_size`` (the spatial sizes, optionally with the
batch and channel sizes in front) picks the output padding that gives it, one of the
``stride`` sizes that the same input can produce.
"""
from __future__ import annotations

from ..errors import ShapeValueError
from ..ops.extra.convolution import int_tuple
from ..ops.extra.transposed_convolution import transposed_size
from ..tensors.creation import empty
from . import functional as F
from .conv import _ConvNd
from .module import Module
from .parameter import Parameter


class _ConvTransposeNd(_ConvNd):
    dims = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        Module.__init__(self)
        name, dims = type(self).__name__, self.dims
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}, got {padding_mode!r}')
        if not isinstance(groups, int) or groups < 1 or in_channels % groups or out_channels % groups:
            raise ShapeValueError(f"{name}: groups={groups} must divide in_channels={in_channels} and "
                                  f"out_channels={out_channels}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = int_tuple(name, "kernel_size", kernel_size, dims, 1)
        self.stride = int_tuple(name, "stride", stride, dims, 1)
        self.padding = int_tuple(name, "padding", padding, dims, 0)
        self.output_padding = int_tuple(name, "output_padding", output_padding, dims, 0)
        self.dilation = int_tuple(name, "dilation", dilation, dims, 1)
        self.padding_mode = padding_mode
        self.weight = Parameter(empty(in_channels, out_channels // groups, *self.kernel_size, device=device,
                                      dtype=dtype))
        self.bias = Parameter(empty(out_channels, device=device, dtype=dtype)) if bias else None
        self.reset_parameters()

    def _output_padding(self, x, output_size) -> tuple[int, ...]:
        """The output padding that makes the output ``output_size`` (None: the layer's own)."""
        if output_size is None:
            return self.output_padding
        dims, name = self.dims, type(self).__name__
        sizes = tuple(output_size)
        if len(sizes) == dims + 2:
            sizes = sizes[2:]
        if len(sizes) != dims:
            raise ValueError(f"{name}: output_size must have {dims} or {dims + 2} elements (got {len(sizes)})")
        padding = []
        for axis, size in enumerate(sizes):
            n = x.shape[x.ndim - dims + axis]
            smallest = transposed_size(n, self.kernel_size[axis], self.stride[axis], int(self.padding[axis]), 0,
                                       self.dilation[axis])
            largest = smallest + self.stride[axis] - 1
            if not smallest <= size <= largest:
                raise ValueError(f"{name}: requested an output size of {list(sizes)}, but valid sizes range from "
                                 f"{smallest} to {largest} (for an input of {list(x.shape[x.ndim - dims:])})")
            padding.append(size - smallest)
        return tuple(padding)

    def forward(self, x, output_size=None):
        return self._transposed(x, self._output_padding(x, output_size))

    def _transposed(self, x, output_padding):
        raise NotImplementedError   # each subclass's

    def extra_repr(self) -> str:
        dims = self.dims
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class ConvTranspose1d(_ConvTransposeNd):
    """(N, C_in, L) -> (N, C_out, L_out), or unbatched (C_in, L)."""

    dims = 1

    def _transposed(self, x, output_padding):
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """(N, C_in, H, W) -> (N, C_out, H_out, W_out), or unbatched (C_in, H, W)."""

    dims = 2

    def _transposed(self, x, output_padding):
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                  self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """(N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out), or unbatched (C_in, D, H, W)."""

    dims = 3

    def _transposed(self, x, output_padding):
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                  self.dilation)
