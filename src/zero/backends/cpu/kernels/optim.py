"""Optimizer updates, one fused pass per parameter (ranges of it on the CPU pool's threads).

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
        eps_outside = 0 (zero.optim.adamw works both out).
    sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)
        momentum_buffer may be None when momentum == 0
"""
from __future__ import annotations

import numpy as np

from ..threads import parallel_flat
from ._jit import njit, prange

__all__ = ["adamw_step", "adamw_step_many", "sgd_step"]


# One core's time per float32 parameter of each step (1 M parameters,
# ``benchmarks/split_costs.py --sections costs``): how many parameters are worth splitting
# over the pool's threads (threads.SPLIT_NS).
ADAMW_NS, SGD_NS = 0.62, 0.38   # AdamW in float64 arithmetic took 0.91


def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside, weight_decay,
               step_size) -> None:
    """AdamW, bias correction folded into step_size = lr * √(1 - β2^t) / (1 - β1^t); see above.
    The loop computes in the parameters' precision, as PyTorch does: the hyper-parameters
    and their complements are rounded to it once here. Float32 arithmetic vectorises twice
    as wide, and its square root and division cost a third of float64's: one thread, warm,
    413,312 float32 parameters (the 2 x 4 x 128 GPT's) 123-126 against 362-365 us, 1 M
    parameters 0.62 against 0.91 ns each. Inside that GPT's training step, where the arrays
    come from memory, the 28 calls took 318-520 us a step against 426-555 (six runs each)."""
    scalar = param.dtype.type
    parallel_flat(_adamw_loop, param, grad, exp_avg, exp_avg_sq, scalar(beta1), scalar(1.0 - beta1),
                  scalar(beta2), scalar(1.0 - beta2), scalar(eps_inside), scalar(eps_outside),
                  scalar(lr * weight_decay), scalar(step_size), ns_per_element=ADAMW_NS)


def adamw_step_many(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps_inside, eps_outside,
                    weight_decay, step_size) -> None:
    """``adamw_step`` on each (param, grad, exp_avg, exp_avg_sq) of the four lists. On the
    CPU a call costs little next to a parameter's loop, so this is a loop of them (the GPU's
    is one launch)."""
    for arrays in zip(params, grads, exp_avgs, exp_avg_sqs):
        adamw_step(*arrays, lr, beta1, beta2, eps_inside, eps_outside, weight_decay, step_size)


def sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step) -> None:
    """PyTorch's SGD: g += wd p; buf = g (first step) or μ buf + (1-τ) g;
    d = g + μ buf (nesterov) or buf; p -= lr d."""
    if momentum_buffer is None:
        momentum_buffer = np.empty(0, dtype=param.dtype)
    parallel_flat(_sgd_loop, param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov,
                  first_step, ns_per_element=SGD_NS)


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
