"""Optimizer updates, one fused pass per parameter (the table runs a large one on both cores).

Written as chains of tensor ops, an AdamW step would make several temporaries
the size of the parameter and read memory five or six times; one Numba loop
reads p, g, m, v once and writes p, m, v once.

    adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside,
               weight_decay, step_size)
    adamw_step_many(params, grads, exp_avgs, exp_avg_sqs, lr, ...)   the same over lists of arrays
        all arrays 1-D, contiguous, same length; updates param, exp_avg, exp_avg_sq in place:
        m = β1 m + (1-β1) g,  v = β2 v + (1-β2) g²,
        p -= step_size * m / (√(v + eps_inside) + eps_outside) + lr * weight_decay * p.
        PyTorch's ε (outside the root of the bias-corrected v̂) is eps_inside = 0,
        eps_outside = ε √(1 - β2^t); the book's (inside the root) is eps_inside = ε,
        eps_outside = 0 (``kernel_contract.adamw_scalars`` works both out).
    adamw_step_many_capturable(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps,
                               eps_inside_sqrt, weight_decay)
        the same with each parameter's step count in a 0-d array, steps[i] += 1 first, and
        the scalars above worked out from it here, on the device (lr: a number or a 0-d array):
        what ``capturable=True`` asks: a replayed step (a CUDA graph's) counts on, at the lr of the moment.
    sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)
        momentum_buffer may be None when momentum == 0

The loops compute in the parameters' precision, as PyTorch does: float32 arithmetic
vectorises twice as wide, and its square root and division cost a third of float64's.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...kernel_contract import Array, adamw_scalars
from ._jit import njit, prange

__all__ = ["adamw_step", "adamw_step_many", "adamw_step_many_capturable", "sgd_step"]


def adamw_step(param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, lr: float, beta1: float,
               beta2: float, eps_inside: float, eps_outside: float, weight_decay: float, step_size: float) -> None:
    """AdamW, bias correction folded into step_size = lr * √(1 - β2^t) / (1 - β1^t); see above.
    The hyper-parameters and their complements are rounded to the parameters' precision
    once here."""
    scalar = param.dtype.type
    _adamw_loop(param, grad, exp_avg, exp_avg_sq, scalar(beta1), scalar(1.0 - beta1), scalar(beta2),
                scalar(1.0 - beta2), scalar(eps_inside), scalar(eps_outside), scalar(lr * weight_decay),
                scalar(step_size))


def adamw_step_many(step: Callable[..., None], params: Sequence[Array], grads: Sequence[Array],
                    exp_avgs: Sequence[Array], exp_avg_sqs: Sequence[Array], lr: float, beta1: float, beta2: float,
                    eps_inside: float, eps_outside: float, weight_decay: float, step_size: float) -> None:
    """``step`` (the table's ``adamw_step``) on each (param, grad, exp_avg, exp_avg_sq) of the
    four lists. On the CPU a call costs little next to a parameter's loop, so this is a loop
    of them (the GPU's is one launch)."""
    for arrays in zip(params, grads, exp_avgs, exp_avg_sqs):
        step(*arrays, lr, beta1, beta2, eps_inside, eps_outside, weight_decay, step_size)


def adamw_step_many_capturable(step: Callable[..., None], params: Sequence[Array], grads: Sequence[Array],
                               exp_avgs: Sequence[Array], exp_avg_sqs: Sequence[Array], steps: Sequence[Array],
                               lr: float | Array, beta1: float, beta2: float, eps: float, eps_inside_sqrt: bool,
                               weight_decay: float) -> None:
    """``step`` (the table's ``adamw_step``) on each parameter with its own count: steps[i]
    (a 0-d array) += 1, then the scalars from it and from lr as they are when this runs --
    the numbers ``adamw_step_many`` gets from the host, so the result is the same to the bit."""
    rate = float(lr)   # a number, or a 0-d array on this device: read here, not by the host beforehand
    for arrays, counter in zip(zip(params, grads, exp_avgs, exp_avg_sqs), steps):
        counter += 1   # in place, in the counter's dtype (a 0-d ndarray's += keeps the array)
        eps_inside, eps_outside, step_size = adamw_scalars(rate, float(counter), beta1, beta2, eps,
                                                           eps_inside_sqrt)
        step(*arrays, rate, beta1, beta2, eps_inside, eps_outside, weight_decay, step_size)


def sgd_step(param: Array, grad: Array, momentum_buffer: Array | None, lr: float, momentum: float, dampening: float,
             weight_decay: float, nesterov: bool, first_step: bool) -> None:
    """PyTorch's SGD: g += wd p; buf = g (first step) or μ buf + (1-τ) g;
    d = g + μ buf (nesterov) or buf; p -= lr d."""
    if momentum_buffer is None:
        momentum_buffer = np.empty(0, dtype=param.dtype)
    _sgd_loop(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)


@njit
def _adamw_loop(param, grad, exp_avg, exp_avg_sq, beta1, rest1, beta2, rest2, eps_inside, eps_outside, decay,
                step_size):
    """rest1 = 1 - β1, rest2 = 1 - β2, decay = lr · weight_decay, all in the arrays' dtype."""
    for i in prange(param.size):
        g = grad[i]
        m = beta1 * exp_avg[i] + rest1 * g
        v = beta2 * exp_avg_sq[i] + rest2 * g * g
        exp_avg[i] = m
        exp_avg_sq[i] = v
        p = param[i]
        # np.divide: Python's / would check for a zero divisor, a branch that stops vectorisation
        param[i] = p - step_size * np.divide(m, np.sqrt(v + eps_inside) + eps_outside) - decay * p


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
