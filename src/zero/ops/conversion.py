"""Copies and conversions: contiguous copies, dtype casts and device transfers.

    Copy       a contiguous copy (``clone``, ``contiguous``, a reshape that cannot be a view)
    Cast       another dtype; the gradient is cast back
    ToDevice   another device (the book's ``DeviceTransfer``); the gradient goes back

``to(t, ...)`` reads ``Tensor.to``'s arguments (a device, a dtype, both, or another
tensor) and applies the ops it needs, none when nothing changes; the methods that are
conversions (``x.clone()``, ``x.float()``, ``x.cpu()`` ...) are at the end of the file.
"""
from __future__ import annotations

from typing import Any

from .. import dtypes
from ..autograd.op import Grads, Op
from ..backends.device import Device, to_device
from ..dtypes import DType, DTypeLike
from ..tensors.tensor import Tensor


class Copy(Op):
    """A contiguous copy with the same values, dtype and device."""

    def forward(self, x: Tensor) -> Tensor:
        out = Tensor._empty(x._meta.shape, x._meta.dtype, x._meta.device)
        x._meta.device.kernels.copy(x._array, out._array)
        return out

    def backward(self, grad: Tensor) -> Grads:
        return (grad,)


class Cast(Op):
    """Convert to another dtype; the gradient is converted back."""

    def forward(self, x: Tensor, dtype: DType) -> Tensor:
        self.in_dtype = x._meta.dtype
        out = Tensor._empty(x._meta.shape, dtype, x._meta.device)
        x._meta.device.kernels.copy(x._array, out._array)
        return out

    def backward(self, grad: Tensor) -> Grads:
        return (grad.to(self.in_dtype) if self.in_dtype.is_floating_point else None, None)


class ToDevice(Op):
    """Copy to another device (the book's DeviceTransfer); the gradient goes back."""

    def forward(self, x: Tensor, device: Device) -> Tensor:
        self.source = x._meta.device
        out = Tensor._empty(x._meta.shape, x._meta.dtype, device)
        device.kernels.copy(transfer_array(x, device), out._array)
        return out

    def backward(self, grad: Tensor) -> Grads:
        return (ToDevice.apply(grad, self.source), None)


def transfer_array(x: Tensor, device: Device) -> Any:
    """x's values as an array of ``device``'s kind (through host memory)."""
    return device.backend.from_numpy(x._host_array())


def to_dtype(x: Tensor, dtype: DTypeLike) -> Tensor:
    """``x`` converted to ``dtype`` (``x`` itself when it already has it)."""
    dtype = dtypes.to_dtype(dtype)
    if dtype is x._meta.dtype:
        return x
    return Cast.apply(x, dtype)


def parse_to_args(*args: Tensor | Device | DTypeLike, device: Device | str | None = None,
                  dtype: DTypeLike | None = None, copy: bool = False,
                  non_blocking: bool = False) -> tuple[Device | None, DType | None]:
    """The (device, dtype) named by ``to``'s arguments: a device, a dtype, both, or a tensor."""
    for arg in args:
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, Device)) and (isinstance(arg, Device) or not dtypes.is_dtype_name(arg)):
            device = arg
        else:
            dtype = arg
    return (None if device is None else to_device(device)), (None if dtype is None else dtypes.to_dtype(dtype))


def to(t: Tensor, *args: Tensor | Device | DTypeLike, copy: bool = False, **kwargs: Any) -> Tensor:
    """``t.to(device)``, ``t.to(dtype)``, ``t.to(device, dtype)``, ``t.to(other_tensor)``."""
    device, dtype = parse_to_args(*args, **kwargs)
    result = t
    if device is not None and device is not t._meta.device:
        result = ToDevice.apply(result, device)
    if dtype is not None:
        result = to_dtype(result, dtype)
    if copy and result is t:
        result = Copy.apply(t)
    return result


# -- the methods that copy or convert (x.clone(), x.float() ... through ops/tensor_methods.py) ----


def clone(input: Tensor) -> Tensor:
    """A contiguous copy, in the graph (``zero.clone`` too)."""
    return Copy.apply(input)


def contiguous(input: Tensor) -> Tensor:
    """The tensor itself when its elements are laid out in order, else a contiguous copy."""
    return input if input.is_contiguous() else Copy.apply(input)


def cpu(input: Tensor) -> Tensor:
    return to(input, "cpu")


def cuda(input: Tensor, device: Device | str | int | None = None) -> Tensor:
    return to(input, "cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}")


def type_as(input: Tensor, other: Tensor) -> Tensor:
    return to_dtype(input, other.dtype)


def to_float32(input: Tensor) -> Tensor:
    """``x.float()``."""
    return to_dtype(input, dtypes.float32)


def to_float64(input: Tensor) -> Tensor:
    """``x.double()``."""
    return to_dtype(input, dtypes.float64)


def to_float16(input: Tensor) -> Tensor:
    """``x.half()``."""
    return to_dtype(input, dtypes.float16)


def to_bfloat16(input: Tensor) -> Tensor:
    """``x.bfloat16()``."""
    return to_dtype(input, dtypes.bfloat16)


def to_int64(input: Tensor) -> Tensor:
    """``x.long()``."""
    return to_dtype(input, dtypes.int64)


def to_int32(input: Tensor) -> Tensor:
    """``x.int()``."""
    return to_dtype(input, dtypes.int32)


def to_int16(input: Tensor) -> Tensor:
    """``x.short()``."""
    return to_dtype(input, dtypes.int16)


def to_int8(input: Tensor) -> Tensor:
    """``x.char()``."""
    return to_dtype(input, dtypes.int8)


def to_uint8(input: Tensor) -> Tensor:
    """``x.byte()``."""
    return to_dtype(input, dtypes.uint8)


def to_bool(input: Tensor) -> Tensor:
    """``x.bool()``."""
    return to_dtype(input, dtypes.bool_)
