"""In-place updates: ``x.add_(y)``, ``x += y``, ``x[idx] = v``, ``x.relu_()`` ...

Outside the graph -- grad mode off (optimizers, initialisers), or no operand requiring
grad -- an in-place op is one kernel writing into the tensor's own storage.

Inside the graph it is recorded as PyTorch records it. The op is computed out of place
from a snapshot of the tensor's current value (a recorded copy, so its history carries
on), the result is written into the storage, and the tensor takes the result's history
as its own: later ops see the new value and its gradient flows through the in-place op
to the old value. When the tensor is a view, its *base* is rebased instead: its new
history is ``CopySlices`` -- the old base outside the view, the result inside -- and the
view's own history is the view of that (other views of the base pick the new history
up when next used: ``autograd.op.refresh_view``).

Every write bumps the storage's version. A tensor an op saved for backward and that was
overwritten since makes that backward raise ("modified by an inplace operation"). What
stays refused, as in PyTorch: an in-place op on a leaf that requires grad (or a view of
one) while grad mode is on, and on a view where several elements share one memory
location (an expanded tensor).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from .. import dtypes
from ..autograd.op import Grads, Op, is_cpu_scalar
from ..errors import DeviceError, DTypeError, InPlaceError, ShapeError, ValueRangeError, describe
from ..grad_mode import _state, no_grad
from ..random import Generator, default_generator
from ..tensors.creation import full_like, zeros_like
from ..tensors.tensor import Tensor
from .arguments import Number, Operand, fill_value
from .broadcast import broadcast_shape_of
from .conversion import Copy, transfer_array
from .elementwise import Relu, Where
from .selection import MaskedFill, clamp

if TYPE_CHECKING:
    from .views import ViewStep

P = ParamSpec("P")


def _operand(target: Tensor, other: Operand, op: str) -> Any:
    """What the kernel writing into ``target`` takes for ``other``: its array, or a number."""
    if isinstance(other, Tensor):
        elsewhere = other._meta.device is not target._meta.device
        if elsewhere and not is_cpu_scalar(other):
            raise DeviceError(f"{op}: operand on {other.device} for a tensor on {target.device}")
        if broadcast_shape_of(op, target, other) != target.shape:
            raise ShapeError(f"{op}: {describe(other)} does not broadcast to the target {describe(target)}")
        if other.dtype.category > target.dtype.category:
            raise DTypeError(f"{op}: result of dtype {other.dtype} cannot be written into {describe(target)}")
        return other.item() if elsewhere else other._array
    if isinstance(other, (bool, int, float)) and dtypes.scalar_dtype(other).category > target.dtype.category:
        raise DTypeError(f"{op}: result of a Python {type(other).__name__} ({other!r}) cannot be written "
                         f"into {describe(target)}")
    return other


def modify(target: Tensor, op: str, operands: tuple[object, ...], write: Callable[[], object],
           compute: Callable[[Tensor], Tensor]) -> Tensor:
    """Update ``target`` in place. ``write()`` is the kernel write, for when no graph is
    recorded; ``compute(snapshot)`` gives the new value out of place, with its history,
    from the target's current value -- for when one is."""
    _check_writable(target, op)
    tracked = target._meta.dtype.is_floating_point and _state.enabled and (
        target._requires_grad or any(isinstance(t, Tensor) and t._requires_grad for t in operands))
    if not tracked:
        write()
        target._bump_version()
        return target
    _check_not_a_leaf(target, op)
    snapshot = Copy.apply(target) if target._requires_grad else target.detach()
    result = compute(snapshot)
    if result._meta.dtype is not target._meta.dtype:
        result = result.to(target._meta.dtype)
    if result._meta.shape != target._meta.shape:
        result = result.expand(target._meta.shape)
    target._meta.device.kernels.copy(result._array, target._array)
    target._bump_version()
    _take_history(target, result)
    return target


def _check_writable(target: Tensor, op: str) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {describe(target)}")
    if any(stride == 0 and size > 1 for size, stride in zip(target._meta.shape, target._meta.strides)):
        raise InPlaceError(f"{op}: more than one element of {describe(target)} refers to a single memory "
                           "location (an expanded tensor); clone() it before writing into it")


def _check_not_a_leaf(target: Tensor, op: str) -> None:
    base = target._view_of[0] if target._view_of is not None else None
    for t, what in ((target, "a leaf tensor"), (base, "a view of a leaf tensor")):
        if t is not None and t.grad_fn is None and t._requires_grad:
            raise InPlaceError(f"{op}: {what} that requires grad ({describe(t)}) is used in an in-place "
                               "operation; wrap it in `with zero.no_grad():` (as optimizers do) or work on "
                               "a clone()")


def _take_history(target: Tensor, result: Tensor) -> None:
    if target._view_of is None:
        target.grad_fn, target._requires_grad = result.grad_fn, result._requires_grad
        return
    base, steps, _ = target._view_of
    rebased = CopySlices.apply(base, steps, result)
    base.grad_fn, base._requires_grad = rebased.grad_fn, rebased._requires_grad
    base._history_stamp += 1
    view = base
    for step, params in steps:
        view = step.apply(view, *params)
    target.grad_fn, target._requires_grad = view.grad_fn, view._requires_grad
    target._view_of = (base, steps, base._history_stamp)


class Overwrite(Op):
    """``new``'s values in place of ``old``'s (copy_, fill_, normal_ ...): the gradient goes to
    ``new``; ``old`` gets zeros, as in PyTorch, so it keeps its place in the graph."""

    def forward(self, old: Tensor, new: Tensor) -> Tensor:  # new: old's shape
        return new._alias()

    def backward(self, grad: Tensor) -> Grads:
        return zeros_like(grad), grad


class CopySlices(Op):
    """The base of a view after an in-place op wrote the view: the base's old values outside
    the view, the op's result inside. (The values are already in place: forward copies
    nothing.) Backward splits the gradient the same way."""

    def forward(self, base: Tensor, steps: tuple[ViewStep, ...], result: Tensor) -> Tensor:
        self.steps = steps
        return base._alias()

    def backward(self, grad: Tensor) -> Grads:
        grad_base = grad.clone()
        region = grad_base
        for step, params in self.steps:   # the view, replayed on the gradient
            region = step.apply(region, *params)
        grad_result = region.clone()
        region.fill_(0)                   # what the view held before was overwritten
        return grad_base, None, grad_result


# -- the in-place ops ---------------------------------------------------------------------------


def add_(target: Tensor, other: Operand, alpha: Number = 1) -> Tensor:
    kernels = target._meta.device.kernels
    if alpha != 1:
        if isinstance(other, Tensor) and not (_state.enabled and other._requires_grad):
            with no_grad():
                other = other * alpha  # a temporary; optimizers use fused kernels instead
        else:
            other = other * alpha
    value = _operand(target, other, "add_")
    return modify(target, "add_", (other,), lambda: kernels.add(target._array, value, target._array),
                  lambda old: old + other)


def mul_(target: Tensor, other: Operand) -> Tensor:
    kernels, value = target._meta.device.kernels, _operand(target, other, "mul_")
    return modify(target, "mul_", (other,), lambda: kernels.mul(target._array, value, target._array),
                  lambda old: old * other)


def sub_(target: Tensor, other: Operand, alpha: Number = 1) -> Tensor:
    return add_(target, other, -alpha)


def true_divide_(target: Tensor, other: Operand) -> Tensor:
    """target /= other (x /= y, and x.div_(y) without a rounding mode)."""
    if not target.dtype.is_floating_point:
        raise DTypeError(f"div_: true division cannot be written into {describe(target)}")
    kernels, value = target._meta.device.kernels, _operand(target, other, "div_")
    return modify(target, "div_", (other,), lambda: kernels.div(target._array, value, target._array),
                  lambda old: old / other)


def clamp_(target: Tensor, min: Operand | None = None, max: Operand | None = None) -> Tensor:
    low, high = min, max
    if isinstance(low, Tensor) or isinstance(high, Tensor):  # (the kernel takes numbers)
        return apply_(target, "clamp_", lambda old: clamp(old, low, high), (low, high))
    kernels = target._meta.device.kernels
    return modify(target, "clamp_", (low, high), lambda: kernels.clamp(target._array, low, high, target._array),
                  lambda old: clamp(old, low, high))


def relu_(target: Tensor) -> Tensor:
    kernels = target._meta.device.kernels
    return modify(target, "relu_", (), lambda: kernels.relu(target._array, target._array),
                  lambda old: Relu.apply(old))


def clamp_min_(target: Tensor, min: Operand) -> Tensor:
    return clamp_(target, min, None)


def clamp_max_(target: Tensor, max: Operand) -> Tensor:
    return clamp_(target, None, max)


def copy_(target: Tensor, src: Tensor) -> Tensor:
    """Copy values (broadcast, converted to the target's dtype) from src, which may live on
    another device; the gradient goes to src."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a tensor, got {type(src).__name__}")
    if broadcast_shape_of("copy_", target, src) != target.shape:
        raise ShapeError(f"copy_: {describe(src)} does not broadcast to the target {describe(target)}")
    device = target._meta.device

    def write() -> None:
        source = transfer_array(src, device) if src._meta.device is not device else src._array
        device.kernels.copy(source, target._array)

    def compute(old: Tensor) -> Tensor:
        return Overwrite.apply(old, src.to(device).to(old.dtype).expand(old.shape))

    return modify(target, "copy_", (src,), write, compute)


def zero_(target: Tensor) -> Tensor:
    return fill_(target, 0)


def fill_(target: Tensor, value: Number | Tensor) -> Tensor:
    value = fill_value("fill_", value, target.dtype)
    kernels = target._meta.device.kernels
    return modify(target, "fill_", (), lambda: kernels.fill(target._array, value),
                  lambda old: Overwrite.apply(old, full_like(old, value)))


def masked_fill_(target: Tensor, mask: Tensor, value: Number | Tensor) -> Tensor:
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        raise DTypeError("masked_fill_: mask must be a bool tensor")
    if broadcast_shape_of("masked_fill_", target, mask) != target.shape:
        raise ShapeError(f"masked_fill_: mask {list(mask.shape)} must broadcast to {describe(target)}")
    value = fill_value("masked_fill_", value, target.dtype)
    kernels = target._meta.device.kernels
    return modify(target, "masked_fill_", (mask,),
                  lambda: kernels.where(mask._array, value, target._array, target._array),
                  lambda old: MaskedFill.apply(old, mask, value))


def where_(target: Tensor, condition: Tensor, other: Operand) -> Tensor:
    """target = where(condition, target, other), in place (for setitem with a bool mask)."""
    kernels = target._meta.device.kernels
    value = other._array if isinstance(other, Tensor) else other
    return modify(target, "where_", (other,),
                  lambda: kernels.where(condition._array, target._array, value, target._array),
                  lambda old: Where.apply(condition, old, other))


def normal_(target: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    if std < 0:
        raise ValueRangeError(f"normal_: std must be non-negative, got {std}")
    rng = generator or default_generator()
    return modify(target, "normal_", (), lambda: rng.fill_normal(target, mean, std),
                  lambda old: _random_like(old, lambda t: rng.fill_normal(t, mean, std)))


def uniform_(target: Tensor, low: float = 0.0, high: float = 1.0, generator: Generator | None = None) -> Tensor:
    rng = generator or default_generator()
    return modify(target, "uniform_", (), lambda: rng.fill_uniform(target, low, high),
                  lambda old: _random_like(old, lambda t: rng.fill_uniform(t, low, high)))


def _random_like(old: Tensor, fill: Callable[[Tensor], None]) -> Tensor:
    """New random values of ``old``'s shape: the old values (and their gradient) are gone."""
    fresh = Tensor._empty(old._meta.shape, old._meta.dtype, old._meta.device)
    fill(fresh)
    return Overwrite.apply(old, fresh)


# -- in place by way of an out-of-place op (the math functions' x.name_()) ----------------------


def apply_(target: Tensor, op: str, compute: Callable[[Tensor], Tensor], operands: tuple[object, ...] = ()) -> Tensor:
    """``target = compute(target)`` in place, for an op without a kernel of its own that
    writes into its input (floor_, log1p_, atan2_, lerp_ ...): the result is computed out of
    place and copied in, so it must keep the target's shape and fit its dtype (an integer
    target refuses a float result, as in PyTorch). ``operands``: the op's other tensors."""
    def checked(old: Tensor) -> Tensor:
        result = compute(old)
        if result._meta.shape != target._meta.shape:
            raise ShapeError(f"{op}: the result {describe(result)} does not have the shape of the target "
                             f"{describe(target)}; the operands must broadcast to the target's shape")
        if result._meta.dtype.category > target._meta.dtype.category:
            raise DTypeError(f"{op}: a result of dtype {result.dtype.name} cannot be written into "
                             f"{describe(target)}")
        return result

    def write() -> None:
        with no_grad():
            result = checked(target)
        target._meta.device.kernels.copy(result._array, target._array)

    return modify(target, op, operands, write, checked)


def in_place(function: Callable[Concatenate[Tensor, P], Tensor],
             name: str | None = None) -> Callable[Concatenate[Tensor, P], Tensor]:
    """The in-place twin of an op's functional form, as a Tensor method: ``x.log1p_()`` is
    ``x = log1p(x)`` written into x (``apply_``); the tensors among the other arguments are
    the op's operands."""
    op_name = name or function.__name__ + "_"

    def method(self: Tensor, *args: P.args, **kwargs: P.kwargs) -> Tensor:
        operands = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Tensor))
        return apply_(self, op_name, lambda old: function(old, *args, **kwargs), operands)

    method.__name__ = method.__qualname__ = op_name
    method.__doc__ = f"``{function.__name__}``, in place."
    method.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]  # (for help())
    return method
