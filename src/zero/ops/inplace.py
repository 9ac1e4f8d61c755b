"""In-place updates: what optimizers and initialisers use.

They write into the tensor's own storage and are never recorded in the graph,
so they are refused on a tensor that requires grad while grad mode is on
(``Tensor._check_inplace``); optimizers run under ``no_grad``. Each write bumps
the storage's version, so a backward that saved the old values notices.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import DeviceError, DTypeError, ShapeError, describe
from ..random import default_generator
from ..tensors.tensor import Tensor
from .arguments import fill_value
from .broadcast import broadcast_shape_of
from .conversion import transfer_array


def _operand(target: Tensor, other, op: str):
    if isinstance(other, Tensor):
        if other._meta.device is not target._meta.device:
            raise DeviceError(f"{op}: operand on {other.device} for a tensor on {target.device}")
        if broadcast_shape_of(op, target, other) != target.shape:
            raise ShapeError(f"{op}: {describe(other)} does not broadcast to the target {describe(target)}")
        if other.dtype.category > target.dtype.category:
            raise DTypeError(f"{op}: result of dtype {other.dtype} cannot be written into {describe(target)}")
        return other._array
    if isinstance(other, (bool, int, float)) and dtypes.scalar_dtype(other).category > target.dtype.category:
        raise DTypeError(f"{op}: result of a Python {type(other).__name__} ({other!r}) cannot be written "
                         f"into {describe(target)}")
    return other


def _write(target: Tensor, op: str, kernel, other) -> Tensor:
    """target = kernel(target, other), written in place: ``kernel`` is a binary kernel of the
    target's device (``kernels.add``)."""
    target._check_inplace(op)
    kernel(target._array, _operand(target, other, op), target._array)
    target._bump_version()
    return target


def add_(target: Tensor, other, alpha=1) -> Tensor:
    if alpha != 1:
        if isinstance(other, Tensor):
            target._check_inplace("add_")
            other = other * alpha  # a temporary; optimizers use fused kernels instead
        else:
            other = other * alpha
    return _write(target, "add_", target._meta.device.kernels.add, other)


def mul_(target: Tensor, other) -> Tensor:
    return _write(target, "mul_", target._meta.device.kernels.mul, other)


def div_(target: Tensor, other) -> Tensor:
    if not target.dtype.is_floating_point:
        raise DTypeError(f"div_: true division cannot be written into {describe(target)}")
    return _write(target, "div_", target._meta.device.kernels.div, other)


def clamp_(target: Tensor, low=None, high=None) -> Tensor:
    target._check_inplace("clamp_")
    target._meta.device.kernels.clamp(target._array, low, high, target._array)
    target._bump_version()
    return target


def copy_(target: Tensor, src) -> Tensor:
    """Copy values (broadcast, converted to the target's dtype) from src, which may live on
    another device."""
    target._check_inplace("copy_")
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a tensor, got {type(src).__name__}")
    if broadcast_shape_of("copy_", target, src) != target.shape:
        raise ShapeError(f"copy_: {describe(src)} does not broadcast to the target {describe(target)}")
    if src._meta.device is not target._meta.device:
        source = transfer_array(src, target._meta.device)
    else:
        source = src._array
    target._meta.device.kernels.copy(source, target._array)
    target._bump_version()
    return target


def fill_(target: Tensor, value) -> Tensor:
    target._check_inplace("fill_")
    value = fill_value("fill_", value, target.dtype)
    target._meta.device.kernels.fill(target._array, value)
    target._bump_version()
    return target


def masked_fill_(target: Tensor, mask: Tensor, value) -> Tensor:
    target._check_inplace("masked_fill_")
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        raise DTypeError("masked_fill_: mask must be a bool tensor")
    if broadcast_shape_of("masked_fill_", target, mask) != target.shape:
        raise ShapeError(f"masked_fill_: mask {list(mask.shape)} must broadcast to {describe(target)}")
    value = fill_value("masked_fill_", value, target.dtype)
    target._meta.device.kernels.where(mask._array, value, target._array, target._array)
    target._bump_version()
    return target


def normal_(target: Tensor, mean=0.0, std=1.0, generator=None) -> Tensor:
    target._check_inplace("normal_")
    (generator or default_generator()).fill_normal(target, mean, std)
    target._bump_version()
    return target


def uniform_(target: Tensor, low=0.0, high=1.0, generator=None) -> Tensor:
    target._check_inplace("uniform_")
    (generator or default_generator()).fill_uniform(target, low, high)
    target._bump_version()
    return target
