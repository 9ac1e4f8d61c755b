"""Gradient utilities: global-norm clipping (the book's ``ClipGradNorm``)."""
from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..errors import DeviceError
from ..tensor.tensor import Tensor


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, eps: float = 1e-6) -> Tensor:
    """Scale every gradient by max_norm / (‖g‖ + eps) when the norm ‖g‖ of all gradients
    taken together exceeds ``max_norm``; one factor for all keeps the update's direction.

    Returns the total norm before clipping as a 0-d tensor on the gradients' device (read
    it with ``.item()`` only when you log it: on a GPU that waits for the device).
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        from ..tensor.creation import tensor  # noqa: PLC0415

        return tensor(0.0)
    device = grads[0].device
    if any(g.device is not device for g in grads):
        raise DeviceError("clip_grad_norm_: all gradients must be on one device")
    with no_grad():
        if math.isinf(norm_type):
            total = _stack_reduce([g.abs().amax().float() for g in grads], "max")
        else:
            powered = [(g.abs() ** norm_type).sum().float() if norm_type != 2.0 else (g * g).sum().float()
                       for g in grads]
            total = _stack_reduce(powered, "sum") ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"clip_grad_norm_: the total gradient norm is {total.item()}")
        # factor = min(1, max_norm / (norm + eps)), computed on the device: no host round trip.
        factor = (max_norm / (total + eps)).clamp(max=1.0)
        for g in grads:
            g.mul_(factor.to(g.dtype))
    return total


def _stack_reduce(values: list, how: str) -> Tensor:
    from ..ops.joining import stack  # noqa: PLC0415

    stacked = stack(values)
    return stacked.sum() if how == "sum" else stacked.amax()
