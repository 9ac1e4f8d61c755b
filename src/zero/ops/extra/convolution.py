"""Convolution as one op: conv1d and conv2d (PyTorch's cross-correlation).

    x (N, C, *in)  weight (O, C/groups, *kernel)  bias (O,)  ->  out (N, O, *out)
    out = floor((in + before + after - dilation (kernel - 1) - 1) / stride) + 1    per spatial dim
    out[n, o, p] = bias[o] + sum over c, k of weight[o, c, k] * x[n, g C/groups + c, p stride - before + k dilation]

(x read as 0 in the padding; g is the group of output channel o). Backward:

    grad_x      = the transposed convolution of grad with the same weight
    grad_weight = sum over n and p of grad[n, o, p] * x[n, c, p stride - before + k dilation]
    grad_bias   = sum of grad over n and p

The kernels are 2-D (``conv2d_forward``, ``conv2d_backward``: im2col and GEMMs); a 1-D
convolution runs as a 2-D one over the (N, C, 1, L) view of its arrays, so one op class
serves both. ``padding`` may be a number per dimension, ``"valid"`` (none) or ``"same"``
(output as long as the input, stride 1 only: dilation (kernel - 1) zeros, the extra one of
an odd count after the input, as PyTorch places it).
"""
from __future__ import annotations

from typing import Any

from ...autograd.op import Grads, Op
from ...errors import ShapeError, ShapeValueError, describe
from ...tensors.meta import Shape
from ...tensors.tensor import Tensor
from ..arguments import Sizes, array_or_none, check_floats
from ...autograd import autocast_hook

Padding = tuple[tuple[int, int], ...]  # (before, after) per spatial dimension


def int_tuple(op: str, name: str, value: int | Sizes, dims: int, low: int) -> tuple[int, ...]:
    """An int (repeated for every spatial dimension) or ``dims`` ints, each at least ``low``,
    as a tuple; ShapeError naming ``op`` and the argument otherwise."""
    values = (value,) * dims if isinstance(value, int) else tuple(value) if isinstance(value, (tuple, list)) else None
    if values is None or len(values) != dims or not all(isinstance(v, int) and not isinstance(v, bool)
                                                       for v in values):
        raise ShapeError(f"{op}: {name} must be an int or {dims} ints (one per spatial dimension), got {value!r}")
    if any(v < low for v in values):
        raise ShapeError(f"{op}: {name} must be at least {low}, got {value!r}")
    return values


def planes(array: Any, dims: int) -> Any:
    """A (N, C, L) array as the (N, C, 1, L) view the 2-D kernels take (dims 2: the array)."""
    return array if dims == 2 else array[:, :, None, :]


def as_pair(values: tuple[int, ...], fill: int) -> tuple[int, ...]:
    """A 1-D argument (v,) as the 2-D kernels' (fill, v); a 2-D one unchanged."""
    return values if len(values) == 2 else (fill,) + values


def conv_padding(op: str, padding: str | int | Sizes, kernel: Shape, stride: tuple[int, ...],
                 dilation: tuple[int, ...]) -> Padding:
    """((before, after), ...) per spatial dimension, from an int, ints, "valid" or "same"."""
    if padding == "valid":
        return tuple((0, 0) for _ in kernel)
    if padding == "same":
        if any(s != 1 for s in stride):
            raise ShapeValueError(f"{op}: padding='same' is not supported for strided convolutions "
                                  f"(stride={list(stride)}); pad explicitly instead")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        raise ShapeValueError(f"{op}: padding must be 'valid', 'same', an int or {len(kernel)} ints, got {padding!r}")
    return tuple((p, p) for p in int_tuple(op, "padding", padding, len(kernel), 0))


class Convolution(Op):
    """conv1d and conv2d; the arguments come checked and as tuples from ``convolution``."""

    def forward(self, x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...], padding: Padding,
                dilation: tuple[int, ...], groups: int) -> Tensor:
        # padding: ((before, after), ...) per spatial dimension
        dims = x.ndim - 2
        out_size = tuple((n + before + after - d * (k - 1) - 1) // s + 1 for n, k, s, (before, after), d
                         in zip(x.shape[2:], weight.shape[2:], stride, padding, dilation))
        out = Tensor._empty((x.shape[0], weight.shape[0]) + out_size, x.dtype, x.device)   # (N, O, *out)
        self.arguments = (as_pair(stride, 1), as_pair(tuple(before for before, _ in padding), 0),
                          as_pair(dilation, 1), groups)
        x.device.kernels.conv2d_forward(planes(x._array, dims), planes(weight._array, dims), array_or_none(bias),
                                        *self.arguments, planes(out._array, dims))
        need_x, need_weight = self.needs_input_grad[:2]
        self.save_for_backward(x if need_weight else None, weight if need_x else None)
        self.shapes = (x.shape, weight.shape)
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, weight = self.saved_tensors
        need_x, need_weight, need_bias = self.needs_input_grad[:3]
        (x_shape, weight_shape), dims = self.shapes, len(self.shapes[0]) - 2
        device, dtype = grad.device, grad.dtype
        grad_x = Tensor._empty(x_shape, dtype, device) if need_x else None
        grad_weight = Tensor._empty(weight_shape, dtype, device) if need_weight else None
        grad_bias = Tensor._empty((weight_shape[0],), dtype, device) if need_bias else None

        def arrays(*tensors: Tensor | None) -> list[Any]:
            return [None if t is None else planes(t._array, dims) for t in tensors]

        grad_planes, x_planes, weight_planes, grad_x_planes, grad_weight_planes = arrays(grad, x, weight, grad_x,
                                                                                         grad_weight)
        stride, padding, dilation, groups = self.arguments
        device.kernels.conv2d_backward(grad_planes, x_planes, weight_planes, stride, padding, dilation, groups,
                                       grad_x_planes, grad_weight_planes, array_or_none(grad_bias))
        return grad_x, grad_weight, grad_bias, None, None, None, None


def convolution(op: str, dims: int, x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
                padding: str | int | Sizes = 0, dilation: int | Sizes = 1, groups: int = 1) -> Tensor:
    """PyTorch's F.conv1d (dims 1) and F.conv2d (dims 2): checks, then the op. An unbatched
    input (C, *in) gives an unbatched output."""
    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast(op, x, weight, bias)
    check_floats(op, input=x, weight=weight, bias=bias)
    if x.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{op}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) input, "
                         f"got {describe(x)}")
    if weight.ndim != dims + 2:
        raise ShapeError(f"{op}: weight must be {dims + 2}-D (out_channels, in_channels/groups, "
                         f"{', '.join(['k'] * dims)}), got {describe(weight)}")
    if x.ndim == dims + 1:
        return convolution(op, dims, x.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    if not isinstance(groups, int) or groups < 1:
        raise ShapeError(f"{op}: groups must be a positive int, got {groups!r}")
    out_channels, channels = weight.shape[0], weight.shape[1] * groups
    if out_channels % groups:
        raise ShapeError(f"{op}: groups={groups} must divide the {out_channels} output channels of weight "
                         f"{describe(weight)}")
    if x.shape[1] != channels:
        raise ShapeError(f"{op}: input {describe(x)} has {x.shape[1]} channels, but weight {describe(weight)} with "
                         f"groups={groups} expects {channels} (weight.shape[1] * groups)")
    if bias is not None and bias.shape != (out_channels,):
        raise ShapeError(f"{op}: bias must have shape [{out_channels}] (one per output channel of weight "
                         f"{describe(weight)}), got {describe(bias)}")
    stride = int_tuple(op, "stride", stride, dims, 1)
    dilation = int_tuple(op, "dilation", dilation, dims, 1)
    kernel = weight.shape[2:]
    pads = conv_padding(op, padding, kernel, stride, dilation)
    for n, k, d, (before, after) in zip(x.shape[2:], kernel, dilation, pads):
        if n + before + after < d * (k - 1) + 1:
            raise ShapeError(f"{op}: the kernel {list(kernel)} (dilation {list(dilation)}) is larger than the "
                             f"padded input: {describe(x)} with padding {padding!r}")
    return Convolution.apply(x, weight, bias, stride, pads, dilation, groups)


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
           padding: str | int | Sizes = 0, dilation: int | Sizes = 1, groups: int = 1) -> Tensor:
    return convolution("conv1d", 1, x, weight, bias, stride, padding, dilation, groups)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
           padding: str | int | Sizes = 0, dilation: int | Sizes = 1, groups: int = 1) -> Tensor:
    return convolution("conv2d", 2, x, weight, bias, stride, padding, dilation, groups)
