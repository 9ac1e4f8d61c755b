"""Gradient utilities: global-norm clipping (the book's ``ClipGradNorm``) and zeroing."""
from __future__ import annotations

import math

from ...errors import AutogradError, DeviceError
from ...grad_mode import no_grad
from ...ops.joining import stack
from ...dtypes import float32
from ...tensors.creation import empty, tensor
from ...tensors.tensor import Tensor


def zero_grads(parameters, set_to_none: bool = True) -> None:
    """Clear the ``.grad`` of each tensor (backward accumulates): drop it (``set_to_none``,
    the default, as PyTorch's) or fill it with zeros in place."""
    for p in parameters:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            with no_grad():
                p.grad.zero_()


def _norm_type(norm_type, name: str) -> float:
    """``norm_type`` as a float ('inf' too, as PyTorch's float() takes it); a ValueError or
    TypeError, as PyTorch's, for anything else."""
    if isinstance(norm_type, str):
        try:
            return float(norm_type)
        except ValueError:
            raise ValueError(f"{name}: norm_type must be a number or 'inf', got {norm_type!r}") from None
    if not isinstance(norm_type, (int, float)) and not hasattr(norm_type, "__float__"):
        raise TypeError(f"{name}: norm_type must be a number, got {type(norm_type).__name__}")
    return float(norm_type)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, eps: float = 1e-6) -> Tensor:
    """Scale every gradient by max_norm / (‖g‖ + eps) when the norm ‖g‖ of all gradients
    taken together exceeds ``max_norm``; one factor for all keeps the update's direction.

    Returns the total norm before clipping as a 0-d tensor on the gradients' device (read
    it with ``.item()`` only when you log it: on a GPU that waits for the device).
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    norm_type = _norm_type(norm_type, "clip_grad_norm_")
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return tensor(0.0)
    device = grads[0].device
    if any(g.device is not device for g in grads):
        raise DeviceError("clip_grad_norm_: all gradients must be on one device")
    kernels = device.kernels
    arrays = [g._array for g in grads]
    with no_grad():
        if math.isinf(norm_type):
            total = _stack_reduce([g.abs().amax().float() for g in grads], "max")
        elif norm_type == 2.0:  # the common case: one BLAS dot per gradient, no temporaries
            squares = empty((len(grads),), dtype=float32, device=device)
            kernels.squared_norms(arrays, squares._array)
            total = empty((), dtype=float32, device=device)   # squares.sum().sqrt(), as two kernel calls
            kernels.sum(squares._array, (0,), total._array)
            kernels.sqrt(total._array, total._array)
        else:
            powered = [(g.abs() ** norm_type).sum().float() for g in grads]
            total = _stack_reduce(powered, "sum") ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise AutogradError(f"clip_grad_norm_: the total gradient norm is {total.item()} (a gradient "
                                "holds inf or nan); pass error_if_nonfinite=False to scale it anyway")
        # factor = min(1, max_norm / (norm + eps)), computed on the device: no host round trip.
        # Kernel calls rather than ops on these 0-d tensors: right after a pass over every
        # gradient, each op's Python runs with cold caches (RESULTS.md, "Figures that were in
        # docstrings").
        factor = empty((), dtype=total.dtype, device=device)
        kernels.clip_factor(total._array, max_norm, eps, factor._array)
        kernels.scale_in_place(arrays, factor._array)
        for g in grads:
            g._bump_version()
    return total


def _stack_reduce(values: list, how: str) -> Tensor:
    stacked = stack(values)
    return stacked.sum() if how == "sum" else stacked.amax()


from . import rnn  # noqa: E402  (zero.nn.utils.rnn: packed sequences for the recurrent layers)
from .vectors import clip_grad_value_, parameters_to_vector, vector_to_parameters  # noqa: E402
