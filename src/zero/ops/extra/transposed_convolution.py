"""Transposed convolution as one op: conv_transpose1d and conv_transpose2d (3-D in
``convolution3d``).

    x (N, C, *in)  weight (C, O/groups, *kernel)  ->  out (N, O, *out),  per spatial dimension
    out = (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1
    out[n, o, p stride - padding + k dilation] += x[n, c, p] * weight[c, o', k]    (o' = o within its group)

It is the convolution's input gradient: the forward is ``conv2d_backward``'s grad_x (GEMM
weightᵀ @ x, then col2im) with x in the place of the convolution's output gradient, and
the backward is a forward convolution of grad with the same weight (grad_x) and the
convolution's weight gradient with x and grad swapped (grad_weight). The bias is added
after the op (one broadcast add, whose backward sums the gradient). 1-D runs as 2-D over
(N, C, 1, L) views, as the convolution does.
"""
from __future__ import annotations

from typing import Any

from ...autograd.op import Grads, Op
from ...errors import ShapeError, describe
from ...tensors.meta import Shape
from ...tensors.tensor import Tensor
from ..arguments import Sizes, check_floats
from .convolution import as_pair, int_tuple, planes
from ...autograd import autocast_hook

Ints = tuple[int, ...]


def transposed_size(size: int, kernel: int, stride: int, padding: int, output_padding: int, dilation: int) -> int:
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


class TransposedConvolution(Op):
    """conv_transpose1d and conv_transpose2d without bias; arguments checked by ``conv_transpose``."""

    def forward(self, x: Tensor, weight: Tensor, stride: Ints, padding: Ints, out_size: Shape, dilation: Ints,
                groups: int) -> Tensor:
        dims = x.ndim - 2
        out = Tensor._empty((x.shape[0], weight.shape[1] * groups) + out_size, x.dtype, x.device)   # (N, O, *out)
        self.arguments = (as_pair(stride, 1), as_pair(padding, 0), as_pair(dilation, 1), groups)
        x.device.kernels.conv2d_backward(planes(x._array, dims), None, planes(weight._array, dims), *self.arguments,
                                         planes(out._array, dims), None, None)
        need_x, need_weight = self.needs_input_grad[:2]
        self.shapes = (x.shape, weight.shape)
        self.save_for_backward(x if need_weight else None, weight if need_x else None)
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, weight = self.saved_tensors
        need_x, need_weight = self.needs_input_grad[:2]
        (x_shape, weight_shape), dims = self.shapes, len(self.shapes[0]) - 2
        device, dtype = grad.device, grad.dtype
        stride, padding, dilation, groups = self.arguments

        def plane(t: Tensor | None) -> Any:
            return None if t is None else planes(t._array, dims)

        grad_x = grad_weight = None
        if need_x:   # the convolution of grad with weight, its windows as many as x has places
            grad_x = Tensor._empty(x_shape, dtype, device)
            device.kernels.conv2d_forward(plane(grad), plane(weight), None, stride, padding, dilation, groups,
                                          plane(grad_x))
        if need_weight:   # the convolution's weight gradient, x as its output gradient and grad as its input
            grad_weight = Tensor._empty(weight_shape, dtype, device)
            device.kernels.conv2d_backward(plane(x), plane(grad), None, stride, padding, dilation, groups, None,
                                           plane(grad_weight), None)
        return grad_x, grad_weight, None, None, None, None, None


def transposed_arguments(op: str, dims: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: int | Sizes,
                         padding: int | Sizes, output_padding: int | Sizes, groups: int,
                         dilation: int | Sizes) -> tuple[Ints, Ints, Ints, Ints, Shape]:
    """The checks of conv_transpose{1,2,3}d on a batched x: (stride, padding, dilation,
    output_padding, out_size)."""
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ShapeError(f"{op}: groups must be a positive int, got {groups!r}")
    channels = weight.shape[0]
    if x.shape[1] != channels:
        raise ShapeError(f"{op}: input {describe(x)} has {x.shape[1]} channels, but weight {describe(weight)} "
                         f"expects {channels} (weight.shape[0])")
    if channels % groups:
        raise ShapeError(f"{op}: groups={groups} must divide the {channels} input channels of weight "
                         f"{describe(weight)}")
    out_channels = weight.shape[1] * groups
    if bias is not None and bias.shape != (out_channels,):
        raise ShapeError(f"{op}: bias must have shape [{out_channels}] (weight.shape[1] * groups), got "
                         f"{describe(bias)}")
    stride = int_tuple(op, "stride", stride, dims, 1)
    padding = int_tuple(op, "padding", padding, dims, 0)
    output_padding = int_tuple(op, "output_padding", output_padding, dims, 0)
    dilation = int_tuple(op, "dilation", dilation, dims, 1)
    for o, s, d in zip(output_padding, stride, dilation):
        if o >= s and o >= d:
            raise ShapeError(f"{op}: output padding must be smaller than either stride or dilation, got "
                             f"output_padding={list(output_padding)}, stride={list(stride)}, "
                             f"dilation={list(dilation)}")
    out_size = tuple(transposed_size(n, k, s, p, o, d) for n, k, s, p, o, d
                     in zip(x.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation))
    if min(out_size) < 1:
        raise ShapeError(f"{op}: the output would be empty ({list(out_size)}) for input {describe(x)}, weight "
                         f"{describe(weight)}, stride {list(stride)}, padding {list(padding)}")
    return stride, padding, dilation, output_padding, out_size


def check_transposed_input(op: str, dims: int, x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    check_floats(op, input=x, weight=weight, bias=bias)
    if x.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{op}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) input, "
                         f"got {describe(x)}")
    if weight.ndim != dims + 2:
        raise ShapeError(f"{op}: weight must be {dims + 2}-D (in_channels, out_channels/groups, "
                         f"{', '.join(['k'] * dims)}), got {describe(weight)}")


def with_bias(out: Tensor, bias: Tensor | None) -> Tensor:
    """out (N, O, *) + bias (O,) per channel."""
    return out if bias is None else out + bias.reshape((1, -1) + (1,) * (out.ndim - 2))


def conv_transpose(op: str, dims: int, x: Tensor, weight: Tensor, bias: Tensor | None = None,
                   stride: int | Sizes = 1, padding: int | Sizes = 0, output_padding: int | Sizes = 0,
                   groups: int = 1, dilation: int | Sizes = 1) -> Tensor:
    """PyTorch's F.conv_transpose1d (dims 1) and F.conv_transpose2d (dims 2); an unbatched
    input (C, *in) gives an unbatched output."""
    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast(op, x, weight, bias)
    check_transposed_input(op, dims, x, weight, bias)
    if x.ndim == dims + 1:
        return conv_transpose(op, dims, x.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                              dilation).squeeze(0)
    stride, padding, dilation, _, out_size = transposed_arguments(op, dims, x, weight, bias, stride, padding,
                                                                  output_padding, groups, dilation)
    return with_bias(TransposedConvolution.apply(x, weight, stride, padding, out_size, dilation, groups), bias)


def conv_transpose1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
                     padding: int | Sizes = 0, output_padding: int | Sizes = 0, groups: int = 1,
                     dilation: int | Sizes = 1) -> Tensor:
    return conv_transpose("conv_transpose1d", 1, x, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sizes = 1,
                     padding: int | Sizes = 0, output_padding: int | Sizes = 0, groups: int = 1,
                     dilation: int | Sizes = 1) -> Tensor:
    return conv_transpose("conv_transpose2d", 2, x, weight, bias, stride, padding, output_padding, groups, dilation)
