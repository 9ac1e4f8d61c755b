"""Optimizer updates, one fused pass per parameter (ranges of it on the CPU pool's threads).

Written as chains of tensor ops, an AdamW step would make several temporaries
the size of the parameter and read memory five or six times; one Numba loop
reads p, g, m, v once and writes p, m, v once.

    adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside,
               weight_decay, step_size)
        all arrays 1-D, contiguous, same length; updates param, exp_avg, exp_avg_sq in place:
        m = β1 m + (1-β1) g,  v = β2 v + (1-β2) g²,
        p -= step_size * m / (√(v + eps_inside) + eps_outside) + lr * weight_decay * p.
        PyTorch's ε (outside the root of the bias-corrected v̂) is eps_inside = 0,
        eps_outside = ε √(1 - β2^t); the book's (inside the root) is eps_inside = ε,
        eps_outside = 0 (zero.optim.adamw works both out).
    sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)
        momentum_buffer may be None when momentum == 0
"""
from __future__ import annotations

import math

import numpy as np

from ..threads import parallel_flat
from ._jit import njit, prange

__all__ = ["adamw_step", "sgd_step"]


# One core's time per float32 parameter of each step (1 M parameters,
# ``benchmarks/split_costs.py --sections costs``): how many parameters are worth splitting
# over the pool's threads (threads.SPLIT_NS).
ADAMW_NS, SGD_NS = 0.92, 0.38


def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside, weight_decay,
               step_size) -> None:
    """AdamW, bias correction folded into step_size = lr * √(1 - β2^t) / (1 - β1^t); see above."""
    parallel_flat(_adamw_loop, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside,
                  weight_decay, step_size, ns_per_element=ADAMW_NS)


def sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step) -> None:
    """PyTorch's SGD: g += wd p; buf = g (first step) or μ buf + (1-τ) g;
    d = g + μ buf (nesterov) or buf; p -= lr d."""
    if momentum_buffer is None:
        momentum_buffer = np.empty(0, dtype=param.dtype)
    parallel_flat(_sgd_loop, param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov,
                  first_step, ns_per_element=SGD_NS)


@njit
def _adamw_loop(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside, weight_decay,
                step_size):
    decay = lr * weight_decay
    for i in prange(param.size):
        g = grad[i]
        m = beta1 * exp_avg[i] + (1.0 - beta1) * g
        v = beta2 * exp_avg_sq[i] + (1.0 - beta2) * g * g
        exp_avg[i] = m
        exp_avg_sq[i] = v
        p = param[i]
        # np.divide: Python's / would check for a zero divisor, a branch that stops vectorisation
        param[i] = p - step_size * np.divide(m, math.sqrt(v + eps_inside) + eps_outside) - decay * p


@njit
def _sgd_loop(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, first_step):
    for i in prange(param.size):
        g = grad[i] + weight_decay * param[i]
        if momentum != 0.0:
            if first_step:
                b = g
            else:
                b = momentum * buf[i] + (1.0 - dampening) * g
            buf[i] = b
            g = g + momentum * b if nesterov else b
        param[i] = param[i] - lr * g
