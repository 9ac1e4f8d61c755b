"""Optimizer updates on the GPU: one Triton kernel per parameter and step.

The contract is the CPU one (``zero.backends.cpu.kernels.optim``):

    adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside,
               weight_decay, step_size)
    sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)

with 1-D contiguous arrays of one length, updated in place.
"""
from __future__ import annotations

from ..triton_kernels.optim import adamw_kernel, sgd_kernel
from ._arrays import output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch

__all__ = ["adamw_step", "sgd_step"]


def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside, weight_decay,
               step_size) -> None:
    """AdamW with bias correction folded into ``step_size`` (see the CPU kernel)."""
    n = param.size
    launch(adamw_kernel, elementwise_grid(n), output(param), grad, output(exp_avg), output(exp_avg_sq), n,
           float(lr), float(beta1), float(beta2), float(eps_inside), float(eps_outside), float(weight_decay),
           float(step_size), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step) -> None:
    n = param.size
    has_momentum = momentum != 0.0
    launch(sgd_kernel, elementwise_grid(n), output(param), grad,
           output(momentum_buffer) if has_momentum else param, n, float(lr), float(momentum), float(dampening),
           float(weight_decay), HAS_MOMENTUM=has_momentum, FIRST_STEP=bool(first_step), NESTEROV=bool(nesterov),
           BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
