"""Optimizer updates: one pass over a parameter reads p, g and the state once and writes
them once. The arithmetic is float64 and each result is rounded once, as the CPU
loops do, so a step on the GPU matches a step on the CPU to the last bit or so."""
import triton
import triton.language as tl


@triton.jit
def adamw_kernel(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, n, lr: tl.float64, beta1: tl.float64,
                 beta2: tl.float64, eps_inside: tl.float64, eps_outside: tl.float64, weight_decay: tl.float64,
                 step_size: tl.float64, BLOCK: tl.constexpr):
    """m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
    p -= step_size m / (√(v + eps_inside) + eps_outside) + lr wd p."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    g = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    m = beta1 * tl.load(exp_avg_ptr + offsets, mask=mask, other=0.0) + (1.0 - beta1) * g
    v = beta2 * tl.load(exp_avg_sq_ptr + offsets, mask=mask, other=0.0) + (1.0 - beta2) * g * g
    tl.store(exp_avg_ptr + offsets, m, mask=mask)
    tl.store(exp_avg_sq_ptr + offsets, v, mask=mask)
    p = tl.load(param_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    p = p - step_size * m / (tl.sqrt(v + eps_inside) + eps_outside) - lr * weight_decay * p
    tl.store(param_ptr + offsets, p, mask=mask)


@triton.jit
def sgd_kernel(param_ptr, grad_ptr, buffer_ptr, n, lr: tl.float64, momentum: tl.float64,
               dampening: tl.float64, weight_decay: tl.float64, HAS_MOMENTUM: tl.constexpr,
               FIRST_STEP: tl.constexpr, NESTEROV: tl.constexpr, BLOCK: tl.constexpr):
    """PyTorch's SGD: g += wd p; buf = g (first step) or μ buf + (1-τ) g;
    d = g + μ buf (nesterov) or buf; p -= lr d."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(param_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    g = tl.load(grad_ptr + offsets, mask=mask, other=0.0) + weight_decay * p
    if HAS_MOMENTUM:
        if FIRST_STEP:
            b = g
        else:
            b = momentum * tl.load(buffer_ptr + offsets, mask=mask, other=0.0) + (1.0 - dampening) * g
        tl.store(buffer_ptr + offsets, b, mask=mask)
        if NESTEROV:
            g = g + momentum * b
        else:
            g = b
    tl.store(param_ptr + offsets, p - lr * g, mask=mask)
